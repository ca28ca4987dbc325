# frozen_string_literal: true

require_relative "test_helper"
require "open3"

# Heapscope.timeline, .grew, .histogram and .export: the many-dump
# commands in Ruby, computed and written by the library (point
# 4), on a 3-dump series of the bundled workload with one planted growing
# site (examples/workloads/timeline_series.rb, whose truth.json says what
# Ruby counted in that process).  The planted site is found growing with
# the counts Ruby measured, and every report is the same bytes as the
# `heapscope` command prints for the same dumps and options (the CLI from
# HEAPSCOPE_CLI; those tests skip without it).
class TestTimeline < Minitest::Test
  include InterruptCheck
  WORKLOAD = File.expand_path("../../../examples/workloads/timeline_series.rb", __dir__)

  def self.fixture
    @fixture ||= begin
      out = File.join(Fixtures::DIR, "timeline")
      system(RbConfig.ruby, "--disable-gems", WORKLOAD, "--out", out, "--steps", "3",
             out: File::NULL, err: File::NULL) or raise "examples/workloads/timeline_series.rb failed"
      [(1..3).map { |k| File.join(out, format("step_%02d.json", k)) },
       JSON.parse(File.read(File.join(out, "truth.json")))]
    end
  end

  def setup
    skip "examples/workloads/timeline_series.rb is not here (an installed gem)" unless File.file?(WORKLOAD)
  end

  def steps = self.class.fixture[0]
  def truth = self.class.fixture[1]

  def timeline
    @timeline ||= Heapscope.timeline(steps)
  end

  # The planted site's key by file:line:class.
  def site_key
    "#{truth['growing']['site']}:String"
  end

  def need_cli
    @cli = ENV["HEAPSCOPE_CLI"]
    skip "HEAPSCOPE_CLI not set: nothing to compare with" unless @cli && File.executable?(@cli)
  end

  # stdout and stderr of `heapscope ARGS` (fixed width, a UTF-8 locale
  # unless told, no progress bar).
  def cli(*args, columns: 100, locale: "C.UTF-8")
    need_cli
    out, err, st = Open3.capture3({ "COLUMNS" => columns.to_s, "LC_ALL" => locale }, @cli, args[0],
                                  "--no-progress", *args.drop(1))
    assert st.success?, "heapscope #{args.join(' ')} failed: #{err}"
    [out.force_encoding(Encoding::UTF_8), err]
  end

  def cli_out(*args, **opts)
    cli(*args, **opts)[0]
  end

  # The planted site grows by the workload's R Strings per step: found by
  # the default key (file:line:class) and metric (memsize), ranked first,
  # growing, with the count and memsize Ruby's census measured before each
  # dump; the dumps in step order, holding the objects Ruby counted.
  def test_planted_site_is_growing_with_the_workload_counts
    assert_empty truth["problems"]
    tl = timeline
    assert_equal "file:line:class", tl.by
    assert_equal :memsize, tl.metric
    assert_equal steps, tl.paths
    assert_equal %w[name-time sequence], [tl.order, tl.order_source]
    assert_equal truth["snapshots"].map { |s| s["objects"] }, tl.dumps.map(&:objects)
    site = tl.find { |g| g.key == site_key }
    refute_nil site, "no group #{site_key} in #{tl.first(5).map(&:key)}"
    assert site.growing?
    assert_same site, tl.first
    assert_includes tl.growing, site
    assert_equal truth["growing"]["count_at_step"], site.count
    assert_equal truth["growing"]["memsize_at_step"], site.memsize
    assert_equal site.memsize, site.series
    r = truth["requests_per_step"]
    assert_equal [r, r], site.count.each_cons(2).map { |a, b| b - a }
    assert_in_delta (site.memsize[2] - site.memsize[0]) / 2.0, site.slope_per_step, 0.001
    assert_in_delta 1.0, site.r2, 1e-6
    assert_nil site.slope_per_hour # times are not known from sequence numbers
    refute tl.times_known?
    assert_empty tl.warnings
    assert_empty tl.warning_flags
    # by count the same site leads (R Strings a step)
    by_count = Heapscope.timeline(steps, metric: :count)
    assert_equal site_key, by_count.first.key
    assert_equal r, by_count.first.slope_per_step
  end

  # Every group and dump the Ruby objects give is the JSON's, the same
  # bytes as `heapscope timeline --json` prints.
  def test_accessors_are_the_json_document
    doc = JSON.parse(timeline.report(format: :json, top: nil))
    assert_equal "timeline", doc["kind"]
    assert_equal timeline.group_count, doc["groups"].size
    assert_equal doc["group_count"], timeline.size
    assert_equal doc["growing_count"], timeline.growing.size
    timeline.zip(doc["groups"]).each do |g, j|
      assert_equal [j["key"], j["count"], j["memsize"], j["growing"]], [g.key, g.count, g.memsize, g.growing]
      assert_equal j["slope_per_step"], g.slope_per_step.round(3)
      assert_equal j["r2"], g.r2.round(4)
      assert_equal j["mean"], g.mean.round(3)
      assert_equal j["rise"], g.rise.round(3)
    end
    timeline.dumps.zip(doc["dumps"]).each do |d, j|
      assert_equal [j["path"], j["objects"], j["total"], j["excluded_dumper_objects"], j["excluded_tracer"],
                    j["time"]],
                   [d.path, d.objects, d.total.to_h.transform_keys(&:to_s), d.excluded_dumper_objects,
                    d.excluded_tracer.to_h.transform_keys(&:to_s), d.time]
    end
  end

  # Point 4: the timeline's text, JSON, CSV and SVG are the CLI's, with the
  # CLI's defaults and options.
  def test_reports_equal_the_cli
    assert_equal cli_out("timeline", *steps), timeline.to_s
    json = cli_out("timeline", "--json", *steps)
    assert_equal json, timeline.report(format: :json)
    assert_equal JSON.parse(json), JSON.parse(timeline.report(format: :json))
    assert_equal cli_out("timeline", "--csv", *steps), timeline.report(format: :csv)
    svg = File.join(Fixtures::DIR, "timeline.svg")
    cli("timeline", "--svg", svg, *steps)
    assert_equal File.read(svg, encoding: "UTF-8"), timeline.report(format: :svg)
    assert_equal cli_out("timeline", "--top", "0", "--json", *steps), timeline.report(format: :json, top: nil)
    assert_equal cli_out("timeline", *steps, columns: 60), timeline.report(width: 60)
    assert_equal cli_out("timeline", *steps, locale: "C"), timeline.report(ascii: true)
    # other options: the key, the metric, the order (backwards: the CLI
    # says so on stderr), the dumper's objects
    rev = steps.reverse
    given = Heapscope.timeline(rev, by: "type", metric: :count, order: :given)
    assert_equal rev, given.paths
    assert_equal [:backwards], given.warning_flags
    assert_equal cli_out("timeline", "--by", "type", "--metric", "count", "--order", "given", "--top", "5", *rev),
                 given.report(top: 5, warnings: false)
    assert_equal cli_out("timeline", "--json", "--keep-dumper", "--by", "class", *steps),
                 Heapscope.timeline(steps, by: :class, keep_dumper: true).report(format: :json)
  end

  # The series checks say it when the dumps are no series (the same dump
  # twice): the warning as a Symbol (as Diff#warning_flags), its message,
  # and the text with its "warning:" lines is the CLI's stderr + stdout.
  def test_warnings_as_the_cli_says_them
    paths = [steps[0], steps[0], steps[1]]
    tl = Heapscope.timeline(paths, order: :given)
    assert_equal [:repeated], tl.warning_flags
    out, err = cli("timeline", "--order", "given", *paths)
    warned = err.lines.map { |l| l.delete_prefix("heapscope: ") }
    assert_equal warned.map { |l| l.delete_prefix("warning: ").chomp }, tl.warnings
    assert_match(/same/, tl.warnings.join)
    assert_equal warned.join + out, tl.to_s
    assert_equal out, tl.report(warnings: false)
    doc = JSON.parse(tl.report(format: :json))
    assert_equal [["repeated", tl.warnings[0]]], doc["warnings"].map { |w| [w["code"], w["message"]] }
  end

  # diff --grew: a timeline of the dumps in the order given, ranked by the
  # change of the metric (memsize by default, as timeline; count asked
  # for here); the planted site first, its change and deltas the
  # workload's.
  def test_grew_equals_diff_grew
    assert_equal :memsize, Heapscope.grew(steps.first(2)).metric
    assert_equal cli_out("diff", "--grew", *steps.first(2)), Heapscope.grew(steps.first(2)).to_s
    grew = Heapscope.grew(steps, metric: :count)
    assert grew.grew?
    assert_equal :count, grew.metric
    assert_equal site_key, grew.first.key
    r = truth["requests_per_step"]
    assert_equal [r, r], grew.first.deltas
    assert_equal 2 * r, grew.first.change
    assert_equal cli_out("diff", "--grew", "--metric", "count", *steps), grew.to_s
    json = cli_out("diff", "--grew", "--metric", "count", "--json", *steps)
    assert_equal json, grew.report(format: :json)
    doc = JSON.parse(json)
    assert_equal "grew", doc["kind"]
    doc["groups"].each_with_index do |j, i|
      assert_equal [j["key"], j["change"], j["deltas"]], [grew[i].key, grew[i].change, grew[i].deltas]
    end
    assert_equal cli_out("diff", "--grew", "--by", "class", "--top", "5", "--keep-dumper", *steps.first(2)),
                 Heapscope.grew(steps.first(2), by: "class", keep_dumper: true).report(top: 5)
  end

  # histogram: a tally of one dump by type, folded from the file, with
  # bars; its JSON is the tally document; its SVG is `--svg FILE`'s.
  def test_histogram_equals_the_cli
    last = steps[2]
    h = Heapscope.histogram(last)
    assert_kind_of Heapscope::Tally, h
    assert_equal "type", h.by
    # the timeline leaves out Ruby's allocation tracer as the histogram
    # does, unless keep_tracer:, as `heapscope timeline` and `heapscope
    # histogram`; what it leaves out is the dump's tracer record
    tracer = File.foreach(last).map { |l| JSON.parse(l) }
                 .select { |r| r["type"] == "DATA" && r["struct"] == "ObjectTracing/allocation_info_tracer" }
    assert_equal 1, tracer.size
    assert_equal timeline.dumps[2].total.to_a, h.total.to_a
    assert_equal [1, tracer[0]["memsize"]], timeline.dumps[2].excluded_tracer.to_a
    kept = Heapscope.timeline(steps, keep_tracer: true)
    assert_equal kept.dumps[2].total.to_a, Heapscope.histogram(last, keep_tracer: true).total.to_a
    assert_equal [0, 0], kept.dumps[2].excluded_tracer.to_a
    assert_equal cli_out("timeline", "--keep-tracer", "--json", *steps), kept.report(format: :json)
    assert_equal [h.total.count + 1, h.total.memsize + tracer[0]["memsize"]], kept.dumps[2].total.to_a
    grew = Heapscope.grew(steps, by: "class", keep_tracer: true)
    assert_equal cli_out("diff", "--grew", "--by", "class", "--keep-tracer", *steps), grew.to_s
    assert_includes grew.map(&:key), "<allocation tracer>"
    refute_includes Heapscope.grew(steps, by: "class").map(&:key), "<allocation tracer>"
    # with the dumper's objects and the tracer: what ObjectSpace.count_objects
    # said before the dump
    all = Heapscope.histogram(last, top: nil, keep_dumper: true, keep_tracer: true)
    assert_equal truth["snapshots"][2]["by_type"], all.to_a.to_h { |r| [r.key, r.count] }
    assert_equal cli_out("histogram", last), h.to_s
    assert_match(/ #+$/, h.to_s.lines[1])
    assert_equal cli_out("histogram", "--json", last), h.report(format: :json)
    svg = File.join(Fixtures::DIR, "histogram.svg")
    cli("histogram", "--svg", svg, last)
    assert_equal File.read(svg, encoding: "UTF-8"), h.report(format: :svg)
    assert_equal cli_out("histogram", "--by", "class", "--sort", "count", "--top", "5", "--keep-dumper", last),
                 Heapscope.histogram(last, by: "class", sort: :count, top: 5, keep_dumper: true).to_s
    assert_equal cli_out("histogram", "--top", "0", "--json", last), Heapscope.histogram(last, top: nil).report(format: :json)
  end

  # export: the same files as `heapscope export` (written into the same
  # directory one after the other), and the same account of them.
  def test_export_writes_the_cli_files
    %i[csv jsonl].each do |format|
      dir = File.join(Fixtures::DIR, "export-#{format}")
      ours = "#{dir}.ruby"
      ex = Heapscope.export(steps.reverse, dir: dir, format: format, first_id: 7)
      assert_equal steps, ex.paths # time order, whatever the order given
      assert_equal format, ex.format
      assert_equal %W[dumps.#{format} objects.#{format} refs.#{format} roots.#{format} schema.sql schema.duckdb.sql],
                   ex.files
      assert_equal timeline.dumps.sum(&:objects), ex.objects
      assert_equal [7, 8, 9], ex.to_h[:dumps].map { |d| d[:dump_id] }
      File.rename(dir, ours)
      out, err = cli("export", "--format", format.to_s, "--out", dir, "--first-id", "7", *steps.reverse)
      assert_equal "", out
      assert_equal err.delete_prefix("heapscope: "), ex.to_s
      assert_equal ex.files.sort, Dir.children(dir).sort
      ex.files.each do |f|
        assert_equal File.binread(File.join(dir, f)), File.binread(File.join(ours, f)), "#{format}: #{f}"
      end
      assert_equal cli_out("export", "--json", "--format", format.to_s, "--out", dir, "--first-id", "7",
                           *steps.reverse),
                   ex.report(format: :json)
      lines = File.readlines(File.join(ours, "objects.#{format}"))
      assert_equal ex.objects + (format == :csv ? 1 : 0), lines.size
    end
  end

  # The fold runs without the GVL: Thread#raise stops it through the
  # unblock function (the progress hook sees the flag) in a fraction of the
  # time the whole fold takes.  The paths are the call's own copies, pinned
  # while it runs: a compaction in the middle (from the progress proc)
  # changes nothing.
  def test_interrupt_and_compaction
    paths = steps * 20
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    whole = Heapscope.timeline(paths, order: :given, threads: 1).report(format: :json, top: nil)
    full = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
    assert_interrupt_stops(full, "fold") { Heapscope.timeline(paths, order: :given, threads: 1) }
    skip "no GC.compact" unless GC.respond_to?(:compact)
    compacted = 0
    tl = Heapscope.timeline(paths.map(&:dup), order: :given,
                            progress: ->(_d, _t) { GC.compact if (compacted += 1) % 20 == 1 })
    assert_operator compacted, :>, 1
    assert_equal whole, tl.report(format: :json, top: nil)
  end

  def test_progress_and_errors
    calls = []
    tl = Heapscope.timeline(steps, progress: ->(done, total) { calls << [done, total] })
    assert_equal timeline.to_s, tl.to_s
    refute_empty calls
    assert_equal steps.sum { |s| File.size(s) }, calls.last[1]
    assert_raises(Heapscope::CancelledError) { Heapscope.timeline(steps, progress: ->(_d, _t) { :cancel }) }
    e = assert_raises(RuntimeError) { Heapscope.timeline(steps, progress: ->(_d, _t) { raise "stop" }) }
    assert_equal "stop", e.message
    assert_raises(ArgumentError) { Heapscope.timeline(steps, threads: 2, progress: ->(*) {}) }
    assert_raises(ArgumentError) { Heapscope.timeline(steps, metric: :bytes) }
    assert_raises(ArgumentError) { Heapscope.timeline(steps, order: :random) }
    assert_raises(ArgumentError) { Heapscope.timeline([]) }
    assert_raises(ArgumentError) { Heapscope.timeline(steps, min_dumps: 1) }
    assert_raises(ArgumentError) { Heapscope.timeline(steps, bogus: 1) }
    assert_raises(Heapscope::UnsupportedError) { Heapscope.timeline(steps, by: "nosuch") }
    assert_raises(Heapscope::IOError) { Heapscope.timeline([File.join(Fixtures::DIR, "missing.json")]) }
    assert_raises(Heapscope::UnsupportedError) { timeline.report(format: :dot) }
    assert_raises(ArgumentError) { Heapscope.export(steps, dir: Fixtures::DIR, format: :xml) }
    assert_raises(ArgumentError) { Heapscope.export(steps, dir: Fixtures::DIR, first_id: 0) }
    assert_raises(Heapscope::IOError) { Heapscope.histogram(File.join(Fixtures::DIR, "missing.json")) }
  end
end
