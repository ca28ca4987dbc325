# frozen_string_literal: true

require "heapscope"

module Heapscope
  # The leak check behind `assert_no_leaks` (heapscope/minitest) and
  # `expect { }.not_to leak_memory` (heapscope/rspec): Heapscope.find_leaks
  # (the block runs, a snapshot follows, three times; what the second run
  # allocated and the third left alive has leaked), then thresholds and an
  # allow-list over the leaked objects grouped by allocation site.
  #
  #   check = Heapscope::LeakCheck.new(objects: 10, per: :site, allow: { gem: "i18n" })
  #   result = check.run { handle_request }
  #   puts result.message if result.leaked?
  class LeakCheck
    PER = %i[total site class file gem].freeze
    ALLOW_KEYS = %i[class file gem].freeze

    # One allocation site of leaked objects ("file:line:class").
    Site = Struct.new(:key, :file, :line, :class_name, :gem, :count, :memsize, :sample)

    # The outcome of LeakCheck#run.
    class Result
      # The Diff of the three snapshots.
      attr_reader :diff
      # Leaked sites the allow-list let pass / that count (Arrays of Site).
      attr_reader :allowed, :counted
      # The counted sites of the groups that exceeded the thresholds, most
      # memory first ([] when the check passed).
      attr_reader :offenders

      def initialize(check, diff, allowed, counted, offenders, runs)
        @check = check
        @runs = runs
        @diff = diff
        @allowed = allowed
        @counted = counted
        @offenders = offenders
      end

      def leaked?
        !@offenders.empty?
      end

      # Counted objects and bytes (the allow-list's left out).
      def count
        @counted.sum(&:count)
      end

      def memsize
        @counted.sum(&:memsize)
      end

      # What a failing test prints: the limits, the leaking sites with
      # counts, and for the biggest one of its objects with a path from a
      # GC root, each step labelled.
      def message(top: 10)
        return "no leaks beyond #{@check.limits}" unless leaked?
        n = @offenders.sum(&:count)
        out = +"leaked #{LeakCheck.objects(n)} (#{Format.bytes(@offenders.sum(&:memsize))}), " \
               "more than #{@check.limits}: "
        out << if @runs
                 "allocated by the block's run #{@runs - 1} of #{@runs}, still alive after the last\n"
               else
                 "new in the second snapshot, still alive in the third\n"
               end
        out << format("%12s %12s  %s\n", "count", "memsize", "file:line:class")
        @offenders.first(top).each { |s| out << format("%12d %12d  %s\n", s.count, s.memsize, s.key) }
        out << "  ... #{@offenders.size - top} more sites\n" if @offenders.size > top
        unless @allowed.empty?
          out << "(allowed: #{LeakCheck.objects(@allowed.sum(&:count))} in #{@allowed.size} " \
                 "site#{'s' unless @allowed.size == 1})\n"
        end
        out << path_text(@offenders.first)
      end

      alias to_s message

      def inspect
        "#<Heapscope::LeakCheck::Result #{leaked? ? "leaked #{LeakCheck.objects(@offenders.sum(&:count))}" : 'no leaks'}>"
      end

      private

      def path_text(site)
        heap = @diff.heap
        head = "biggest: #{site.key}, e.g. #{Format.hex(site.sample)}"
        path = heap.root_paths(site.sample).first
        unless path.reachable?
          return "#{head}, which no path from a GC root reaches (held by a finalizer, " \
                 "or a stale word on a machine stack)\n"
        end
        out = +"#{head}, reached from GC root #{path.root}:\n"
        path.path.each_with_index { |ref, i| out << "  #{i.zero? ? '  ' : '->'} #{step(heap, ref)}\n" }
        out
      end

      # A step of the path: the object as the library names it (an
      # ObjectRef: type and label) and its allocation site.
      def step(heap, ref)
        obj = heap.object(ref.address)
        s = +"#{Format.hex(ref.address)} #{ref.type} #{ref.label}"
        s << " (allocated at #{obj.site})" if obj.file
        s
      end
    end

    attr_reader :objects, :bytes, :per, :allow, :warmup, :fork

    # "1 object", "1,234 objects".
    def self.objects(n)
      "#{Format.grouped(n)} object#{'s' unless n == 1}"
    end

    # objects:, bytes:  how many leaked objects / bytes pass (both nil:
    #                   objects: 0; one nil: no limit on it)
    # per:              where the limits apply: :total (all counted leaked
    #                   objects together), :site (each file:line:class),
    #                   :class, :file or :gem
    # allow:            what never counts: { class: ..., file: ..., gem: ... },
    #                   each a String, Regexp, Module (class:) or an Array
    #                   of them; a file String matches a path that starts or
    #                   ends with it, a gem String the gem's name (with or
    #                   without its version)
    # warmup:           runs of the block before the first snapshot (1)
    # fork:             take the snapshots from a fork (Heapscope.snapshot)
    def initialize(objects: nil, bytes: nil, per: :total, allow: {}, warmup: 1, fork: false)
      @objects = objects.nil? && bytes.nil? ? 0 : objects
      @bytes = bytes
      [[:objects, @objects], [:bytes, @bytes]].each do |name, v|
        next if v.nil? || (v.is_a?(Integer) && v >= 0)
        raise ArgumentError, "#{name}: must be nil or an Integer >= 0, not #{v.inspect}"
      end
      @per = per.to_sym
      raise ArgumentError, "per: must be one of #{PER.join(', ')}, not #{per.inspect}" unless PER.include?(@per)
      @allow = normalize_allow(allow)
      raise ArgumentError, "warmup: must be an Integer >= 1" unless warmup.is_a?(Integer) && warmup >= 1
      @warmup = warmup
      @fork = fork
    end

    # "0 objects in total", "10 objects or 4096 bytes per file:line:class".
    def limits
      parts = []
      parts << LeakCheck.objects(@objects) if @objects
      parts << "#{Format.grouped(@bytes)} bytes" if @bytes
      "#{parts.join(' or ')} #{@per == :total ? 'in total' : "per #{@per == :site ? 'file:line:class' : @per}"}"
    end

    # Run the block (warmup + 2 times) and check what it leaked.
    def run
      raise ArgumentError, "a leak check needs a block" unless block_given?
      runs = 0
      diff = Heapscope.find_leaks(fork: @fork) do
        (runs.zero? ? @warmup : 1).times { yield }
        runs += 1
      end
      check(diff, runs: @warmup + 2)
    end

    # Check a Diff made elsewhere (Heapscope.find_leaks, or Heapscope.diff
    # of three dumps) against the limits and the allow-list.
    def check(diff, runs: nil)
      sites = sites_of(diff)
      allowed, counted = sites.partition { |s| allowed?(s) }
      Result.new(self, diff, allowed, counted, offenders(counted), runs)
    end

    private

    def normalize_allow(allow)
      raise ArgumentError, "allow: must be a Hash" unless allow.is_a?(Hash)
      bad = allow.keys.map(&:to_sym) - ALLOW_KEYS
      raise ArgumentError, "allow: keys are #{ALLOW_KEYS.join(', ')}; not #{bad.join(', ')}" unless bad.empty?
      allow.to_h do |k, v|
        list = Array(v)
        list.each do |m|
          next if m.is_a?(String) || m.is_a?(Regexp) || (k.to_sym == :class && m.is_a?(Module))
          raise ArgumentError, "allow: #{k}: takes Strings, Regexps#{k.to_sym == :class ? ' or Modules' : ''}, " \
                               "not #{m.inspect}"
        end
        [k.to_sym, list]
      end
    end

    # The leaked objects by file:line:class, with each site's gem.
    def sites_of(diff)
      groups = diff.groups(by: "file:line:class", top: nil)
      gem_of = {}
      diff.groups(by: "gem", top: nil).each { |g| g.addresses.each { |a| gem_of[a] = g.key } }
      groups.map do |g|
        file, line, klass = g.key.match(/\A(.*):(\d+):(.*)\z/m)&.captures || [g.key, "0", ""]
        sample = g.addresses(1).first
        Site.new(g.key, file, Integer(line), klass, gem_of[sample], g.count, g.memsize, sample)
      end
    end

    def allowed?(site)
      @allow.any? do |kind, list|
        list.any? do |m|
          case kind
          when :class then m.is_a?(Module) ? m.name == site.class_name : match?(m, site.class_name)
          when :file then m.is_a?(Regexp) ? m.match?(site.file) : site.file.start_with?(m) || site.file.end_with?(m)
          when :gem then gem?(m, site.gem)
          end
        end
      end
    end

    def match?(pattern, text)
      pattern.is_a?(Regexp) ? pattern.match?(text) : pattern == text
    end

    def gem?(pattern, gem)
      return false if gem.nil?
      return pattern.match?(gem) if pattern.is_a?(Regexp)
      gem == pattern || gem.match?(/\A#{Regexp.escape(pattern)}-\d/)
    end

    # Counted sites of the groups (by +per+) over the limits, most memory
    # first.
    def offenders(counted)
      by = counted.group_by do |s|
        case @per
        when :total then :total
        when :site then s.key
        when :class then s.class_name
        when :file then s.file
        when :gem then s.gem
        end
      end
      over = by.values.select do |sites|
        (@objects && sites.sum(&:count) > @objects) || (@bytes && sites.sum(&:memsize) > @bytes)
      end
      over.flatten.sort_by { |s| [-s.memsize, -s.count, s.key] }
    end
  end
end
