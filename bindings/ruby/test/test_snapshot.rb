# frozen_string_literal: true

require_relative "test_helper"

class TestSnapshot < Minitest::Test
  def address_of(obj)
    Integer(JSON.parse(ObjectSpace.dump(obj))["address"], 16)
  end

  def test_snapshot_sees_our_objects
    marker = +"heapscope-marker-#{rand(1 << 30)}"
    list = [marker, marker.dup]
    heap = Heapscope.snapshot
    assert_kind_of Heapscope::Heap, heap
    assert_operator heap.object_count, :>, 1000
    obj = heap.object(address_of(marker))
    assert_equal "STRING", obj.type
    assert_equal "String", obj.class_name
    arr = heap.object(address_of(list))
    assert_equal "ARRAY", arr.type
    assert_includes arr.references, address_of(marker)
    assert_equal 0, heap.stats[:skipped_lines]
    assert_equal false, heap.stats[:truncated]
    assert_operator heap.stats[:root_records], :>, 0
  end

  def test_snapshot_with_allocation_sites
    line = __LINE__ + 2
    kept = ObjectSpace.trace_object_allocations do
      Array.new(250) { |i| "traced-#{i}" }
    end
    heap = Heapscope.snapshot
    key = "#{__FILE__}:#{line}:String"
    row = heap.tally(by: "file:line:class", top: nil).find { |r| r.key == key }
    refute_nil row, "no #{key} in the snapshot"
    assert_equal 250, row.count
    obj = heap.object(address_of(kept.first))
    assert_equal __FILE__, obj.file
    assert_equal line, obj.line
  end

  # In a child whose TMPDIR and working directory are empty private
  # directories: after a snapshot both are still empty.
  def test_snapshot_writes_no_file
    tmp = Fixtures.path("private-tmp")
    cwd = Fixtures.path("private-cwd")
    FileUtils.mkdir_p([tmp, cwd])
    script = <<~RUBY
      require "heapscope"
      $big = Array.new(20_000) { |i| "x" * (i % 50) }
      heap = Heapscope.snapshot
      print heap.object_count
    RUBY
    out, st = Dir.chdir(cwd) { Fixtures.ruby("-e", script, env: { "TMPDIR" => tmp }) }
    assert st.success?, out
    assert_operator Integer(out), :>, 20_000
    assert_empty Dir.children(tmp)
    assert_empty Dir.children(cwd)
  end

  def test_snapshot_to_path
    %w[snap.json snap.json.gz].each do |name|
      path = Fixtures.path(name)
      heap = Heapscope.snapshot(path: path)
      assert File.file?(path)
      assert_equal name.end_with?(".gz"), heap.stats[:gzip]
      assert_equal heap.object_count, Heapscope::Heap.load(path).object_count
    end
  end

  def test_dump
    path = Heapscope.dump(Fixtures.path("dump.json.gz"))
    assert_equal "\x1f\x8b".b, File.binread(path, 2)
    assert_operator Heapscope::Heap.load(path).object_count, :>, 1000
    refute File.exist?("#{path}.#{Process.pid}.tmp")
  end

  # dump_all releases the GVL whenever the pipe is full; a Ruby thread that
  # gzipped the pipe then read(2) into a Ruby String that dump_all was
  # escaping into the dump, and about one gzip dump in a hundred had a line
  # of raw bytes (CI saw "1 of 23,395 lines skipped (bad_json 1)").  The
  # pipe is read by a native thread now: no Ruby thread starts, and the
  # dump reads back whole.
  def test_gzip_dump_starts_no_ruby_thread
    path = Fixtures.path("nothread.json.gz")
    started = []
    # (a Thread's inspect names the file:line of its block; minitest may
    # start threads of its own meanwhile)
    tp = TracePoint.new(:thread_begin) { started << Thread.current.inspect }
    tp.enable { Heapscope.dump(path, gzip: true) }
    assert_equal [], started.grep(%r{/heapscope/})
    heap = Heapscope::Heap.load(path)
    assert_equal 0, heap.stats[:skipped_lines]
    assert_operator heap.object_count, :>, 1000
  end

  def test_gzip_dump_errors
    e = assert_raises(SystemCallError) { Heapscope.dump(Fixtures.path("no/such/dir/x.json.gz"), gzip: true) }
    assert_includes e.message, "no/such/dir"
    assert_equal [], Dir[Fixtures.path("no/such/dir/*")]
  end

  def test_snapshot_with_busy_threads
    stop = false
    # Other threads allocate while dump_all runs and the native thread
    # parses.  (Busy threads slow any dump_all to an IO - file or pipe -
    # because every write hands the GVL over; one is enough here.)  The
    # worker hands the GVL back every 64 strings: counted by a counter, as
    # the array's size stops changing once it is full, and a worker that
    # never passes makes each of the dump's writes wait for Ruby's 100 ms
    # time slice (the suite took 99 s in one run, 452 s in the next).
    workers = 1.times.map do
      Thread.new do
        a = []
        n = 0
        until stop
          a << "x" * 50
          a.shift if a.size > 1000
          Thread.pass if (n += 1) % 64 == 0
        end
      end
    end
    2.times { assert_operator Heapscope.snapshot.object_count, :>, 1000 }
  ensure
    stop = true
    workers&.each(&:join)
  end

  def test_snapshot_limit_error
    # The native loader stops early; the writer gets EPIPE; the load's
    # error is what we see.
    assert_raises(Heapscope::LimitError) { Heapscope.snapshot(max_objects: 100) }
    assert_operator Heapscope.snapshot.object_count, :>, 1000 # still works afterwards
  end

  def test_snapshot_rejects_progress
    assert_raises(ArgumentError) { Heapscope.snapshot(progress: proc {}) }
  end
end
