# frozen_string_literal: true

module Heapscope
  # What a heap could shrink by (docs/WASTE.md): duplicate strings, empty
  # Arrays/Hashes/Strings and oversized buffers, as places to change
  # (file:line or gem), biggest saving first, each with a suggested fix.
  # Made by Heapscope.waste(path) (the dump streamed) or Heap#waste.
  #
  #   waste = Heapscope.waste("heap.json.gz")
  #   puts waste                          # the text report (no values)
  #   waste.rows.first                    # => #<Row app/models/user.rb:12 duplicate ...>
  #   waste.report(format: :json)         # the JSON document
  #
  # Values are printed by #report and #to_s only with values: true;
  # Value#value gives them to a program that asks.
  class Waste
    WARNINGS = { 0x1 => :skipped, 0x2 => :no_tracing, 0x4 => :no_values, 0x8 => :collisions,
                 0x10 => :changed }.freeze
    FORMATS = { text: 1, json: 2 }.freeze

    # One place to change: key ("file:line" or gem), kind (:duplicate,
    # :empty, :oversized), type ("STRING", "ARRAY", "HASH"), count (objects
    # the fix changes: copies that would go, empty or oversized objects),
    # saving (bytes), memsize (of all those objects), copies / frozen /
    # fstring (duplicates), buffer / used (oversized), fix (a sentence that
    # works at the place), values (duplicates: RowValue, biggest saving here
    # first), fix_kind (:untraced, :ruby, :stdlib, :gem, :literal, :intern,
    # :intern_or_literal, :lazy, :resize; docs/WASTE.md) and chilled
    # (duplicates: copies that are chilled string literals, Ruby 3.4+).
    Row = Struct.new(:key, :kind, :type, :count, :saving, :memsize, :copies, :frozen, :fstring,
                     :buffer, :used, :fix, :values, :fix_kind, :chilled) do
      def to_s
        "#{key} #{kind} #{type}: #{Format.grouped(count)}, saves #{Format.bytes(saving)}"
      end

      def inspect
        "#<Heapscope::Waste::Row #{self}>"
      end
    end

    # A duplicated value: digest (the 16 hex digits of its XXH3 hash, as in
    # the JSON), length (bytes), count (copies), memsize (theirs), saving
    # (all copies but the largest), frozen, fstring and sites (Site, most
    # copies first).  #value is the value itself; #to_s and #inspect show
    # only its length and digest.
    Value = Struct.new(:digest, :length, :value, :count, :memsize, :saving, :frozen, :fstring,
                       :sites) do
      def to_s
        "#{Format.bytes(length)} ##{digest[0, 8]} x#{Format.grouped(count)}, saves " \
          "#{Format.bytes(saving)}"
      end

      def inspect
        "#<Heapscope::Waste::Value #{self}>"
      end
    end

    # Copies of a value at one place, and the saving counted there.
    Site = Struct.new(:key, :count, :saving)
    # A value of a duplicate row: the Value, and its copies and saving there.
    RowValue = Struct.new(:value, :count, :saving) do
      def inspect
        "#<Heapscope::Waste::RowValue #{value} here: x#{count}, saves #{Format.bytes(saving)}>"
      end
    end

    # Counts as a Hash: objects, memsize (the heap), count and saving (all
    # findings), duplicate_/empty_/oversized_count and _saving,
    # duplicate_values, duplicate_copies, shared_/no_value_/truncated_count
    # and _memsize (not compared), collision_count, excluded, untraced,
    # group_count, dump_objects, excluded_tracer and
    # excluded_tracer_memsize (Ruby's allocation tracer left out).
    def totals
      @totals ||= _totals.reject { |k, _| k == :warnings }.freeze
    end

    # Bytes recoverable, and their share of the heap's memsize (0.0-1.0).
    def recoverable
      totals[:saving]
    end

    def share
      totals[:memsize].zero? ? 0.0 : totals[:saving].fdiv(totals[:memsize])
    end

    # :skipped, :no_tracing, :no_values, :collisions, :changed
    def warnings
      bits = _totals[:warnings]
      WARNINGS.select { |bit, _| bits & bit != 0 }.values
    end

    def values
      @values ||= _values.map do |d, len, bytes, count, memsize, saving, frozen, fstring, sites|
        Value.new(format("%016x", d), len, bytes, count, memsize, saving, frozen, fstring,
                  sites.map { |k, c, s| Site.new(k, c, s) }.freeze).freeze
      end.freeze
    end

    # Every place to change, biggest saving first.
    def rows
      @rows ||= _rows.map do |key, kind, type, count, saving, memsize, copies, frozen, fstring,
                                buffer, used, fix, vals, fix_kind, chilled|
        Row.new(key, kind, type, count, saving, memsize, copies, frozen, fstring, buffer, used,
                fix, vals.map { |i, c, s| RowValue.new(values[i], c, s) }.freeze, fix_kind,
                chilled).freeze
      end.freeze
    end

    def duplicates
      rows.select { |r| r.kind == :duplicate }
    end

    def empty
      rows.select { |r| r.kind == :empty }
    end

    def oversized
      rows.select { |r| r.kind == :oversized }
    end

    # The library's report: format: :text or :json; values: true prints
    # the values themselves; top: rows per list (nil or 0: all); width:
    # text columns (default 100); ascii: no UTF-8 in the text; pretty:
    # indented JSON; name: the dump's name to print.
    def report(format: :text, values: false, top: 20, width: nil, ascii: false, pretty: false,
               name: nil)
      f = FORMATS.fetch(format.to_sym) { raise ArgumentError, "format: must be :text or :json" }
      flags = (values ? 0x4 : 0) | (pretty ? 0x2 : 0) | (ascii ? 0x8 : 0)
      _report(f, flags, top.to_i, width, name&.to_s)
    end

    def to_s
      report
    end

    def inspect
      "#<Heapscope::Waste #{Format.bytes(recoverable)} recoverable " \
        "(#{format('%.1f', share * 100)}% of #{Format.bytes(totals[:memsize])}), " \
        "#{totals[:group_count]} places>"
    end
  end

  class Heap
    # What this heap could shrink by (see Waste).  Duplicates need the
    # values: load with values: true (otherwise Waste#warnings has
    # :no_values and there are none).  by: "file:line" or :gem;
    # keep_dumper: keep the dumper's own objects; keep_tracer: keep Ruby's
    # allocation tracer (left out of the heap's total by default, as
    # `heapscope waste`); ratio:, min_slack: the oversized thresholds (4,
    # 256 bytes).
    def waste(by: "file:line", keep_dumper: false, keep_tracer: false, ratio: nil, min_slack: nil)
      _waste(by.to_s, keep_dumper, keep_tracer, ratio, min_slack)
    end
  end

  class << self
    # What the dump at +path+ could shrink by, streamed (never loaded whole;
    # the file is read twice at most, so it must be a file, not a pipe).
    # Load options (strict:, max_memory:, progress: ...) apply.
    def waste(path, by: "file:line", keep_dumper: false, keep_tracer: false, ratio: nil,
              min_slack: nil, **load)
      path = path.to_path if path.respond_to?(:to_path)
      Waste._file(path, Heap.check_opts(load), by.to_s, keep_dumper, keep_tracer, ratio, min_slack)
    end
  end
end
