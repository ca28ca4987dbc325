# frozen_string_literal: true

require_relative "test_helper"
require "stringio"
require "pathname"

class TestLoad < Minitest::Test
  def setup
    @heap = Heapscope::Heap.load(Fixtures.small)
  end

  def test_plain_file
    assert_kind_of Heapscope::Heap, @heap
    assert_operator @heap.object_count, :>, 1000
    assert_operator @heap.reference_count, :>, 0
    s = @heap.stats
    assert_equal @heap.object_count, s[:objects]
    assert_equal false, s[:gzip]
    assert_equal File.size(Fixtures.small), s[:input_bytes]
    assert_equal 0, s[:skipped_lines]
  end

  # Heap#summary is `heapscope summary --json`, parsed: the JSON
  # vocabulary (docs/JSON.md), checked against the heap's own accessors.
  def test_summary
    sum = @heap.summary
    %i[kind dumps total references roots dangling skipped_lines by_type by_class load warnings].each do |k|
      assert sum.key?(k), "summary lacks #{k}"
    end
    assert_equal "summary", sum[:kind]
    assert_equal [Fixtures.small], sum[:dumps].map { |d| d[:path] }
    assert_equal @heap.object_count, sum[:total][:count]
    assert_equal @heap.stats[:total_memsize], sum[:total][:memsize]
    assert_equal @heap.reference_count, sum[:references]
    types = sum[:by_type][:groups]
    assert_equal sum[:total][:count], types.sum { |g| g[:count] }
    assert_equal sum[:total][:memsize], types.sum { |g| g[:memsize] }
    assert_operator types.find { |g| g[:key] == "STRING" }[:count], :>=, 300
    classes = sum[:by_class]
    assert_equal classes[:group_count], classes[:groups].size, "summary: all classes by default"
    assert_equal 20, @heap.summary(top: 20)[:by_class][:groups].size
    assert_includes sum[:roots].map { |r| r[:root] }, "vm"
    assert_operator sum[:load][:model_bytes], :>, 0
  end

  def test_tally
    t = @heap.tally(by: "class", top: 5)
    assert_kind_of Enumerable, t
    assert_kind_of Heapscope::Tally, t
    assert_equal 5, t.size
    assert_equal "class", t.by
    assert_operator t.group_count, :>=, 5
    assert_equal @heap.object_count, t.total.count
    assert_equal t.total.count, t.total_count # deprecated name
    assert_equal t.map(&:count).sort.reverse, t.map(&:count)
    row = t.first
    assert_kind_of Heapscope::Row, row
    assert_kind_of String, row.key
    assert_equal row, t[0]
    assert_equal t.to_a.last, t.last
    assert_match(/\A#<Heapscope::Tally\nby class +count +% +memsize +%\n/, t.inspect)
    by_mem = @heap.tally(by: "type", top: nil, sort: :memsize)
    assert_equal by_mem.map(&:memsize).sort.reverse, by_mem.map(&:memsize)
    assert_equal by_mem.group_count, by_mem.size
  end

  def test_gzip_same_as_plain
    gz = Heapscope::Heap.load(Fixtures.small_gz)
    assert_equal true, gz.stats[:gzip]
    assert_equal @heap.object_count, gz.object_count
    assert_equal @heap.reference_count, gz.reference_count
    assert_equal @heap.tally(by: "type", top: nil).to_a, gz.tally(by: "type", top: nil).to_a
  end

  def test_pathname
    assert_equal @heap.object_count, Heapscope::Heap.load(Pathname(Fixtures.small)).object_count
  end

  def test_file_io
    File.open(Fixtures.small_gz, "rb") do |f|
      h = Heapscope::Heap.load(f)
      assert_equal @heap.object_count, h.object_count
      assert_equal true, h.stats[:gzip]
    end
  end

  def test_pipe_io
    # Ruby 3 pipes are non-blocking; the binding must cope.
    r, w = IO.pipe
    writer = Thread.new do
      File.open(Fixtures.small, "rb") { |f| IO.copy_stream(f, w) }
      w.close
    end
    h = Heapscope::Heap.load(r)
    writer.join
    assert_equal @heap.object_count, h.object_count
    assert r.nonblock? if r.respond_to?(:nonblock?) # flags restored
  ensure
    r&.close
    w&.close unless w&.closed?
  end

  def test_popen_io
    IO.popen(["cat", Fixtures.small_gz], "rb") do |io|
      assert_equal @heap.object_count, Heapscope::Heap.load(io).object_count
    end
  end

  def test_stringio_and_string
    data = File.binread(Fixtures.small)
    assert_equal @heap.object_count, Heapscope::Heap.load(StringIO.new(data)).object_count
    assert_equal @heap.object_count, Heapscope::Heap.parse(data).object_count
    gz = File.binread(Fixtures.small_gz)
    assert_equal @heap.object_count, Heapscope::Heap.load(StringIO.new(gz)).object_count
  end

  def test_buffered_io_is_refused
    File.open(Fixtures.small, "rb") do |f|
      f.gets
      assert_raises(ArgumentError) { Heapscope::Heap.load(f) }
    end
  end

  def test_objects
    addr = Heapscope::Heap.load(Fixtures.small).column(:address)
    assert_equal @heap.object_count, addr.size
    obj = @heap.object(addr.first)
    assert_kind_of Heapscope::ObjectInfo, obj
    assert_equal addr.first, obj.address
    assert_equal obj, @heap[format("0x%x", addr.first)]
    assert @heap.include?(addr.first)
    refute @heap.include?(1)
    assert_nil @heap.object(1)
    # references and referrers agree
    with_refs = addr.find { |a| !@heap.references(a).empty? }
    target = @heap.references(with_refs).first
    assert_includes @heap.referrers(target), with_refs
  end

  def test_values_option
    h = Heapscope::Heap.load(Fixtures.small, values: true)
    strings = h.column(:address).each_with_index.select { |_, i| h._info(i)[1] == "STRING" }
    vals = strings.map { |a, _| h.value(a) }.compact
    assert_includes vals, "kept-7"
    assert_nil @heap.value(strings.first[0]) # not kept by default
  end

  def test_progress_callback
    calls = []
    Heapscope::Heap.load(Fixtures.small, progress: ->(done, total) { calls << [done, total] })
    refute_empty calls
    assert_equal File.size(Fixtures.small), calls.first[1]
  end

  def test_progress_can_cancel
    e = assert_raises(Heapscope::CancelledError) do
      Heapscope::Heap.load(Fixtures.small, progress: ->(_d, _t) { :cancel })
    end
    assert_equal :cancelled, e.status
  end

  def test_progress_exception_propagates
    err = Class.new(StandardError)
    assert_raises(err) { Heapscope::Heap.load(Fixtures.small, progress: ->(_d, _t) { raise err }) }
  end

  # Thread#raise reaches a load that runs without the GVL: the unblock
  # function sets the flag the progress callback polls.
  def test_load_is_interruptible
    data = File.binread(Fixtures.small)
    r, w = IO.pipe
    stop = Class.new(StandardError)
    loader = Thread.new do
      Thread.current.report_on_exception = false
      Heapscope::Heap.load(r)
    end
    sent = 0
    raised = false
    chunk = data
    # Feed the loader until it has seen > 16 MB (a progress tick) after the
    # interrupt was requested; it must then stop with our exception.
    while loader.alive? && sent < (400 << 20)
      n = begin
        w.write_nonblock(chunk, exception: false)
      rescue Errno::EPIPE
        break
      end
      if n == :wait_writable
        IO.select(nil, [w], nil, 0.05)
        next
      end
      sent += n
      chunk = n < chunk.bytesize ? chunk.byteslice(n..) : data
      if !raised && sent > (4 << 20)
        loader.raise(stop)
        raised = true
      end
    end
    w.close
    assert_raises(stop) { loader.value }
    assert_operator sent, :<, 400 << 20, "the load was not interrupted"
  ensure
    r&.close
    w&.close unless w&.closed?
  end

  def test_memsize_reports_the_model
    s = @heap.stats
    assert_operator ObjectSpace.memsize_of(@heap), :>=, s[:model_bytes] + s[:index_bytes]
  end

  def test_inspect
    assert_equal "#<Heapscope::Heap #{Fixtures.small}: #{@heap.object_count} objects, " \
                 "#{@heap.reference_count} references>", @heap.inspect
    assert_equal "#<Heapscope::Heap (no path): #{@heap.object_count} objects, " \
                 "#{@heap.reference_count} references>",
                 Heapscope::Heap.parse(File.binread(Fixtures.small)).inspect
  end

  def test_unknown_option
    assert_raises(ArgumentError) { Heapscope::Heap.load(Fixtures.small, bogus: 1) }
  end
end
