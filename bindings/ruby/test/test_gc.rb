# frozen_string_literal: true

require_relative "test_helper"

# Handles live as long as something refers to them, in any order, under
# GC.stress and compaction.
class TestGC < Minitest::Test
  def stress
    GC.stress = true
    yield
  ensure
    GC.stress = false
  end

  def test_small_case_under_gc_stress
    a, b, c = Fixtures.leak
    stress do
      heap = Heapscope::Heap.load(Fixtures.small)
      t = heap.tally(by: "class", top: 3)
      assert_equal 3, t.size
      tree = heap.dominators
      heap = nil # the tree holds its heap
      assert_equal 2, tree.top(2).size
      assert_kind_of Heapscope::Heap, tree.heap

      diff = Heapscope.diff(a, b, c)
      g = diff.groups(by: "class", top: 2)
      diff = nil # the groups hold the diff
      assert_equal 2, g.size
      refute_empty g.first.addresses(2)
    end
  end

  def test_derived_objects_outlive_parents
    a, b, c = Fixtures.leak
    diff = Heapscope.diff(a, b, c)
    heap = diff.heap # borrowed from the diff (streamed form)
    groups = diff.groups(by: "class")
    diff = nil
    GC.start
    assert_operator heap.object_count, :>, 0
    assert_equal "LeakedWidget", heap.object(groups.find { |x| x.key == "LeakedWidget" }.addresses(1)[0]).class_name

    d2 = Heapscope.diff(a, b, c)
    d2.heap.object_count # creates the borrowed Heap object, then drops it
    GC.start
    assert_operator d2.heap.object_count, :>, 0

    heaps = [a, b, c].map { |p| Heapscope::Heap.load(p) }
    d3 = Heapscope.diff(*heaps)
    heaps = nil
    GC.start
    assert_equal Fixtures::LEAK_N, d3.groups(by: "class").find { |x| x.key == "LeakedWidget" }.count
  end

  def test_compaction
    skip "no GC.verify_compaction_references" unless GC.respond_to?(:verify_compaction_references)
    a, b, c = Fixtures.leak
    diff = Heapscope.diff(*[a, b, c].map { |p| Heapscope::Heap.load(p) })
    tree = diff.heap.dominators
    t = diff.heap.tally(top: 2)
    GC.verify_compaction_references(double_heap: true, toward: :empty)
    assert_kind_of Heapscope::Heap, diff.heap
    assert_kind_of Heapscope::Heap, tree.heap
    assert_equal 2, t.size
    assert_equal 3 * Fixtures::LEAK_N, diff.suspects(top: 1).first.leaked.count
  end

  # Reports run their writer without the GVL while other threads
  # allocate, collect and compact: the dump names, ids and addresses the
  # writer reads are held still, and the output is the same bytes.
  def test_reports_while_other_threads_collect_and_compact
    a, b, c = Fixtures.leak
    diff = Heapscope.diff(a, b, c)
    heap = Heapscope::Heap.load(c)
    reg = diff.suspects(top: 1).first.address
    jobs = {
      suspects: -> { diff.report(format: :json) },
      diff: -> { diff.groups(top: 5).report(width: 60) },
      tally: -> { heap.tally(by: "class").report(format: :json) },
      paths: -> { heap.root_paths(reg, heap.references(reg).first, format: :text) },
      show: -> { heap.show(reg, format: :json) },
      tree: -> { heap.dominators.report(format: :json, full: true) },
    }
    want = jobs.transform_values(&:call)
    stop = false
    churn = Thread.new do
      until stop
        Array.new(2000) { |i| "garbage #{i}" }
        GC.start
        GC.compact if GC.respond_to?(:compact)
      end
    end
    stress do
      jobs.each { |name, job| assert_equal want[name], job.call, name }
    end
    5.times { jobs.each { |name, job| assert_equal want[name], job.call, name } }
  ensure
    stop = true
    churn&.join
  end

  def test_many_heaps_are_freed
    # The GC sees the library's memory (rb_gc_adjust_memory_usage) and
    # frees unreferenced heaps: memory stays bounded.
    rss = -> { File.read("/proc/self/status")[/VmRSS:\s+(\d+)/, 1].to_i }
    30.times { Heapscope::Heap.load(Fixtures.leak[2]).dominators }
    GC.start
    before = rss.call
    120.times { Heapscope::Heap.load(Fixtures.leak[2]).dominators }
    GC.start
    assert_operator rss.call - before, :<, 100_000, "RSS grew by more than 100 MB"
  end
end
