# frozen_string_literal: true

require_relative "test_helper"

class TestDiff < Minitest::Test
  N = Fixtures::LEAK_N

  def widget_site
    line = Fixtures::LEAK_SCRIPT.lines.index { |l| l.include?("LeakedWidget.new(i)") } + 1
    "#{Fixtures.leak_script}:#{line}:LeakedWidget"
  end

  # The planted leak: N widgets, each with a String and an Array, made
  # between dump 1 and dump 2, still alive in dump 3.
  def check_planted_leak(diff)
    assert_kind_of Heapscope::Diff, diff
    assert_equal [], diff.warnings
    by_class = diff.groups(by: "class")
    assert_equal N, by_class.find { |g| g.key == "LeakedWidget" }&.count
    assert_operator by_class.find { |g| g.key == "String" }.count, :>=, N
    assert_operator by_class.find { |g| g.key == "Array" }.count, :>=, N
    assert_equal diff.count, by_class.total.count
    assert_equal diff.memsize, by_class.total.memsize
    assert_equal "file:line:class", diff.groups.by # the default key of leak hunting

    sites = diff.groups(by: "file:line:class", top: 3)
    widgets = sites.find { |g| g.key == widget_site }
    refute_nil widgets, "no #{widget_site} in #{sites.inspect}"
    assert_equal N, widgets.count
    addrs = widgets.addresses
    assert_equal N, addrs.size
    heap = diff.heap
    addrs.each { |a| assert_equal "LeakedWidget", heap.object(a).class_name }
    assert_equal 3, widgets.addresses(3).size
    assert_equal "#<Heapscope::Group key=#{widget_site.inspect} count=#{N} memsize=#{widgets.memsize}>",
                 widgets.inspect
    assert_equal diff.count, diff.addresses.size

    # What holds them: the global $registry Array.
    top = diff.suspects(top: 1).first
    assert_equal "ARRAY", top.type
    assert_equal "Array", top.class_name
    assert_equal 3 * N, top.leaked.count
    assert_equal top.leaked.count, top.leaked_count # deprecated name
    assert_equal top.address, top.path.last.address
    refute_nil top.root
    registry = heap.object(top.address)
    assert_equal 3 * N, registry.size # the registry holds all 3 runs' widgets
    assert_match(/ARRAY Array holds #{3 * N} leaked objects/, diff.report)
    # the line that put them there: the widgets, each keeping its String and Array
    assert_equal widget_site, top.sites.first.key
    assert_equal N, top.sites.first.entries
    assert_equal 3 * N, top.sites.first.kept.count
    assert_equal N, top.entries
    assert_nil top.vm_table
    assert_equal [top], Heapscope.suspects(*Fixtures.leak, top: 1) if diff.heap.stats[:input_bytes] > 0
  end

  def test_diff_of_paths_streams
    check_planted_leak(Heapscope.diff(*Fixtures.leak))
  end

  def test_diff_of_heaps
    heaps = Fixtures.leak.map { |p| Heapscope::Heap.load(p) }
    diff = Heapscope.diff(*heaps)
    assert_same heaps[2], diff.heap
    check_planted_leak(diff)
    assert_equal diff.snapshot_objects, heaps.map(&:object_count)
  end

  def test_two_snapshot_diff
    a, b, = Fixtures.leak
    diff = Heapscope.diff(a, b) # new in B: the second run's widgets
    assert_equal N, diff.groups(by: "class").find { |g| g.key == "LeakedWidget" }.count
  end

  # Tracing that starts between dump 1 and dump 2: Ruby's allocation
  # tracer is new in dump 2 and alive in dump 3, so it would be a leaked
  # object; it is left out and counted (Diff#excluded_tracer, the dump's
  # own record), and keep_tracer: puts exactly it back.
  def test_allocation_tracer_left_out
    dir = Fixtures.path("late_tracing")
    FileUtils.mkdir_p(dir)
    script = Fixtures::LEAK_SCRIPT.sub("ObjectSpace.trace_object_allocations_start\n", "")
                                  .sub("dump(\"\#{out}/leak_1.json\")\n",
                                       "dump(\"\#{out}/leak_1.json\")\nObjectSpace.trace_object_allocations_start\n")
    refute_equal Fixtures::LEAK_SCRIPT, script
    File.write(File.join(dir, "make.rb"), script)
    assert system(RbConfig.ruby, "--disable-gems", File.join(dir, "make.rb"), dir, N.to_s)
    a, b, c = (1..3).map { |i| File.join(dir, "leak_#{i}.json") }
    tracer = ->(p) { File.foreach(p).map { |l| JSON.parse(l) }.select { |r| r["struct"] == "ObjectTracing/allocation_info_tracer" } }
    assert_empty tracer.(a)
    mem = tracer.(c).map { |r| r["memsize"] }
    assert_equal 1, mem.size
    left = Heapscope.diff(a, b, c)
    kept = Heapscope.diff(a, b, c, keep_tracer: true)
    assert_equal [1, mem[0]], left.excluded_tracer.to_a
    assert_equal [0, 0], kept.excluded_tracer.to_a
    assert_equal [left.count + 1, left.memsize + mem[0]], [kept.count, kept.memsize]
    refute_includes left.groups(by: "class").map(&:key), "<allocation tracer>"
    assert_equal({ "excluded_tracer" => { "count" => 1, "memsize" => mem[0] } },
                 JSON.parse(left.report(format: :json)).slice("excluded_tracer"))
    heaps = Heapscope.diff(Heapscope::Heap.load(a), Heapscope::Heap.load(b), Heapscope::Heap.load(c))
    assert_equal left.excluded_tracer.to_a, heaps.excluded_tracer.to_a
  end

  def test_mixed_and_options
    a, b, c = Fixtures.leak
    diff = Heapscope.diff(Heapscope::Heap.load(a), b, c, address_only: true)
    assert_operator diff.count, :>=, 3 * N
    assert_raises(ArgumentError) { Heapscope.diff(Heapscope::Heap.load(a), Heapscope::Heap.load(b), strict: true) }
  end

  def test_untraced_dumps_warn
    path = Fixtures.small
    diff = Heapscope.diff(path, path, path)
    assert_equal 0, diff.count
    refute_empty diff.warnings
    assert_includes diff.warning_flags, :no_tracing
  end

  def test_find_leaks_in_process
    leaky = Struct.new(:name)
    registry = []
    line = __LINE__ + 1
    diff = Heapscope.find_leaks { 30.times { |i| registry << leaky.new("leak-#{i}") }; "junk" * 99 }
    sites = diff.groups(by: "file:line:class", top: nil)
    assert_equal [30, 30], sites.select { |g| g.key.start_with?("#{__FILE__}:#{line}:") }.map(&:count)
    assert_equal 60, diff.count, "unexpected leaks: #{sites.inspect}"
    refute sites.any? { |g| g.key.include?("lib/heapscope") }, sites.inspect
    top = diff.suspects(top: 1).first
    assert_equal 60, top.leaked.count
    assert_equal "Array", top.class_name
    assert_equal 90, registry.size
  end

  def test_retained
    heap = Heapscope::Heap.load(Fixtures.leak[2])
    rows = heap.retained(top: 10)
    assert_equal 10, rows.size
    assert_equal rows.map { |r| r.retained.memsize }.sort.reverse, rows.map { |r| r.retained.memsize }
    rows.each do |r|
      assert_operator r.retained.memsize, :>=, r.memsize
      assert_operator r.retained.count, :>=, 1
    end
    tree = heap.dominators
    assert_same tree, heap.dominators
    assert_equal rows.first.retained.memsize, tree.retained_size(rows.first.address)
    t = tree.totals
    assert_equal heap.object_count, t[:reachable].count + t[:unreachable].count
    # the registry dominates its widgets
    reg = Heapscope.diff(*Fixtures.leak).suspects(top: 1).first.address
    widget = heap.references(reg).first
    assert_equal reg, tree.dominator(widget)
    assert_equal reg, tree.chain(widget)[-2]
    assert_operator tree.retained_count(reg), :>, 3 * N
  end

  def test_root_paths
    heap = Heapscope::Heap.load(Fixtures.leak[2])
    reg = Heapscope.diff(*Fixtures.leak).suspects(top: 1).first.address
    widget = heap.references(reg).first
    paths = heap.root_paths(widget, format("0x%x", reg))
    assert_equal 2, paths.size
    assert paths.all?(&:reachable?)
    assert_equal widget, paths[0].target
    assert_equal [reg, widget], paths[0].addresses.last(2)
    dot = heap.root_paths(widget, format: :dot)
    assert_match(/\Adigraph heapscope \{\n/, dot)
    assert_includes dot, format("0x%x", widget)
    assert_match(/fillcolor="#f4a6a6"/, dot)

    cli = ENV["HEAPSCOPE_CLI"]
    skip "HEAPSCOPE_CLI not set: DOT not compared with the CLI" unless cli && File.executable?(cli)
    expected = IO.popen([cli, "root", "--dot", Fixtures.leak[2], format("0x%x", widget),
                         format("0x%x", reg)], &:read)
    assert_equal expected, heap.root_paths(widget, reg, format: :dot)
  end
end
