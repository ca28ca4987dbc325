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

    # Addresses of the leaked objects (all, or the first +limit+).
    def addresses(limit = nil)
      _addresses(limit)
    end

    # Group the leaked objects by a tally key ("class", "file:line:class",
    # ...): a Tally of Group, each with count, memsize and addresses.
    def groups(by: "class", top: nil, sort: :count)
      native = _tally(by.to_s, top, sort)
      rows = native.rows.each_with_index.map { |(k, c, m), i| Group.new(native, i, k, c, m) }
      count, memsize = native.totals
      Tally.new(rows, by: by.to_s, group_count: native.group_count,
                      total_count: count, total_memsize: memsize)
    end

    # What keeps the leaked objects alive, most leaked memory first: for
    # each leaked object, the first object up its dominator chain that did
    # not leak itself, grouped, with a shortest path from a GC root.
    # An Array of Suspect (the first +top+; nil: all).
    def suspects(top: 10, class_edges: true)
      h = heap
      tree = h.dominators(class_edges: class_edges)
      rows = tree._diff_holders(self)
      rows = rows.first(top) if top
      paths = h.shortest_paths(class_edges)
      rows.map do |id, root, count, memsize|
        if id.nil?
          next Suspect.new(address: nil, type: "ROOT", class_name: nil, label: "ROOT", file: nil, line: nil,
                           retained: nil, leaked_count: count, leaked_memsize: memsize,
                           root: root || "(roots)", path: [])
        end
        addr, type, _k, _d, _m, _s, _g, file, line, _me, _f, _c, name = h._info(id)
        proot, chain = paths._path(id)
        Suspect.new(address: addr, type: type, class_name: name, label: "#{type} #{name}",
                    file: file, line: line, retained: tree._retained(id)&.first,
                    leaked_count: count, leaked_memsize: memsize,
                    root: chain ? (proot || "(roots)") : nil,
                    path: chain ? chain.map { |i| h._address(i) } : [])
      end
    end

    # The one-screen report of `heapscope suspects`.
    def report(top: 10, class_edges: true)
      out = +"leaked: #{Format.grouped(count)} objects, #{Format.bytes(memsize)} " \
             "(new in B since A, still alive in C)\n"
      warnings.each { |w| out << "warning: #{w}\n" }
      all = suspects(top: nil, class_edges: class_edges)
      shown = top ? all.first(top) : all
      out << "\nwhat holds them, most leaked memory first:\n"
      shown.each_with_index { |s, i| out << "\n#{i + 1}. #{s}\n" }
      out << "\n... #{all.size - shown.size} more holders\n" if all.size > shown.size
      out
    end

    def inspect
      s = +"#<Heapscope::Diff #{Format.grouped(count)} leaked objects, #{Format.bytes(memsize)}"
      s << " (snapshots: #{snapshot_objects.reject(&:zero?).map { |n| Format.grouped(n) }.join(' / ')} objects)"
      s << "; warnings: #{warning_flags.join(', ')}" unless warning_bits.zero?
      s << ">"
    end
    alias to_s inspect
  end

  # The dominator tree of a heap (Heap#dominators).  X dominates Y when
  # every path from the GC roots to Y passes through X; X's retained size
  # is what would be freed without X.
  class DominatorTree
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
    # (String) when a root category dominates it directly, or nil.
    def dominator(address)
      id, root = _idom(heap.id_of(address))
      return nil if id.nil? && root.nil?
      id ? heap._address(id) : root
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

    def inspect
      t = totals
      "#<Heapscope::DominatorTree #{Format.grouped(t[:reachable])} reachable objects " \
        "(#{Format.bytes(t[:reachable_memsize])}), #{Format.grouped(t[:unreachable])} unreachable>"
    end

    private

    def retained_row(id)
      h = heap
      addr, type, _k, _d, memsize, _s, _g, file, line, _me, _f, _c, name = h._info(id)
      bytes, count = _retained(id)
      Retained.new(address: addr, type: type, class_name: name, label: "#{type} #{name}",
                   memsize: memsize, retained: bytes, retained_count: count,
                   file: file, line: line)
    end
  end

  class << self
    # Diff two or three snapshots: objects present in +b+, absent from +a+
    # and (with +c+) still present in +c+.  Snapshots are Heap objects or
    # dump paths; with paths only the last dump is loaded and the others
    # are streamed past it, so three large dumps cost about one.
    #
    # address_only: compares addresses only (classic heapleak);
    # keep_dumper: keeps objects ObjectSpace.dump_all itself allocated.
    # Load options (strict:, max_memory:, progress: ...) apply to paths.
    def diff(a, b, c = nil, address_only: false, keep_dumper: false, **load)
      snaps = [a, b, c].compact
      if snaps.all? { |s| s.is_a?(Heap) }
        raise ArgumentError, "load options apply to paths only" unless load.empty?
        return Diff._compute(a, b, c, address_only, keep_dumper)
      end
      if snaps.none? { |s| s.is_a?(Heap) }
        paths = [a, b, c].map { |s| s.nil? ? nil : path_of(s) }
        return Diff._files(*paths, Heap.check_opts(load), address_only, keep_dumper)
      end
      heaps = [a, b, c].map { |s| s.nil? || s.is_a?(Heap) ? s : Heap.load(s, **load) }
      Diff._compute(*heaps, address_only, keep_dumper)
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
