# frozen_string_literal: true

module Heapscope
  # Objects born between snapshots and still alive: present in B, absent
  # from A and still present in C (with two snapshots: new in B).  Made by
  # Heapscope.diff; its objects belong to #heap (C, or B).
  class Diff
    WARNINGS = { 0x1 => :no_tracing, 0x2 => :partial, 0x4 => :compaction, 0x8 => :skipped,
                 0x10 => :different_process, 0x20 => :repeated, 0x40 => :backwards }.freeze

    # Human explanations of why the answer may be inexact (no allocation
    # tracing, partial dumps, compaction, skipped lines) or meaningless
    # (the dumps are not one process's in time order: the same dump twice,
    # dumps of different processes, reverse order); [] when none.
    def warnings
      (warning_text || "").split("\n")
    end

    # The same as Symbols (:no_tracing, :partial, :compaction, :skipped,
    # :different_process, :repeated, :backwards).
    def warning_flags
      WARNINGS.select { |bit, _| warning_bits & bit != 0 }.values
    end

    # The leaked objects and their memsize (count, memsize), a Total: the
    # JSON's "leaked".
    def leaked
      Total.new(count, memsize)
    end

    # Objects left out as the dumper's own (the JSON's name for #excluded).
    def excluded_dumper_objects
      excluded
    end

    # Ruby's allocation tracer left out of the leaked objects (unless
    # keep_tracer:): a Total (count, memsize), the JSON's "excluded_tracer".
    def excluded_tracer
      Total.new(*_excluded_tracer)
    end

    # Addresses of the leaked objects (all, or the first +limit+).
    def addresses(limit = nil)
      _addresses(limit)
    end

    # The names of the dumps (A, B[, C]) as reports print them: the paths
    # as given, or the loaded heaps' paths (nil for a heap without one).
    def names
      @names ||= []
    end

    def _names=(names) # :nodoc:
      @names = names.map { |n| n&.to_s&.dup&.freeze }.freeze
    end

    # Group the leaked objects by a tally key ("file:line:class", the
    # default, "class", "gem", ...): a Tally of Group, each with count,
    # memsize and addresses, the first +top+ (nil: all) by :count or
    # :memsize.  Its to_s is what `heapscope diff --by KEY --top N` prints.
    def groups(by: "file:line:class", top: nil, sort: :count)
      native = _tally(by.to_s, top, sort)
      rows = native.rows.each_with_index.map { |(k, c, m), i| Group.new(native, i, k, c, m) }
      Tally.new(native, rows, source: self, top: top, names: names)
    end

    # What keeps the leaked objects alive, most leaked memory first: for
    # each leaked object, the first object up its dominator chain that did
    # not leak itself, grouped, with a shortest path from a GC root.
    # An Array of Suspect (the first +top+; nil: all), as `heapscope
    # suspects --json` lists them.
    def suspects(top: 10, class_edges: true)
      Report.parse(report(format: :json, top: top, class_edges: class_edges))[:suspects]
            .map { |h| Suspect.from_json(h) }
    end

    # The one-screen answer to "what holds my leak", as `heapscope
    # suspects` prints it: the leaked totals, then the +top+ holders (nil:
    # all), each with a path from a GC root, every step labelled.  format:
    # :text (default) or :json (kind "suspects"); see Heapscope::Report.
    def report(format: :text, top: 10, class_edges: true, **opts)
      @suspects ||= {}
      s = (@suspects[!!class_edges] ||= _suspects(class_edges))
      s._write(Report.options(opts, format: format, top: top, names: names))
    end

    # The diff as `heapscope diff` prints it: the dumps, the leaked
    # objects and the 20 largest file:line:class groups with three
    # addresses each (groups(...).report for other keys and formats).
    def to_s
      groups(top: 20).report
    end

    def inspect
      "#<Heapscope::Diff\n#{self}>"
    end
  end

  # The dominator tree of a heap (Heap#dominators).  X dominates Y when
  # every path from the GC roots to Y passes through X; X's retained size
  # is what would be freed without X.
  class DominatorTree
    # The tree as `heapscope dominators [ADDR]` prints it: without an
    # address, below each ROOT category and the super-root "(roots)" the
    # +top+ children by retained size, +depth+ levels deep; with an
    # address, its dominator chain and its subtree.  format: :text
    # (default), :json (kind "dominators"; full: true adds every reachable
    # object's immediate dominator and retained size) or :folded
    # (flame-graph stacks of the whole tree).  See Heapscope::Report.
    def report(address = nil, format: :text, top: 10, depth: 2, full: false, **opts)
      focus = address.nil? ? nil : heap.id_of(address)
      _write(focus, Report.options(opts, format: format, top: top, depth: [depth, 1].max,
                                         addresses: full, names: [heap.path]))
    end

    def to_s
      report
    end

    # The +n+ objects with the largest retained size, as Retained rows.
    def top(n = 20)
      _top(n).map { |id| retained_row(id) }
    end

    # Retained size in bytes of the object at +address+ (nil: unreachable).
    def retained_size(address)
      _retained(heap.id_of(address))&.first
    end

    # Number of objects the object at +address+ keeps alive (incl. itself).
    def retained_count(address)
      _retained(heap.id_of(address))&.last
    end

    # The immediate dominator: an address, or the root category's name
    # (String) when a root category dominates it directly, "(roots)" when
    # several do together, or nil when no root reaches the object.
    def dominator(address)
      idom = _idom(heap.id_of(address))
      return nil if idom.nil?
      id, root = idom
      id ? heap._address(id) : root || "(roots)"
    end

    # Dominator chain from the top down to the object: addresses.
    def chain(address)
      _root, ids = _chain(heap.id_of(address))
      ids ? ids.map { |i| heap._address(i) } : []
    end

    # Holders of a set of objects (addresses): the first object up each
    # one's dominator chain that is not itself in the set, grouped.
    # [{ address:, root:, count:, memsize: }, ...], largest first.
    def holders(addresses)
      ids = addresses.map { |a| heap.id_of(a) }.sort.uniq
      _holders(ids).map do |id, root, count, memsize|
        { address: id && heap._address(id), root: root, count: count, memsize: memsize }
      end
    end

    # Addresses of objects no GC root reaches (first +limit+; nil: all).
    def unreachable(limit = 100)
      _unreachable(limit).map { |i| heap._address(i) }
    end

    # { reachable: Total, unreachable: Total }: objects and memsize no
    # root reaches / some root reaches (as "reachable" and "unreachable"
    # in the JSON).
    def totals
      r, rm, u, um = _totals
      { reachable: Total.new(r, rm), unreachable: Total.new(u, um) }
    end

    def inspect
      "#<Heapscope::DominatorTree #{report(top: 1, depth: 1).lines.first.chomp}>"
    end

    private

    def retained_row(id)
      h = heap
      addr, type, klass, _d, memsize, _s, _g, file, line, _me, _f, _c, label = h._info(id)
      bytes, count = _retained(id)
      Retained.new(address: addr, type: type, class_name: klass, label: label, memsize: memsize,
                   retained: Total.new(count, bytes), file: file, line: line)
    end
  end

  class << self
    # Diff two or three snapshots: objects present in +b+, absent from +a+
    # and (with +c+) still present in +c+.  Snapshots are Heap objects or
    # dump paths; with paths only the last dump is loaded and the others
    # are streamed past it, so three large dumps cost about one.
    #
    # address_only: compares addresses only (classic heapleak);
    # keep_dumper: keeps objects ObjectSpace.dump_all itself allocated;
    # keep_tracer: keeps Ruby's allocation tracer (left out and counted by
    # default, as `heapscope diff`: Diff#excluded_tracer).  Load options
    # (strict:, max_memory:, progress: ...) apply to paths.
    def diff(a, b, c = nil, address_only: false, keep_dumper: false, keep_tracer: false, **load)
      snaps = [a, b, c].compact
      if snaps.all? { |s| s.is_a?(Heap) }
        raise ArgumentError, "load options apply to paths only" unless load.empty?
        return Diff._compute(a, b, c, address_only, keep_dumper, keep_tracer)
                   .tap { |d| d._names = snaps.map(&:path) }
      end
      if snaps.none? { |s| s.is_a?(Heap) }
        paths = [a, b, c].map { |s| s.nil? ? nil : path_of(s) }
        diff = Diff._files(*paths, Heap.check_opts(load), address_only, keep_dumper, keep_tracer)
        diff.heap._path = paths.compact.last
        diff._names = paths.compact
        return diff
      end
      heaps = [a, b, c].map { |s| s.nil? || s.is_a?(Heap) ? s : Heap.load(s, **load) }
      Diff._compute(*heaps, address_only, keep_dumper, keep_tracer)
        .tap { |d| d._names = heaps.compact.map(&:path) }
    end

    # What holds the objects that leaked between the snapshots (see
    # Diff#suspects): Heapscope.suspects(a, b, c).
    def suspects(a, b, c = nil, top: 10, class_edges: true, **opts)
      diff(a, b, c, **opts).suspects(top: top, class_edges: class_edges)
    end

    private

    def path_of(s)
      return s.to_path if s.respond_to?(:to_path)
      return s if s.is_a?(String)
      raise TypeError, "expected a Heapscope::Heap or a path, got #{s.class}"
    end
  end
end
