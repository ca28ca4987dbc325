# frozen_string_literal: true

require_relative "test_helper"
require "open3"

# Answers a user can trust, from Ruby: an empty leak set is
# empty, dumps that cannot be one process's series are said, one label per
# object, addresses are hex with 0x, and the snapshot code's own objects
# are the dumper's.
class TestTrust < Minitest::Test
  def test_empty_leak_set_has_no_groups
    c = Fixtures.leak[2]
    diff = Heapscope.diff(c, c, c)
    assert_equal 0, diff.count
    groups = diff.groups(by: "file:line:class", top: nil)
    assert_equal [], groups.to_a
    assert_equal 0, groups.group_count
    assert_equal 0, groups.total.count
    assert_equal [], diff.addresses
  end

  def test_series_warnings
    a, b, c = Fixtures.leak
    assert_equal [], Heapscope.diff(a, b, c).warning_flags & %i[repeated different_process backwards]

    same = Heapscope.diff(c, c, c)
    assert_includes same.warning_flags, :repeated
    assert(same.warnings.any? { |w| w.include?("#{c} and #{c} are the same file") }, same.warnings.inspect)

    back = Heapscope.diff(c, b, a)
    assert_includes back.warning_flags, :backwards
    assert(back.warnings.any? { |w| w.include?("out of order") }, back.warnings.inspect)

    # another process's dump: nothing of it is at the same addresses
    other = Fixtures.small
    mixed = Heapscope.diff(a, other, other)
    assert_includes mixed.warning_flags, :different_process
    assert_includes mixed.warning_flags, :repeated
    assert(mixed.warnings.any? { |w| w =~ /#{Regexp.escape(a)} and #{Regexp.escape(other)} share only \d+\.\d% / },
           mixed.warnings.inspect)

    # loaded heaps: the same heap three times
    h = Heapscope::Heap.load(c)
    assert_includes Heapscope.diff(h, h, h).warning_flags, :repeated
  end

  LABELS = <<~JSONL
    {"type":"ROOT","root":"vm","references":["0x1000"]}
    {"address":"0x2000","type":"CLASS","name":"Class","memsize":100}
    {"address":"0x1000","type":"CLASS","class":"0x2000","name":"PostsController","references":["0x3000"],"memsize":500}
    {"address":"0x4000","type":"CLASS","name":"Hash","memsize":100}
    {"address":"0x3000","type":"HASH","class":"0x4000","references":["0x5000"],"memsize":200}
    {"address":"0x6000","type":"CLASS","name":"String","memsize":100}
    {"address":"0x5000","type":"STRING","class":"0x6000","memsize":40}
  JSONL

  # One label per object, named as the JSON names it: "label" is what a
  # user reads (a class by its own name), "class" its class label.
  def test_one_label_per_object
    heap = Heapscope::Heap.parse(LABELS)
    assert_equal "PostsController", heap.object("0x1000").label
    assert_equal "Class", heap.object("0x1000").class_name
    assert_equal "Hash", heap.object("0x3000").label
    assert_equal "Hash", heap.object("0x3000").class_name
    row = heap.retained(top: 100).find { |r| r.address == 0x1000 }
    assert_equal "PostsController", row.label
    assert_equal "Class", row.class_name
    path = heap.root_paths("0x5000").first
    assert_equal %w[PostsController Hash String], path.path.map(&:label)
    assert_equal "vm", path.root
    # a class still counts under its class when grouping by class
    assert_equal 1, heap.tally(by: "class", top: nil).find { |r| r.key == "Class" }.count
  end

  def test_addresses_are_hex_with_0x
    heap = Heapscope::Heap.parse(LABELS)
    assert_equal 0x1000, Heapscope.address(" 0x1000 ")
    assert_equal 0x1000, Heapscope.address(0x1000)
    assert heap.include?("0X1000")
    %w[4096 1000 0x 0xzz 0x1000z].each do |bad|
      e = assert_raises(ArgumentError) { heap.object(bad) }
      assert_includes e.message, "0x"
    end
  end

  def test_snapshot_code_is_the_dumper
    heap = nil
    ObjectSpace.trace_object_allocations { heap = Heapscope.snapshot }
    mine = ->(t) { t.select { |r| r.key.end_with?("/heapscope/snapshot.rb") } }
    all = heap.tally(by: "file", top: nil)
    refute_empty mine.call(all), "the snapshot code allocates while it captures"
    left = heap.tally(by: "file", top: nil, keep_dumper: false)
    assert_equal [], mine.call(left)
    assert_operator left.excluded_dumper_objects, :>=, mine.call(all).sum(&:count)
    assert_equal all.total.count, left.total.count + left.excluded_dumper_objects
    assert_equal 0, all.excluded_dumper_objects
  end

  # heapscope/auto dumps in a series: the gem's own objects do not show up
  # as a group that grows at every step (point 8).
  def test_auto_dumps_timeline_leaves_the_dumper_out
    cli = ENV["HEAPSCOPE_CLI"]
    skip "HEAPSCOPE_CLI not set" unless cli && File.executable?(cli)
    dir = Fixtures.path("auto_series")
    FileUtils.mkdir_p(dir)
    script = Fixtures.write("auto_series.rb", <<~'RUBY')
      $keep = []
      3.times { |k| 500.times { |i| $keep << "step #{k} #{i}" }; Heapscope::Auto.dump }
    RUBY
    out, st = Fixtures.ruby("-rheapscope/auto", script,
                            env: { "HEAPSCOPE" => "1", "HEAPSCOPE_DIR" => dir, "HEAPSCOPE_EXIT" => "0",
                                   "HEAPSCOPE_SIGNAL" => "none" })
    assert st.success?, out
    dumps = Dir[File.join(dir, "heapscope.*.json.gz")].sort
    assert_equal 3, dumps.size, out
    tl = ->(*extra) { JSON.parse(Open3.capture2(cli, "timeline", "--json", "--by", "file", "--top", "0", *extra, *dumps)[0]) }
    kept = tl.call("--keep-dumper")
    gem_files = kept["groups"].map { |g| g["key"] }.grep(%r{/heapscope/(snapshot|auto)\.rb\z})
    refute_empty gem_files, "the gem's snapshot code is in the dumps"
    left = tl.call
    assert_equal [], left["groups"].map { |g| g["key"] }.grep(%r{/heapscope/(snapshot|auto)\.rb\z})
    excluded = left["dumps"].map { |d| d["excluded_dumper_objects"] }
    assert(excluded.all?(&:positive?), excluded.inspect)
    assert_equal [], left["warnings"]
  end
end
