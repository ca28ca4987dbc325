# frozen_string_literal: true

require_relative "test_helper"

# require "heapscope/auto" with HEAPSCOPE=1: SIGUSR2 dumps, exit tally.
class TestAuto < Minitest::Test
  SCRIPT = <<~'RUBY'
    $keep = Array.new(2000) { |i| "auto-#{i}" }
    dir = ENV.fetch("HEAPSCOPE_DIR")
    2.times do |k|
      Process.kill("USR2", Process.pid)
      want = File.join(dir, "heapscope.#{Process.pid}.#{k + 1}.json.gz")
      deadline = Time.now + 60
      sleep 0.02 until File.exist?(want) || Time.now > deadline
      (Thread.list - [Thread.current]).each { |t| t.join(10) } # the message follows the rename
    end
    puts "app still running"
  RUBY

  # HEAPSCOPE_FORK unset: where fork exists, the signal's dumps come from a
  # fork (the main thread is running beside the dump's thread), and say so.
  def test_signal_dump_and_exit_tally
    run_app("auto", {}, Process.respond_to?(:fork))
  end

  def test_signal_dump_in_process
    run_app("auto-nofork", { "HEAPSCOPE_FORK" => "0" }, false)
  end

  def test_signal_dump_forced_fork
    skip "no Process.fork" unless Process.respond_to?(:fork)
    run_app("auto-fork", { "HEAPSCOPE_FORK" => "1" }, true)
  end

  # A fork dump that the default rule chose fails (dump_all raises in the
  # child): that dump and the next are written in-process, and it says so.
  def test_signal_dump_fork_fails
    skip "no Process.fork" unless Process.respond_to?(:fork)
    prelude = Fixtures.write("auto_prelude.rb", <<~'RUBY')
      require "objspace"
      PARENT = Process.pid
      ObjectSpace.singleton_class.prepend(Module.new do
        def dump_all(**kw)
          raise "boom in the child" unless Process.pid == PARENT
          super
        end
      end)
    RUBY
    out = run_app("auto-fallback", {}, false, prelude: prelude)
    failed = /^heapscope: dump 1 from a fork failed \(the snapshot's child process \d+ failed: RuntimeError: boom in the child\); dumping in-process from now on$/
    assert_equal 1, out.scan(failed).size, out
  end

  def run_app(name, env, forked, prelude: nil)
    dir = Fixtures.path(name)
    FileUtils.mkdir_p(dir)
    script = Fixtures.write("#{name}_app.rb", SCRIPT)
    out, st = Fixtures.ruby(*(prelude ? ["-r#{prelude}"] : []), "-rheapscope/auto", script,
                            env: { "HEAPSCOPE" => "1", "HEAPSCOPE_DIR" => dir }.merge(env))
    assert st.success?, out
    pid = st.pid
    assert_includes out, "app still running"
    [1, 2].each do |n|
      path = File.join(dir, "heapscope.#{pid}.#{n}.json.gz")
      assert File.file?(path), "no #{path}:\n#{out}"
      how = forked ? ", from a fork, process held \\d+\\.\\d{3} s" : ""
      assert_match(/^heapscope: wrote #{Regexp.escape(path)} \(#{File.size(path)} bytes, \d+\.\d\d s#{how}\)$/, out)
      heap = Heapscope::Heap.load(path)
      assert heap.stats[:gzip]
      row = heap.tally(by: "file:line:class", top: nil).find { |r| r.key == "#{script}:1:String" }
      assert_equal 2000, row&.count, "traced strings missing from dump #{n}"
    end
    assert_equal [], Dir.children(dir).grep(/tmp/)
    assert_match(/^heapscope: exit tally of pid #{pid}: \d+ objects, \d+ distinct file:line:class sites; top 20:$/, out)
    # the table is the library's (Tally#to_s: `heapscope tally`'s)
    table = out[/top 20:\n(.*)/m, 1].lines
    assert_match(/\Aby file:line:class +count +% +memsize +%$/, table[0])
    rows = table.drop(1).grep(/\A  \S.* +[\d,]+ +\d+\.\d% +[\d.]+ [KMG]?B +\d+\.\d%$/)
    assert_equal 20, rows.size, table.join
    row = rows.find { |l| l.split[0].end_with?(":1:String") && l.split[1] == "2,000" }
    refute_nil row, table.join
    assert_equal "#{File.basename(script)}:1:String", row.split[0].split("/").last # the file name is kept
    out
  end

  # HEAPSCOPE_INTERVAL + HEAPSCOPE_PPROF=DIR + HEAPSCOPE_KEEP_DUMPS=0: a
  # pprof profile every interval into DIR, the dumps deleted; the series is
  # read by Go's pprof when `go` is installed (docs/FLEET.md).
  PPROF_SCRIPT = <<~'RUBY'
    $keep = Array.new(1500) { |i| "pprof-#{i}" }
    dir = ENV.fetch("HEAPSCOPE_PPROF")
    deadline = Time.now + 120
    sleep 0.05 until Dir.glob(File.join(dir, "*.pb.gz")).size >= 3 || Time.now > deadline
    $keep2 = Array.new(700) { |i| "more-#{i}" } # line 5: grows after the first profiles
    n = Dir.glob(File.join(dir, "*.pb.gz")).size
    sleep 0.05 until Dir.glob(File.join(dir, "*.pb.gz")).size >= n + 2 || Time.now > deadline
    puts "app done"
  RUBY

  def test_scheduled_pprof_series
    dump_dir = Fixtures.path("auto-sched-dumps")
    pprof_dir = Fixtures.path("auto-sched-pprof")
    FileUtils.mkdir_p([dump_dir, pprof_dir])
    script = Fixtures.write("auto_sched_app.rb", PPROF_SCRIPT)
    out, st = Fixtures.ruby("-rheapscope/auto", script,
                            env: { "HEAPSCOPE" => "1", "HEAPSCOPE_DIR" => dump_dir, "HEAPSCOPE_SIGNAL" => "none",
                                   "HEAPSCOPE_EXIT" => "0", "HEAPSCOPE_FORK" => "0", "HEAPSCOPE_INTERVAL" => "0.3",
                                   "HEAPSCOPE_PPROF" => pprof_dir, "HEAPSCOPE_KEEP_DUMPS" => "0" })
    assert st.success?, out
    assert_includes out, "app done"
    files = Dir.glob(File.join(pprof_dir, "heapscope.#{st.pid}.*.pb.gz")).sort_by { |f| f[/\.(\d+)\.pb\.gz\z/, 1].to_i }
    assert_operator files.size, :>=, 5, out
    files.each { |f| assert_match(/^heapscope: wrote #{Regexp.escape(f)} \(#{File.size(f)} bytes, pprof\)$/, out) }
    assert_empty Dir.glob(File.join(dump_dir, "*.json.gz")), "dumps not deleted"
    assert_empty Dir.glob(File.join(pprof_dir, "*.tmp"))
    # each a gzipped profile.proto whose string table has the sample types
    files.each { |f| assert_includes Zlib.gunzip(File.binread(f)), "inuse_space" }
    go = ENV["PATH"].split(File::PATH_SEPARATOR).map { |d| File.join(d, "go") }.find { |g| File.executable?(g) }
    skip "go (golang-go) not installed: the series is not read by go tool pprof" unless go
    Dir.mktmpdir("hs-go") do |tmp|
      env = { "HOME" => tmp, "GOCACHE" => File.join(tmp, "cache"), "GOTOOLCHAIN" => "local", "GOPROXY" => "off" }
      pprof = lambda do |*args|
        o = IO.popen(env, [go, "tool", "pprof", *args], err: %i[child out], &:read)
        assert $?.success?, o
        o
      end
      times = files.map { |f| pprof.call("-raw", f)[/^Time: (.*)$/, 1] }
      assert_equal times.size, times.compact.uniq.size, times.inspect
      # the strings of line 1, all alive in every profile
      first = pprof.call("-lines", "-top", "-nodefraction=0", "-sample_index=inuse_objects", "-nodecount=10000", files[0])
      n1 = first[/^\s+(\d+) .* #{Regexp.escape(script)}:1$/, 1]
      assert_operator n1.to_i, :>=, 1500, first # the strings and their Array
      # -diff_base first last: the 700 strings of line 5 grew
      diff = pprof.call("-lines", "-top", "-nodefraction=0", "-sample_index=inuse_objects", "-nodecount=10000",
                        "-diff_base", files[0], files[-1])
      n6 = diff[/^\s+(\d+) .* #{Regexp.escape(script)}:5$/, 1]
      assert_operator n6.to_i, :>=, 700, diff
      assert_operator n6.to_i, :<, 720, diff
    end
  end

  def test_off_without_env
    script = Fixtures.write("auto_off.rb", "print Heapscope::Auto.dir.inspect\n")
    out, st = Fixtures.ruby("-rheapscope/auto", script, env: { "HEAPSCOPE" => nil })
    assert st.success?, out
    assert_equal "nil", out
  end
end
