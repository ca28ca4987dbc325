# frozen_string_literal: true

require_relative "test_helper"

class TestErrors < Minitest::Test
  def assert_heapscope_error(klass, status)
    e = assert_raises(klass) { yield }
    assert_kind_of Heapscope::Error, e
    assert_equal status, e.status
    assert_match(/\AHSCOPE_ERR_/, e.status_name)
    refute_empty e.message
    e
  end

  def test_missing_file
    path = Fixtures.path("does-not-exist.json")
    e = assert_heapscope_error(Heapscope::IOError, :io) { Heapscope::Heap.load(path) }
    assert_includes e.message, path
    assert_equal Errno::ENOENT::Errno, e.errno
    assert_nil e.line
  end

  def test_directory
    e = assert_heapscope_error(Heapscope::IOError, :io) { Heapscope::Heap.load(Fixtures::DIR) }
    assert_includes e.message, "directory"
  end

  def test_not_a_dump
    e = assert_heapscope_error(Heapscope::NotADumpError, :not_a_dump) do
      Heapscope::Heap.load(__FILE__)
    end
    assert_includes e.message, "not a heap dump"
  end

  def test_empty
    e = assert_heapscope_error(Heapscope::NotADumpError, :not_a_dump) do
      Heapscope::Heap.load(Fixtures.write("empty.json", ""))
    end
    assert_includes e.message, "empty"
  end

  def test_strict_parse_error_has_line_and_offset
    lines = File.readlines(Fixtures.small).first(5)
    lines.insert(3, "{\"address\":\"0x1\", \"type\": broken}\n")
    path = Fixtures.write("bad.json", lines.join)
    # lenient by default: skipped and counted
    h = Heapscope::Heap.load(path)
    assert_equal 1, h.stats[:skipped_lines]
    assert_equal [4], h.skipped_lines.map(&:first)
    e = assert_heapscope_error(Heapscope::ParseError, :parse) { Heapscope::Heap.load(path, strict: true) }
    assert_equal 4, e.line
    assert_equal lines.first(3).sum(&:bytesize) + lines[3].index("broken"), e.offset
    assert_match(/line 4/, e.message)
  end

  def test_truncated_gzip
    gz = File.binread(Fixtures.small_gz)
    path = Fixtures.write("cut.json.gz", gz[0, gz.bytesize / 2])
    h = Heapscope::Heap.load(path)
    assert_equal true, h.stats[:truncated]
    e = assert_raises(Heapscope::ParseError) { Heapscope::Heap.load(path, strict: true) }
    assert_kind_of Heapscope::TruncatedError, e
  end

  def test_corrupt_gzip
    gz = File.binread(Fixtures.small_gz).b
    gz[gz.bytesize / 2, 64] = "\xFF".b * 64
    path = Fixtures.write("corrupt.json.gz", gz)
    assert_heapscope_error(Heapscope::GzipError, :gzip) { Heapscope::Heap.load(path) }
  end

  def test_limit
    assert_heapscope_error(Heapscope::LimitError, :limit) do
      Heapscope::Heap.load(Fixtures.small, max_objects: 10)
    end
  end

  def test_max_memory
    assert_heapscope_error(Heapscope::OutOfMemoryError, :no_memory) do
      Heapscope::Heap.load(Fixtures.small, max_memory: 64 << 10)
    end
  end

  def test_unknown_tally_key
    heap = Heapscope::Heap.load(Fixtures.small)
    assert_heapscope_error(Heapscope::UnsupportedError, :unsupported) { heap.tally(by: "colour") }
    assert_raises(ArgumentError) { heap.tally(sort: :size) }
  end

  def test_unknown_address
    heap = Heapscope::Heap.load(Fixtures.small)
    assert_raises(Heapscope::NotFoundError) { heap.root_paths(0x10) }
    assert_raises(ArgumentError) { heap.root_paths }
  end

  def test_hierarchy
    %i[InvalidArgumentError OutOfMemoryError IOError ParseError NotADumpError GzipError
       LimitError CancelledError NotFoundError UnsupportedError TruncatedError InternalError].each do |n|
      assert_operator Heapscope.const_get(n), :<, Heapscope::Error
    end
    assert_operator Heapscope::Error, :<, StandardError
    assert_operator Heapscope::TruncatedError, :<, Heapscope::ParseError
  end
end
