# frozen_string_literal: true

module Heapscope
  # The result of Heapscope.check: dumps checked against a memory budget
  # (docs/BUDGET.md), as `heapscope check --budget` checks them, so that a
  # Rake task or a test can run a budget without the CLI.
  class Check
    SCOPES = { 1 => :total, 2 => :leaked, 3 => :class, 4 => :gem, 5 => :site,
               6 => :leaked_class, 7 => :leaked_site }.freeze
    METRICS = { 1 => :objects, 2 => :memsize, 3 => :retained }.freeze

    # One rule of the budget, in its order: scope (:total, :leaked, :class,
    # :gem, :site, :leaked_class, :leaked_site), metric (:objects, :memsize, :retained), key (the group;
    # nil for total and leaked), line (in the budget), limit, actual (same
    # unit), over (actual > limit), found (false: a group the dump does not
    # have, actual 0).
    Rule = Struct.new(:scope, :metric, :key, :line, :limit, :actual, :over, :found) do
      alias_method :over?, :over
      alias_method :found?, :found
    end

    attr_reader :rules, :count, :memsize, :excluded, :warnings, :paths

    # Ruby's allocation tracer left out of the totals (unless keep_tracer:):
    # a Total (count, memsize), the JSON's "excluded_tracer".
    attr_reader :excluded_tracer

    def initialize(native, paths) # :nodoc:
      over, rules, totals, warnings, @text, @json = native
      @over = over
      @rules = rules.map do |s, m, k, line, limit, actual, o, f|
        Rule.new(SCOPES.fetch(s, s), METRICS.fetch(m, m), k, line, limit, actual, o, f).freeze
      end.freeze
      @count, @memsize, @excluded, tn, tm = totals
      @excluded_tracer = Total.new(tn, tm)
      @warnings = warnings.lines.map(&:chomp).freeze
      @paths = paths.freeze
    end

    # :pass when every rule is within budget, else :over (the library's
    # verdict; `heapscope check` exits 0 or 1 on it).
    def verdict
      @over.zero? ? :pass : :over
    end

    def ok?
      @over.zero?
    end

    # The rules over budget.
    def over
      rules.select(&:over?)
    end

    # The check as the library writes it: format: :text (`heapscope check`'s
    # output) or :json (kind "check", docs/JSON.md).
    def report(format: :text)
      case format.to_sym
      when :text then @text
      when :json then @json
      else raise ArgumentError, "format: must be :text or :json, not #{format.inspect}"
      end
    end

    def to_h
      @to_h ||= Report.parse(@json)
    end

    def to_s
      report
    end

    def inspect
      "#<Heapscope::Check #{verdict}: #{@over} of #{rules.size} rules over budget>"
    end
  end

  class << self
    # Check dumps against a memory budget (docs/BUDGET.md): +budget+ is the
    # path of a budget file (String or Pathname), or the budget's text
    # itself (a String with a newline); +dumps+ one dump, or three (A B C in
    # time order) when the budget has [leaked] rules.  keep_dumper: count
    # the dumper's own objects too; keep_tracer: Ruby's allocation tracer
    # too (left out by default, as `heapscope check`; a
    # class."<allocation tracer>" rule measures it either way).  Returns a Heapscope::Check (verdict,
    # rules); raises Heapscope::ParseError for a bad budget.
    def check(budget, *dumps, keep_dumper: false, keep_tracer: false)
      raise ArgumentError, "no dump given" if dumps.empty?
      paths = dumps.flatten.map { |d| path_of(d) }
      if budget.is_a?(String) && budget.include?("\n")
        text = budget
        name = "budget"
      else
        name = path_of(budget)
        text = File.binread(name)
      end
      Check.new(Native._check(text, name, paths, keep_dumper, keep_tracer), paths)
    end

    private

    # Export one dump as a gzipped pprof profile (Heapscope.export(...,
    # format: :pprof)): returns the path written.
    def export_pprof(paths, out, time, load)
      raise ArgumentError, "format: :pprof takes no load options (#{load.keys.join(', ')})" unless load.empty?
      paths = paths_of(paths)
      raise ArgumentError, "format: :pprof takes one dump, not #{paths.size}" unless paths.size == 1
      raise ArgumentError, "format: :pprof needs out: FILE" if out.nil?
      out = path_of(out)
      Native._export_pprof(paths[0], out, time_ns(time, paths[0]))
      out
    end

    # A Time, epoch seconds (Numeric) or nil (the dump file's mtime).
    def time_ns(time, path)
      t = time.nil? ? File.mtime(path) : time
      t = Time.at(t) if t.is_a?(Numeric)
      raise ArgumentError, "time: must be a Time or epoch seconds, not #{time.inspect}" unless t.is_a?(Time)
      t.to_i * 1_000_000_000 + t.nsec
    end
  end
end
