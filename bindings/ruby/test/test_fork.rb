# frozen_string_literal: true

require_relative "test_helper"
require "timeout"

# Heapscope.snapshot(fork: true) / Heapscope.dump(path, fork: true).
class TestFork < Minitest::Test
  def setup
    skip "no Process.fork on #{RUBY_PLATFORM}" unless Process.respond_to?(:fork)
  end

  def address_of(obj)
    Integer(JSON.parse(ObjectSpace.dump(obj))["address"], 16)
  end

  # Live children of this process, zombies included ("Z"), from /proc.
  def children
    Dir.glob("/proc/[0-9]*/stat").filter_map do |f|
      stat = File.read(f)
    rescue SystemCallError
      nil
    else
      pid, rest = stat.split(" (", 2)
      fields = rest.to_s.split(") ").last.to_s.split
      [Integer(pid), fields[0]] if fields[1].to_i == Process.pid
    end
  end

  def assert_no_children
    skip "no /proc: children not checked" unless File.directory?("/proc/self")
    assert_equal [], children, "child processes left behind"
  end

  # On one quiescent heap, an in-process snapshot and a fork snapshot hold
  # the same objects, counted by type and class, once the objects that
  # heapscope's own code (and objspace.rb, the dumper) allocated for the
  # snapshots are set aside: pipes, the loader, the Heap results, call
  # caches of the snapshot code, ThreadRoots and the wrappers
  # ObjectSpace.reachable_objects_from makes for internal objects.
  # Allocation tracing tells them apart by file.
  EQUAL_SCRIPT = <<~'RUBY'
    require "heapscope"
    ObjectSpace.trace_object_allocations_start
    class Widget
      def initialize(i)
        @name = "w#{i}"
        @tags = [i, "t#{i}"]
        @h = { i => "v#{i}" }
      end
    end
    $widgets = Array.new(5_000) { |i| Widget.new(i) }
    sleeper = Thread.new { local = Array.new(3000) { |i| "held by a thread #{i}" }; sleep; local }
    Thread.pass until sleeper.status == "sleep"
    own = ["#{File.dirname(Heapscope.method(:snapshot).source_location[0])}/", "/objspace.rb"]
    pair = nil
    # The third pair is compared: by then every call site of the snapshot
    # code has its caches, in both modes.
    3.times { pair = [Heapscope.snapshot, Heapscope.snapshot(fork: true)] }
    counts = pair.map do |heap|
      rest = Hash.new(0)
      mine = Hash.new(0)
      held = nil
      heap.object_count.times do |id|
        _a, type, klass, _d, _m, _s, _g, file, line = heap._info(id)
        (file && own.any? { |o| file.include?(o) } ? mine : rest)["#{type} #{klass}"] += 1
        held ||= heap._address(id) if file == __FILE__ && line == 11 && klass == "String"
      end
      path = heap.root_paths(held).first
      { rest: rest, mine: mine, objects: heap.object_count,
        sites: heap.tally(by: "file:line:class", top: nil).to_h { |r| [r.key, r.count] },
        held_path: [path.root, *path.path.map(&:label)] }
    end
    print Marshal.dump(counts).unpack1("H*")
  RUBY

  def test_fork_snapshot_equals_in_process
    script = Fixtures.write("fork_equal.rb", EQUAL_SCRIPT)
    out, st = Fixtures.ruby(script)
    assert st.success?, out
    a, b = Marshal.load([out].pack("H*")) # rubocop:disable Security/MarshalLoad -- our own child
    assert_equal a[:rest], b[:rest], "counts by type and class differ outside heapscope's own objects"
    assert_equal 5_000, a[:rest]["OBJECT Widget"]
    assert_equal 5_000, a[:sites]["#{script}:10:Widget"]
    %w[5:String 6:Array 7:Hash].each { |k| assert_equal 5_000, b[:sites]["#{script}:#{k}"], k }
    key = "#{script}:11:String"
    assert_equal 3000, a[:sites][key], "in-process: the strings only a sleeping thread holds"
    assert_equal 3000, b[:sites][key], "fork: the strings only a sleeping thread holds"
    # In the fork snapshot the thread's references hang from a ThreadRoots.
    assert_equal 1, b[:mine]["ARRAY Heapscope::ThreadRoots"]
    assert_includes b[:held_path], "Heapscope::ThreadRoots", b[:held_path].inspect
    refute_nil a[:held_path][0], "in-process: unreachable?"
  end

  def test_fork_snapshot_sees_our_objects
    marker = +"fork-marker-#{rand(1 << 30)}"
    list = [marker, marker.dup]
    heap = Heapscope.snapshot(fork: true)
    assert_operator heap.object_count, :>, 1000
    assert_equal "String", heap.object(address_of(marker)).class_name
    assert_includes heap.object(address_of(list)).references, address_of(marker)
    assert_equal 0, heap.stats[:skipped_lines]
    stats = Heapscope.fork_stats
    assert_kind_of Integer, stats[:pid]
    %i[gc_seconds held_seconds seconds child_dump_seconds].each { |k| assert_operator stats[k], :>=, 0, k }
    assert_operator stats[:held_seconds], :<=, stats[:seconds]
    assert_operator stats[:held_seconds], :>=, stats[:gc_seconds]
    assert_operator stats[:child_private_bytes], :>, 0 if File.exist?("/proc/self/smaps_rollup")
    assert_no_children
  end

  def test_fork_dump
    %w[fork.json fork.json.gz].each do |name|
      path = Heapscope.dump(Fixtures.path(name), fork: true)
      assert_equal name.end_with?(".gz"), File.binread(path, 2) == "\x1f\x8b".b
      heap = Heapscope::Heap.load(path)
      assert_operator heap.object_count, :>, 1000
      assert_equal 0, heap.stats[:skipped_lines]
      refute File.exist?("#{path}.#{Process.pid}.tmp")
    end
    heap = Heapscope.snapshot(path: Fixtures.path("fork2.json"), fork: true)
    assert_operator heap.object_count, :>, 1000
    assert_no_children
  end

  # The child is killed mid-dump: a ForkError that says so, nothing loaded
  # from the half dump, no zombie, no loader left waiting.
  def test_child_killed
    big = Array.new(400_000) { |i| "to make the dump take a while #{i}" }
    killed = nil
    killer = Thread.new do
      deadline = Time.now + 30
      until killed || Time.now > deadline
        pid = children.find { |_p, state| state != "Z" }&.first
        if pid
          Process.kill(:KILL, pid)
          killed = pid
        end
        sleep 0.0005
      end
    end
    e = Timeout.timeout(60) { assert_raises(Heapscope::ForkError) { Heapscope.snapshot(fork: true, gc: false) } }
    killer.join
    assert_equal killed, e.pid
    assert e.child_status.signaled?
    assert_match(/child process #{killed} was killed by SIGKILL/, e.message)
    assert_no_children
    assert_operator Heapscope.snapshot(fork: true).object_count, :>, big.size # still works
  end

  # Timeout (Thread#raise) while the parent waits: the child is killed and
  # reaped.
  def test_interrupt_kills_child
    big = Array.new(400_000) { |i| "to make the dump take a while #{i}" }
    assert_raises(Timeout::Error) { Timeout.timeout(0.05) { Heapscope.snapshot(fork: true, gc: false) } }
    assert_no_children
    # Interrupts at other moments: before, during and after the fork.
    20.times do |i|
      Timeout.timeout(0.0015 * i) { Heapscope.snapshot(fork: true, gc: false) }
    rescue Timeout::Error
      nil
    end
    assert_no_children
    assert_operator Heapscope.snapshot(fork: true).object_count, :>, big.size
  end

  # An exception in the child comes back as a ForkError with its message.
  def test_child_error
    path = Fixtures.path("no-such-dir/heap.json")
    e = assert_raises(Heapscope::ForkError) { Heapscope.dump(path, fork: true) }
    assert_match(/\AErrno::ENOENT: No such file or directory/, e.child_error)
    assert_match(/child process #{e.pid} failed: Errno::ENOENT/, e.message)
    assert_equal 1, e.child_status.exitstatus
    assert_no_children
  end

  # Another part of the program reaps every child (a waitpid(-1) loop):
  # the snapshot goes by the child's report.
  def test_child_reaped_elsewhere
    script = Fixtures.write("reaper.rb", <<~'RUBY')
      require "heapscope"
      reaper = Thread.new do
        loop do
          Process.wait(-1)
        rescue Errno::ECHILD
          sleep 0.001
        end
      end
      3.times do |i|
        Heapscope.snapshot(fork: true)
        Heapscope.dump(File.join(ARGV[0], "reaped.#{i}.json"), fork: true)
      end
      puts Dir.children(ARGV[0]).grep(/reaped/).size
    RUBY
    out, st = Fixtures.ruby(script, Fixtures::DIR)
    assert st.success?, out
    assert_equal "3\n", out
  end

  # The loader gives up (a limit): its error, not the child's EPIPE.
  def test_load_error_wins
    assert_raises(Heapscope::LimitError) { Heapscope.snapshot(fork: true, max_objects: 100) }
    assert_no_children
  end

  def test_find_leaks_with_fork
    leaky = Struct.new(:name)
    registry = []
    line = __LINE__ + 1
    diff = Heapscope.find_leaks(fork: true) { 30.times { |i| registry << leaky.new("leak-#{i}") }; "junk" * 99 }
    sites = diff.groups(by: "file:line:class", top: nil)
    assert_equal [30, 30], sites.select { |g| g.key.start_with?("#{__FILE__}:#{line}:") }.map(&:count)
    assert_equal 60, diff.count, "unexpected leaks: #{sites.inspect}"
    assert_no_children
  end

  # The child runs none of the process's fork hooks, at_exit blocks or
  # buffered writes.  The control, a plain Kernel#fork in the same script,
  # runs them all (so the test can fail).
  HOOKS_SCRIPT = <<~'RUBY'
    require "heapscope"
    dir = ARGV[0]
    touch = ->(what) { File.write(File.join(dir, "#{what}.#{Process.pid}"), "") }
    # A Ruby 3.1+ fork hook, the way ActiveSupport 7, connection_pool and
    # sqlite3 install theirs.
    hook = Module.new do
      define_method(:_fork) do
        pid = super()
        touch.("prepended") if pid.zero?
        pid
      end
    end
    Process.singleton_class.prepend(hook) if Process.respond_to?(:_fork)
    begin # ActiveSupport 6.1's (Debian 12) hooks Process.fork and Kernel#fork
      require "active_support/fork_tracker"
      ActiveSupport::ForkTracker.after_fork { touch.("activesupport") }
    rescue LoadError
      nil
    end
    at_exit { touch.("at_exit") }
    log = File.open(File.join(dir, "log.txt"), "w")
    log.write("written once") # buffered by Ruby, not flushed yet
    # Garbage that the GC has not collected yet: collecting it flushes and
    # closes the Files; the child must not (its GC would: no GC there).
    def garbage(path) = File.open(path, "w").write("written once") && nil
    GC.disable
    20.times { |i| garbage(File.join(ARGV[0], "garbage.#{i}")) }
    Heapscope.snapshot(fork: true, gc: false)
    GC.enable
    GC.start
    Heapscope.snapshot(fork: true)
    snap = Heapscope.fork_stats[:pid]
    Heapscope.dump(File.join(dir, "heap.json"), fork: true)
    dump = Heapscope.fork_stats[:pid]
    log.close
    control = fork {}
    Process.wait(control)
    puts [snap, dump, control, defined?(ActiveSupport::ForkTracker) ? 1 : 0].join(" ")
  RUBY

  def test_no_hooks_at_exit_or_buffers_in_child
    dir = Fixtures.path("hooks")
    FileUtils.mkdir_p(dir)
    script = Fixtures.write("fork_hooks.rb", HOOKS_SCRIPT)
    out, st = Fixtures.ruby(script, dir)
    assert st.success?, out
    snap, dump, control, as = out.split.map { |x| Integer(x) }
    files = Dir.children(dir).sort
    expected = ["at_exit.#{control}", "at_exit.#{st.pid}"]
    expected << "prepended.#{control}" if Process.respond_to?(:_fork)
    expected << "activesupport.#{control}" if as == 1
    garbage = Array.new(20) { |i| "garbage.#{i}" }
    assert_equal (expected + garbage + %w[heap.json log.txt]).sort, files, "snapshot children #{snap}, #{dump}"
    (garbage + ["log.txt"]).each { |f| assert_equal "written once", File.read(File.join(dir, f)), f }
  end

  # Where Process.fork does not exist: a clear error for fork: true; the
  # in-process snapshot still works.
  def test_without_fork
    script = Fixtures.write("nofork.rb", <<~'RUBY')
      require "heapscope"
      class << Process
        undef_method :fork
        undef_method :_fork if respond_to?(:_fork)
      end
      begin
        Heapscope.snapshot(fork: true)
      rescue NotImplementedError => e
        puts e.message
      end
      puts Heapscope.snapshot.object_count > 1000
    RUBY
    out, st = Fixtures.ruby(script)
    assert st.success?, out
    assert_match(/\Aa fork snapshot needs Process.fork, which ruby #{Regexp.escape(RUBY_VERSION)} on #{Regexp.escape(RUBY_PLATFORM)} does not have; use fork: false\ntrue\n\z/, out)
  end
end
