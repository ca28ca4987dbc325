# frozen_string_literal: true

require_relative "test_helper"
require "open3"
require "stringio"

# Every report of the gem is the library's writer's: the same bytes as the
# `heapscope` command prints for the same dump and options, text and JSON
# (CLI, Ruby and FFI say the same thing).  Each test names the promise
# it checks.  The CLI comes from HEAPSCOPE_CLI
# (test.sh sets it); without it these tests skip.
class TestReport < Minitest::Test
  include InterruptCheck
  N = Fixtures::LEAK_N

  def setup
    @cli = ENV["HEAPSCOPE_CLI"]
    skip "HEAPSCOPE_CLI not set: nothing to compare with" unless @cli && File.executable?(@cli)
  end

  # stdout of `heapscope ARGS` (fixed width, no saved index, no progress
  # bar); stderr is returned too, for the warnings.
  def cli(*args, columns: 100, index: false)
    flags = index ? [] : ["--no-index"]
    out, err, st = Open3.capture3({ "COLUMNS" => columns.to_s }, @cli, args[0], "--no-progress",
                                  *flags, *args.drop(1))
    assert st.success?, "heapscope #{args.join(' ')} failed: #{err}"
    [out.force_encoding(Encoding::UTF_8), err]
  end

  def cli_out(*args, **opts)
    cli(*args, **opts)[0]
  end

  def leak
    Fixtures.leak
  end

  def heap
    @heap ||= Heapscope::Heap.load(leak[2])
  end

  def leak_diff
    @leak_diff ||= Heapscope.diff(*leak)
  end

  def registry
    leak_diff.suspects(top: 1).first.address
  end

  # The summary's load figures are measured at each load: the rest must
  # be the same bytes.
  def without_load(text)
    text.gsub(/^  load .*\n/, "").gsub(/"load": \{[^}]*\}/m, '"load": {}')
  end

  # Point 1: one JSON vocabulary; `tally --json`, `diff --json`,
  # `suspects --json` are the documents the gem returns, byte for byte.
  def test_json_documents_equal_the_cli
    assert_equal cli_out("tally", "--json", "--keep-dumper", "--by", "class", "--top", "7", leak[2]),
                 heap.tally(by: "class", top: 7).report(format: :json)
    assert_equal cli_out("tally", "--json", "--top", "0", leak[2]),
                 heap.tally(top: nil, keep_dumper: false).report(format: :json)
    assert_equal cli_out("tally", "--json", "--by", "gem", "--sort", "memsize", leak[2]),
                 heap.tally(by: "gem", sort: :memsize, keep_dumper: false).report(format: :json)
    assert_equal cli_out("diff", "--json", *leak), leak_diff.groups(top: 20).report(format: :json)
    assert_equal cli_out("diff", "--json", "--addresses", "--by", "class", "--top", "0", *leak),
                 leak_diff.groups(by: "class").report(format: :json, addresses: true)
    assert_equal cli_out("diff", "--json", leak[0], leak[1]),
                 Heapscope.diff(leak[0], leak[1]).groups(top: 20).report(format: :json)
    assert_equal cli_out("suspects", "--json", *leak), leak_diff.report(format: :json)
    assert_equal cli_out("suspects", "--json", "--top", "0", "--no-class-edges", *leak),
                 leak_diff.report(format: :json, top: nil, class_edges: false)
    doc = JSON.parse(leak_diff.report(format: :json))
    assert_equal leak, doc["dumps"].map { |d| d["path"] }
    assert_equal [], doc["warnings"]
    assert_equal({ "count" => leak_diff.count, "memsize" => leak_diff.memsize }, doc["leaked"])
    assert_equal doc["leaked"].values, leak_diff.leaked.to_a
    assert_equal doc["excluded_dumper_objects"], leak_diff.excluded_dumper_objects
  end

  # Point 1: Ruby says what the JSON says (summary[:total][:memsize], not
  # summary[:memsize] next to the CLI's total_memsize).
  def test_summary_is_the_cli_summary
    want = JSON.parse(cli_out("summary", "--json", leak[2]), symbolize_names: true)
    got = heap.summary
    assert_equal want.reject { |k, _| k == :load }, got.reject { |k, _| k == :load }
    assert_equal want[:load].keys, got[:load].keys
    assert_equal heap.stats[:total_memsize], got[:total][:memsize]
    assert_equal without_load(cli_out("summary", leak[2])), without_load(heap.report)
    assert_equal without_load(cli_out("summary", "--top", "3", leak[2])), without_load(heap.report(top: 3))
    assert_equal without_load(cli_out("summary", "--json", leak[2])), without_load(heap.report(format: :json))
  end

  # Point 2: the dominator super-root is "(roots)" everywhere: the gem's
  # dominator tree reports are the CLI's, and DominatorTree#dominator says
  # "(roots)" for the objects the JSON's idom says it of.
  def test_dominators_equal_the_cli
    tree = heap.dominators
    assert_equal cli_out("dominators", leak[2]), tree.report
    assert_equal cli_out("dominators", leak[2]), tree.to_s
    assert_equal cli_out("dominators", "--top", "3", "--depth", "3", leak[2]), tree.report(top: 3, depth: 3)
    assert_equal cli_out("dominators", "--json", leak[2]), tree.report(format: :json)
    addr = format("0x%x", registry)
    assert_equal cli_out("dominators", leak[2], addr), tree.report(registry)
    assert_equal cli_out("dominators", "--json", leak[2], addr), tree.report(addr, format: :json)
    full = JSON.parse(cli_out("dominators", "--json", "--full", leak[2]))
    assert_equal full, JSON.parse(tree.report(format: :json, full: true))
    supers = full["idom"].select { |_, v| v == "(roots)" }.keys.first(5)
    refute_empty supers
    supers.each { |a| assert_equal "(roots)", tree.dominator(a) }
    cat = full["idom"].find { |_, v| v.start_with?("(root:") }
    assert_equal cat[1][/\(root:(.*)\)/, 1], tree.dominator(cat[0])
    assert_equal cli_out("retained", "--folded", leak[2]), tree.report(format: :folded)
  end

  # Point 4: text tables fit the width and cut long keys in the middle,
  # keeping the end (file, line, class): the gem's tables are the CLI's
  # at every width.
  def test_text_tables_equal_the_cli_at_any_width
    [100, 60, 40].each do |w|
      assert_equal cli_out("tally", "--keep-dumper", leak[2], columns: w),
                   heap.tally.report(width: w), "tally at width #{w}"
      assert_equal cli_out("diff", *leak, columns: w), leak_diff.groups(top: 20).report(width: w),
                   "diff at width #{w}"
      assert_equal cli_out("retained", "--by", "file:line:class", leak[2], columns: w),
                   heap.retained(by: "file:line:class").report(width: w), "retained --by at width #{w}"
    end
    # the fixture's keys are long (a temporary directory): cut in the
    # middle, the start and the end of the key shown
    line = Fixtures::LEAK_SCRIPT.lines.index { |l| l.include?("LeakedWidget.new(i)") } + 1
    site = "#{Fixtures.leak_script}:#{line}:LeakedWidget"
    [[60, "…"], [50, "..."]].each do |w, mark|
      text = leak_diff.groups(top: 20).report(width: w, ascii: mark == "...")
      row = text.lines.find { |l| l.match?(/Widget +#{N} /) }
      shown = row.split[0]
      assert_includes shown, mark, row
      pre, post = shown.split(mark)
      assert site.start_with?(pre) && site.end_with?(post), "#{shown} is not a cut of #{site}"
      assert_operator row.chomp.length, :<=, w
    end
  end

  # Point 5: numbers with separators, right plurals: the gem prints the
  # CLI's words ("1 object"), here on a diff where one object leaked.
  def test_plurals_and_numbers_equal_the_cli
    a = Fixtures.write("one_a.json", <<~JSONL)
      {"type":"ROOT","root":"vm","references":["0x1000"]}
      {"address":"0x1000","type":"ARRAY","references":[],"memsize":40}
    JSONL
    b = Fixtures.write("one_b.json", <<~JSONL)
      {"type":"ROOT","root":"vm","references":["0x1000"]}
      {"address":"0x1000","type":"ARRAY","references":["0x2000"],"memsize":40}
      {"address":"0x2000","type":"STRING","memsize":1234567}
    JSONL
    one = Heapscope.diff(a, b, b)
    assert_equal 1, one.count
    out, err = cli("diff", a, b, b)
    text = one.to_s
    assert_includes text, "leaked: 1 object, 1.2 MB"
    # the library's text has the warnings first; the CLI prints them on stderr
    warnings = err.lines.map { |l| l.delete_prefix("heapscope: ") }.join
    refute_empty warnings
    assert_equal warnings + out, text
    assert_equal out, one.groups(top: 20).report(warnings: false)
    assert_equal cli_out("suspects", a, b, b), one.report(warnings: false)
    assert_includes one.report, "holds 1 leaked object "
    assert_includes heap.dominators.report, "(1 object)"
    assert_match(/\d,\d{3}/, heap.dominators.report)
  end

  # Point 6: one default grouping key for leak hunting, file:line:class:
  # Diff#groups, Diff#to_s and `heapscope diff` agree without options.
  def test_default_key_is_file_line_class
    assert_equal "file:line:class", leak_diff.groups.by
    assert_equal "file:line:class", heap.tally.by
    assert_equal cli_out("diff", *leak), leak_diff.to_s
    assert_includes leak_diff.to_s, "by file:line:class"
    assert_equal leak_diff.groups(by: "file:line:class", top: nil).to_a, leak_diff.groups.to_a
  end

  # Point 7: Diff#report labels every step of its paths as the CLI does,
  # and `puts heap.tally` prints the table with its header.
  def test_report_labels_paths_and_puts_prints_headers
    assert_equal cli_out("suspects", *leak), leak_diff.report
    assert_match(/path from root \S+: 0x\h+ ARRAY Array$/, leak_diff.report)
    refute_match(/path from root \S+: 0x\h+(?: -> 0x\h+)*$/, leak_diff.report)
    out, = capture_io { puts heap.tally }
    assert_equal cli_out("tally", "--keep-dumper", leak[2]), out
    assert_match(/\Aby file:line:class +count +% +memsize +%\n/, out)
    out, = capture_io { puts heap.tally(keep_dumper: false) }
    assert_equal cli_out("tally", leak[2]), out
    out, = capture_io { puts leak_diff }
    assert_equal cli_out("diff", *leak), out
    out, = capture_io { puts heap.retained }
    assert_equal cli_out("retained", leak[2]), out
    out, = capture_io { puts heap }
    assert_equal without_load(cli_out("summary", leak[2])), without_load(out)
  end

  # Root paths, the DOT graph, show, generations, retained: the library's
  # writers, as the CLI commands print them.
  def test_other_writers_equal_the_cli
    reg = registry
    widget = heap.references(reg).first
    a, b = [widget, reg].map { |x| format("0x%x", x) }
    assert_equal cli_out("root", leak[2], a, b), heap.root_paths(widget, reg, format: :text)
    assert_equal cli_out("root", "--json", leak[2], a, b), heap.root_paths(a, b, format: :json)
    assert_equal cli_out("root", "--dot", "--max-paths", "2", leak[2], a),
                 heap.dot(widget, max_paths: 2)
    assert_equal cli_out("root", "--json", "--no-class-edges", leak[2], a),
                 heap.root_paths(a, format: :json, class_edges: false)
    paths = JSON.parse(cli_out("root", "--json", leak[2], a))["paths"]
    assert_equal paths[0]["path"].map { |o| Integer(o["address"], 16) },
                 heap.root_paths(widget).first.addresses
    assert_equal paths[0]["path"].map { |o| o["label"] }, heap.root_paths(widget).first.path.map(&:label)
    assert_equal cli_out("retained", leak[2]), heap.retained.to_s
    assert_equal cli_out("retained", "--json", "--top", "5", leak[2]), heap.retained(top: 5).report(format: :json)
    assert_equal cli_out("retained", "--json", "--by", "class", leak[2]),
                 heap.retained(by: "class").report(format: :json)
    assert_equal cli_out("generations", leak[2]), heap.generations
    assert_equal cli_out("generations", "--json", "--top", "2", leak[2]), heap.generations(format: :json, top: 2)
    assert_equal cli_out("tally", "--keep-dumper", "--by", "type", "--top", "0", leak[2]),
                 heap.tally(by: "type", top: nil).report
    csv = heap.tally(by: "type", top: nil).report(format: :csv)
    assert_equal "type,count,memsize\n", csv.lines.first
    assert_equal heap.tally(by: "type", top: nil).size + 1, csv.lines.size
  end

  # show: the heap does not keep the dump's record lines (the CLI catches
  # them while it loads), so the gem's show has no "record": otherwise the
  # same bytes, text and JSON.
  def test_show_equals_the_cli_but_for_the_record
    reg = format("0x%x", registry)
    no_record = ->(text) { text.gsub(/^  record: .*\n/, "") }
    assert_equal no_record.(cli_out("show", leak[2], reg)), heap.show(reg)
    assert_equal no_record.(cli_out("show", "--top", "3", leak[2], reg)), heap.show(registry, top: 3)
    want = JSON.parse(cli_out("show", "--json", leak[2], reg))
    got = JSON.parse(heap.show(reg, format: :json))
    refute_nil want["objects"][0].delete("record")
    assert_nil got["objects"][0].delete("record")
    assert_equal want, got
    doc = JSON.parse(heap.show(reg, "0x10", format: :json))
    assert_equal [true, false], doc["objects"].map { |o| o["found"] }
  end

  # Output to an IO in chunks: the same bytes; the IO is returned; an
  # exception of its #write stops the writer and is raised.
  def test_io_output
    io = StringIO.new
    assert_same io, leak_diff.report(format: :json, io: io)
    assert_equal leak_diff.report(format: :json), io.string
    big = StringIO.new
    heap.dominators.report(format: :json, full: true, io: big)
    assert_operator big.string.bytesize, :>, 64 * 1024 # more than one chunk
    assert_equal heap.dominators.report(format: :json, full: true), big.string
    failing = Object.new
    def failing.write(_)
      raise Errno::ENOSPC, "full"
    end
    assert_raises(Errno::ENOSPC) { heap.dominators.report(format: :json, full: true, io: failing) }
    assert_raises(TypeError) { heap.report(io: Object.new) }
  end

  # A writer runs without the GVL: Thread#raise reaches it through the
  # unblock function, whose flag makes the sink fail, and the writer stops
  # at once (the library's loops over every object end when the output
  # failed): the exception comes from inside _write, in a fraction of the
  # time the whole write takes, and no String is returned.  A heap of
  # 300,000 objects, whose full dominator JSON (17 MB) takes long enough.
  def test_interrupt_stops_a_writer
    n = 300_000
    dump = +%({"type":"ROOT","root":"vm","references":["0x10000"]}\n)
    dump << %({"address":"0x10000","type":"ARRAY","references":[) <<
      (1..n).map { |i| %("0x#{(0x10000 + (i * 40)).to_s(16)}") }.join(",") << %(],"memsize":40}\n)
    (1..n).each { |i| dump << %({"address":"0x#{(0x10000 + (i * 40)).to_s(16)}","type":"STRING","memsize":40}\n) }
    tree = Heapscope::Heap.parse(dump).dominators
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    whole = tree.report(format: :json, full: true)
    full = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
    e = assert_interrupt_stops(full, "writer") { tree.report(format: :json, full: true) }
    assert_match(/in `_write'/, e.backtrace.first)
    # and the next write of the tree is whole again
    assert_equal whole, tree.report(format: :json, full: true)
    assert_equal n + 1, JSON.parse(whole)["retained"].size
  end

  def test_bad_options
    assert_raises(ArgumentError) { heap.tally.report(format: :pdf) }
    assert_raises(ArgumentError) { heap.report(colour: true) }
    assert_raises(ArgumentError) { heap.tally.report(width: -1) }
    e = assert_raises(Heapscope::UnsupportedError) { heap.report(format: :csv) }
    assert_equal :unsupported, e.status
    assert_raises(Heapscope::NotFoundError) { heap.root_paths(0x10) }
  end
end
