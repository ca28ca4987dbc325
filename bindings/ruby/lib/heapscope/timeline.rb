# frozen_string_literal: true

module Heapscope
  # What grows over time (docs/TIMELINE.md): each dump folded into totals
  # per group without building its graph, the dumps put in time order, and
  # per group its series (count and memsize in every dump), a
  # least-squares line, R² and the growing verdict.  Made by
  # Heapscope.timeline (`heapscope timeline`) and Heapscope.grew (`heapscope
  # diff --grew`).  Enumerable over its groups (Group), ranked: the growing
  # ones first.
  #
  #   tl = Heapscope.timeline(Dir["/tmp/desk-tl/step_*.json"])
  #   puts tl                                  # `heapscope timeline`
  #   tl.growing.map(&:key)                    # => ["app/receipts.rb:12:String"]
  #   tl.first.count                           # => [300, 400, 500]: one value per dump
  #   tl.report(format: :json)                 # `heapscope timeline --json`
  class Timeline
    include Enumerable

    # The library's codes (HSCOPE_METRIC_*, HSCOPE_ORDER_*, HSCOPE_TIMELINE_*).
    METRICS = { memsize: 1, count: 2 }.freeze
    ORDERS = { auto: 0, name: 1, mtime: 2, given: 3 }.freeze
    KEEP_DUMPER = 0x1
    GREW = 0x2
    KEEP_TRACER = 0x4

    # A dump, in time order: +path+ as given, +objects+ (every object of
    # the dump), +total+ (a Total: the objects in the groups, the dumper's
    # left out unless keep_dumper:, and their memsize),
    # +excluded_dumper_objects+, +excluded_tracer+ (a Total: Ruby's
    # allocation tracer left out unless keep_tracer:), +time+ (a Time in UTC
    # when the order knows times, else nil) and +given+ (its index among the
    # paths given).  As the JSON's "dumps".
    Dump = Struct.new(:path, :objects, :total, :excluded_dumper_objects, :excluded_tracer, :time,
                      :given, keyword_init: true)

    # A group: +key+, +count+ and +memsize+ (one value per dump, in time
    # order; 0 where the group is absent), and the fit of the timeline's
    # metric: +slope_per_step+ (nil with one dump), +slope_per_hour+ (nil
    # unless the times are known), +r2+ (nil with one dump), +mean+, +rise+
    # (the fitted rise over the series), +growing+ (the verdict).  As the
    # JSON's "groups" (decimals: Floats, to the thousandth; R² to the
    # millionth).
    Group = Struct.new(:key, :count, :memsize, :slope_per_step, :slope_per_hour, :r2, :mean,
                       :rise, :growing, :metric, keyword_init: true) do
      alias_method :growing?, :growing

      # The series that was fitted: +count+ or +memsize+ (the timeline's
      # metric).
      def series
        metric == :count ? count : memsize
      end

      # The last value of the series minus the first (the grew view's
      # "change").
      def change
        series.last - series.first
      end

      # The change from each dump to the next (the grew view's "deltas").
      def deltas
        series.each_cons(2).map { |a, b| b - a }
      end

      def inspect
        "#<Heapscope::Timeline::Group #{key} #{metric} #{series.first}..#{series.last}" \
          "#{' growing' if growing}>"
      end
    end

    # Groups (Group), ranked: growing first, then by slope x R², the last
    # value, the key (the grew view: by the change, largest first).
    def each(&block)
      return enum_for(:each) { group_count } unless block
      group_count.times { |g| yield self[g] }
      self
    end

    # Group +g+ (0-based rank), or nil.
    def [](g)
      g += group_count if g.negative?
      return nil if g.negative? || g >= group_count
      (@groups ||= {})[g] ||= begin
        key, count, memsize, step, hour, r2, mean, rise, growing = _group(g)
        Group.new(key: key, count: count.freeze, memsize: memsize.freeze,
                  slope_per_step: milli(step), slope_per_hour: milli(hour),
                  r2: r2 && r2 / 1_000_000.0, mean: milli(mean), rise: milli(rise),
                  growing: growing, metric: metric).freeze
      end
    end

    alias size group_count

    def to_a
      each.to_a
    end

    # The growing groups (they come first).
    def growing
      Array.new(growing_count) { |g| self[g] }
    end

    # The dumps (Dump), in time order.
    def dumps
      @dumps ||= Array.new(dump_count) do |i|
        path, given, ms, count, memsize, excluded, objects, tn, tm = _dump(i)
        Dump.new(path: path, objects: objects, total: Total.new(count, memsize),
                 excluded_dumper_objects: excluded, excluded_tracer: Total.new(tn, tm),
                 time: ms && Time.at(ms / 1000r).utc,
                 given: given).freeze
      end.freeze
    end

    # The dumps' paths, in time order.
    def paths
      dumps.map(&:path)
    end

    # true for the grew view (Heapscope.grew: `diff --grew`).
    def grew?
      @grew ? true : false
    end

    # What makes the answer less than exact: the damaged dumps, then the
    # series checks (the same dump twice, dumps of different processes, an
    # order that runs backwards); the messages, as the JSON's "warnings"
    # and the text's "warning: ..." lines say them ([] when none).
    def warnings
      @warnings ||= Report.parse(report(format: :json, top: 1))[:warnings]
                          .map { |w| w[:message].freeze }.freeze
    end

    # The same as Symbols, as Diff#warning_flags: :skipped (a damaged dump),
    # :repeated, :different_process, :backwards.
    def warning_flags
      Diff::WARNINGS.select { |bit, _| warning_bits & bit != 0 }.values
    end

    # The timeline written by the library, as `heapscope timeline` (the
    # grew view: `heapscope diff --grew`) prints it: format: :text
    # (default: a table with a trend per group), :json (kind "timeline" or
    # "grew", docs/JSON.md), :csv (one row per group and dump) or :svg (the
    # series of the first min(top, 12) groups: `--svg FILE`); top: groups
    # (default 20; nil or 0: all).  See Heapscope::Report for the other
    # options (width:, ascii:, pretty:, warnings:, io:).
    def report(format: :text, top: 20, **opts)
      _write(Report.options(opts, format: format, top: top))
    end

    def to_s
      report
    end

    def inspect
      "#<Heapscope::Timeline#{' (grew)' if grew?} #{dump_count} dump" \
        "#{'s' unless dump_count == 1} by #{by}, metric #{metric}: #{group_count} groups, " \
        "#{growing_count} growing>"
    end

    def _grew! # :nodoc:
      @grew = true
      self
    end

    private

    def milli(v)
      v && v / 1000.0
    end
  end

  # Heapscope.histogram: the tally of one dump folded from the file, by
  # type (or any key), largest memsize first, written as bars (`heapscope
  # histogram`).  A Tally: its rows, totals and JSON (kind "tally") are a
  # tally's; its text has a bar per row, and format: :svg is the bar chart
  # of `histogram --svg FILE`.
  class Histogram < Tally
    # format: :text (default: the table with a bar per row), :json (the
    # tally document), :csv or :svg (the bar chart); see Heapscope::Report.
    def report(format: :text, **opts)
      @native._write(Report.options(opts, format: format, top: @top, names: @names, bars: true))
    end

    def inspect
      "#<Heapscope::Histogram\n#{report}>"
    end
  end

  # What Heapscope.export wrote (`heapscope export`): the dumps as tables
  # for PostgreSQL and DuckDB in +dir+.
  class Export
    FORMATS = { csv: 3, jsonl: 8 }.freeze # HSCOPE_FORMAT_CSV, _JSONL

    # The directory written, as given, and the format (:csv or :jsonl).
    attr_reader :dir, :format

    # The dumps' paths in time order (dump_id first_id, first_id + 1, ...).
    def paths
      @paths ||= Array.new(dump_count) { |i| _dump_path(i).freeze }.freeze
    end

    # Objects and references written, over all dumps.
    def objects
      _totals[0]
    end

    def references
      _totals[1]
    end

    # The files written in dir: the four tables, schema.sql and
    # schema.duckdb.sql.
    def files
      to_h[:files]
    end

    # The damaged dumps, as messages ([] when none).
    def warnings
      to_h[:warnings].map { |w| w[:message] }
    end

    # `heapscope export --json` parsed (symbol keys): :dumps (with their
    # :dump_id), :format, :directory, :order, :objects, :references,
    # :files, :warnings.
    def to_h
      @to_h ||= Report.parse(report(format: :json))
    end

    # What was written, by the library: format: :text (the one line `heapscope
    # export` prints on standard error, without its "heapscope: ") or
    # :json (kind "export", `export --json`).  See Heapscope::Report.
    def report(format: :text, **opts)
      _write(Report.options(opts, format: format))
    end

    def to_s
      report
    end

    def inspect
      "#<Heapscope::Export #{report.chomp}>"
    end

    def _set(dir, format) # :nodoc:
      @dir = dir.dup.freeze
      @format = format
      self
    end
  end

  class << self
    # What grows over time in the dumps +paths+ (any number, in any order:
    # they are put in time order by +order+): a Timeline, the library's
    # `heapscope timeline`, with its defaults.
    #
    # by: a tally key ("file:line:class", the default; "type", "class",
    # "gem" ...); metric: :memsize (default) or :count, the series fitted and
    # ranked; order: :auto (a date-time, epoch or sequence number in every
    # file name, else the files' mtimes, else as given), :name, :mtime or
    # :given; keep_dumper: true keeps the objects the dumper allocated (left
    # out and counted by default, as the CLI); keep_tracer: true keeps Ruby's
    # allocation tracer (left out and counted by default, as the CLI: its
    # table grows with every traced allocation); threads: dumps folded at once
    # (default: one per core); min_dumps: dumps a growing group needs
    # (default 3).  Load options (strict:, max_memory:, progress: ...)
    # apply to each dump; with progress: the dumps are folded one at a time.
    # Runs without the GVL; Ctrl-C and Thread#raise stop it.
    def timeline(paths, by: "file:line:class", metric: :memsize, order: :auto, keep_dumper: false,
                 keep_tracer: false, threads: nil, min_dumps: nil, **load)
      flags = (keep_dumper ? Timeline::KEEP_DUMPER : 0) | (keep_tracer ? Timeline::KEEP_TRACER : 0)
      timeline_of(paths, by, metric, order, flags, threads, min_dumps, load)
    end

    # heapy's "grew" view, `heapscope diff --grew`: per group the value in
    # each dump (in the order given) and the change, largest growth first.
    # A Timeline of the dumps in the order given, ranked by the change of
    # the metric (:memsize by default, as Heapscope.timeline and the report;
    # :count for objects) from the first dump to the last; its report is
    # kind "grew" (Group#change and #deltas are the JSON's).
    def grew(paths, by: "file:line:class", metric: :memsize, keep_dumper: false, keep_tracer: false,
             threads: nil, **load)
      flags = Timeline::GREW | (keep_dumper ? Timeline::KEEP_DUMPER : 0) |
              (keep_tracer ? Timeline::KEEP_TRACER : 0)
      timeline_of(paths, by, metric, :given, flags, threads, nil, load)._grew!
    end

    # Memsize and object count per type (or any tally key) of the dump at
    # +path+, folded without building its graph, largest first by +sort+
    # (:memsize, the default, or :count), the first +top+ (nil: all): a
    # Histogram, whose text is `heapscope histogram`'s bars.  keep_dumper:
    # and the load options as in Heapscope.timeline.
    def histogram(path, by: "type", top: 20, sort: :memsize, keep_dumper: false, keep_tracer: false,
                  **load)
      path = path_of(path)
      native = Native::Tally._file(path, Heap.check_opts(load), by.to_s, top, sort, keep_dumper,
                                   keep_tracer)
      rows = native.rows.map { |k, c, m| Row.new(k, c, m) }
      Histogram.new(native, rows, source: nil, top: top, names: [path])
    end

    # Write the dumps +paths+ as tables for PostgreSQL and DuckDB into the
    # directory +dir+ (created if missing; files replaced), as `heapscope
    # export`: dumps, objects, refs and roots (format: :csv, the default,
    # or :jsonl), schema.sql and schema.duckdb.sql; one dump loaded at a
    # time, string values never exported.  order: as in Heapscope.timeline
    # (the dump ids' order); first_id: the first dump's id (default 1).
    # Returns an Export (what was written).
    #
    # format: :pprof writes one dump as a gzipped pprof profile (as
    # `heapscope export --format pprof`) to out: FILE, for go tool pprof and
    # continuous profilers; time: when the dump was taken (a Time or epoch
    # seconds; default the file's mtime).  Returns the path written.
    def export(paths, dir: nil, format: :csv, order: :auto, first_id: nil, out: nil, time: nil, **load)
      return export_pprof(paths, out, time, load) if format.to_sym == :pprof
      raise ArgumentError, "out: and time: are for format: :pprof" if out || time
      raise ArgumentError, "missing keyword: :dir" if dir.nil?
      code = Export::FORMATS.fetch(format.to_sym) do
        raise ArgumentError, "format: must be :csv, :jsonl or :pprof, not #{format.inspect}"
      end
      check_int(:first_id, first_id, 1, 1_000_000_000)
      dir = path_of(dir)
      Export._files(paths_of(paths), dir, Heap.check_opts(load), code, order_code(order),
                    first_id)._set(dir, format.to_sym)
    end

    private

    def timeline_of(paths, by, metric, order, flags, threads, min_dumps, load)
      m = Timeline::METRICS.fetch(metric.to_sym) do
        raise ArgumentError, "metric: must be :memsize or :count, not #{metric.inspect}"
      end
      check_int(:threads, threads, 1, 64)
      check_int(:min_dumps, min_dumps, 2, 1_000_000)
      Timeline._compute(paths_of(paths), Heap.check_opts(load), by.to_s, m, order_code(order),
                        flags, threads, min_dumps)
    end

    # nil, or an Integer from min to max
    def check_int(name, value, min, max)
      return if value.nil? || (value.is_a?(Integer) && value.between?(min, max))
      raise ArgumentError, "#{name}: must be an Integer from #{min} to #{max}, not #{value.inspect}"
    end

    def order_code(order)
      Timeline::ORDERS.fetch(order.to_sym) do
        raise ArgumentError, "order: must be :auto, :name, :mtime or :given, not #{order.inspect}"
      end
    end

    def paths_of(paths)
      paths = Array(paths).map { |p| path_of(p) }
      raise ArgumentError, "no dump given" if paths.empty?
      paths
    end
  end
end
