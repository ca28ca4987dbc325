# frozen_string_literal: true

module Heapscope
  # An immutable, loaded heap dump.  Any number of threads may query it.
  class Heap
    LOAD_KEYS = %i[strict values gzip max_line_bytes max_memory max_objects
                   max_references progress].freeze

    # Column names for #column.
    COLUMNS = { address: 1, type: 2, flags: 3, class: 4, memsize: 5, size: 6,
                generation: 7, site: 8, detail: 9, ref_start: 10, refs: 11 }.freeze
    PACK = { 1 => "C*", 2 => "S*", 4 => "L*", 8 => "Q*" }.freeze

    FLAG_NAMES = { 0x0001 => :frozen, 0x0002 => :embedded, 0x0004 => :shared,
                   0x0008 => :fstring, 0x0010 => :old, 0x0020 => :marked,
                   0x0040 => :uncollectible, 0x0080 => :wb_protected,
                   0x0100 => :pinned, 0x0200 => :broken, 0x0400 => :marking,
                   0x0800 => :remembered, 0x1000 => :singleton, 0x2000 => :chilled }.freeze

    class << self
      # Load a heap dump, plain or gzip (detected by its magic bytes).
      #
      # +source+ is a path (String or Pathname), an IO with a file
      # descriptor (File, pipe, socket: read from its current position to
      # EOF, without the GVL), or any object answering #read, e.g. a
      # StringIO (read into memory first).
      #
      # Options: strict: (stop at the first malformed line instead of
      # skipping and counting it), values: (keep String/Symbol values),
      # gzip: false (never inflate), max_line_bytes:, max_memory:,
      # max_objects:, max_references: (limits; LimitError / OutOfMemoryError
      # when hit), progress: (called as progress.call(done_bytes, total_bytes
      # or nil) every few MB; return :cancel to stop with CancelledError).
      #
      # The load runs without the GVL; Thread#raise, Ctrl-C and Timeout
      # stop it within a few megabytes of input.
      def load(source, **opts)
        opts = check_opts(opts)
        if source.is_a?(IO) && fileno_of(source)
          check_unbuffered(source)
          _open_io(source, opts)
        elsif source.respond_to?(:to_path) || source.is_a?(String)
          path = source.respond_to?(:to_path) ? source.to_path : source
          _open_file(path, opts)
        elsif source.respond_to?(:read)
          data = source.read
          raise ArgumentError, "#{source.class}#read returned #{data.class}" unless data.is_a?(String)
          _open_memory(data, opts)
        else
          raise TypeError, "expected a path, an IO or an object with #read, got #{source.class}"
        end
      end

      # Load a heap dump held in a String (plain or gzip bytes).
      def parse(data, **opts)
        _open_memory(String(data), check_opts(opts))
      end

      # Validated load options (used by Heapscope.snapshot and .diff too).
      def check_opts(opts)
        bad = opts.keys - LOAD_KEYS
        raise ArgumentError, "unknown load option#{'s' if bad.size > 1}: #{bad.join(', ')}" unless bad.empty?
        if opts[:progress] && !opts[:progress].respond_to?(:call)
          raise ArgumentError, "progress: must respond to #call"
        end
        opts
      end

      private

      def fileno_of(io)
        io.fileno
      rescue ::IOError, NotImplementedError
        nil
      end

      # Bytes Ruby already buffered from the descriptor would be missed by
      # a read(2) on it.  sysseek refuses buffered IO, which is the test.
      def check_unbuffered(io)
        io.sysseek(0, ::IO::SEEK_CUR)
      rescue Errno::ESPIPE, Errno::EINVAL
        nil
      rescue ::IOError => e
        raise unless e.message.include?("buffered")
        raise ArgumentError, "#{io.inspect} has buffered input; load it before reading from it, " \
                             "or pass a path"
      end
    end

    alias size object_count

    # Overview of the heap as a Hash: :objects, :references, :memsize (sum
    # of memsize), :roots ({ category => records }), :by_type ({ "STRING" =>
    # { count:, memsize: } }, all types), :by_class (the +top+ classes),
    # :dangling_references, :skipped_lines, :skipped ({ reason => count }),
    # :free_slots, :shapes, :gzip, :input_bytes, :bytes, :lines,
    # :load_seconds and :model_bytes (what the library holds for it).
    def summary(top: 20)
      s = stats
      by_type = tally(by: "type", top: nil).to_h { |r| [r.key, { count: r.count, memsize: r.memsize }] }
      by_class = tally(by: "class", top: top).to_h { |r| [r.key, { count: r.count, memsize: r.memsize }] }
      {
        objects: object_count,
        references: reference_count,
        memsize: s[:total_memsize],
        roots: _roots.to_h { |name, records, _t, _d| [name, records] },
        by_type: by_type,
        by_class: by_class,
        dangling_references: s[:dangling_references],
        skipped_lines: s[:skipped_lines],
        skipped: skipped,
        free_slots: s[:free_slots],
        shapes: s[:shapes],
        gzip: s[:gzip],
        input_bytes: s[:input_bytes],
        bytes: s[:bytes],
        lines: s[:lines],
        load_seconds: s[:load_ns] / 1e9,
        model_bytes: s[:model_bytes] + s[:index_bytes],
      }
    end

    # GC root categories: { "vm" => { records:, targets:, dangling: }, ... }
    def roots
      _roots.to_h { |name, records, targets, dangling| [name, { records: records, targets: targets, dangling: dangling }] }
    end

    # Group live objects by +by+ ("type", "class", "file", "file:line",
    # "file:line:class", "method", "generation" or "gem") and return the
    # first +top+ groups (nil: all), by :count or :memsize, as a Tally (an
    # Array of Row).  keep_dumper: false leaves out the objects the dumper
    # allocated (ObjectSpace.dump_all's, Heapscope.snapshot's: the rule of
    # the diff), counted in Tally#excluded_dumper_objects; the default
    # counts every object, as the library does.
    def tally(by: "file:line:class", top: 20, sort: :count, keep_dumper: true)
      native = _tally(by.to_s, top, sort, keep_dumper)
      rows = native.rows.map { |k, c, m| Row.new(k, c, m) }
      count, memsize = native.totals
      Tally.new(rows, by: by.to_s, group_count: native.group_count,
                      total_count: count, total_memsize: memsize,
                      excluded_dumper_objects: native.excluded)
    end

    # The dominator tree (computed once per class_edges: setting, then
    # cached; 16 bytes per object).
    def dominators(class_edges: true)
      @dominators ||= {}
      @dominators[!!class_edges] ||= _dominators(class_edges)
    end

    # The +top+ objects that keep the most memory alive (retained size: the
    # memsize of everything they dominate), largest first.
    def retained(top: 20, class_edges: true)
      dominators(class_edges: class_edges).top(top)
    end

    # Shortest paths from the GC roots to the given objects.  With
    # format: :array (default) an Array of Path; with format: :dot a
    # Graphviz graph as `heapscope root --dot` writes it (targets
    # highlighted; render with dot -Tsvg).
    def root_paths(*addresses, format: :array, class_edges: true)
      addresses = addresses.flatten.map { |a| Heapscope.address(a) }
      raise ArgumentError, "root_paths needs at least one address" if addresses.empty?
      ids = addresses.map do |a|
        _find(a) or raise NotFoundError, "#{Format.hex(a)} is not an object of this heap"
      end
      paths = shortest_paths(class_edges)
      case format.to_sym
      when :array
        addresses.zip(ids).map do |a, id|
          root, chain = paths._path(id)
          Path.new(target: a, root: chain ? (root || "(roots)") : nil,
                   path: chain ? chain.map { |i| _address(i) } : [])
        end
      when :dot then root_paths_dot(ids, paths)
      else raise ArgumentError, "format: must be :array or :dot"
      end
    end

    # The object at +address+ (Integer or "0x..."), or nil.
    def object(address)
      id = _find(Heapscope.address(address)) or return nil
      object_info(id)
    end
    alias [] object

    def include?(address)
      !_find(Heapscope.address(address)).nil?
    end

    # Addresses the object references / the objects that reference it.
    def references(address)
      _refs(id_of(address)).map { |i| _address(i) }
    end

    def referrers(address)
      _referrers(id_of(address)).map { |i| _address(i) }
    end

    # String/Symbol value (needs load(..., values: true)), or nil.
    def value(address)
      _value(id_of(address))
    end

    # A whole model column as an Array of Integers, one per object in dump
    # order (see COLUMNS; :ref_start has object_count + 1 entries).
    def column(name)
      code = COLUMNS.fetch(name.to_sym) { raise ArgumentError, "unknown column #{name.inspect}" }
      data, size = _column(code)
      data.unpack(PACK.fetch(size))
    end

    def inspect
      s = stats
      "#<Heapscope::Heap #{Format.grouped(object_count)} objects, " \
        "#{Format.grouped(reference_count)} references, memsize #{Format.bytes(s[:total_memsize])}, " \
        "model #{Format.bytes(s[:model_bytes] + s[:index_bytes])}>"
    end
    alias to_s inspect

    # internal -------------------------------------------------------------

    def id_of(address) # :nodoc:
      a = Heapscope.address(address)
      _find(a) or raise NotFoundError, "#{Format.hex(a)} is not an object of this heap"
    end

    def object_info(id) # :nodoc:
      addr, type, _klass, detail, memsize, size, gen, file, line, meth, flags, caddr, label = _info(id)
      ObjectInfo.new(address: addr, type: type, class_name: label, detail: detail,
                     memsize: memsize, size: size, generation: gen, file: file,
                     line: line, method: meth,
                     flags: FLAG_NAMES.select { |bit, _| flags & bit != 0 }.values,
                     class_address: caddr.zero? ? nil : caddr,
                     references: _refs(id).map { |i| _address(i) })
    end

    # The name an object goes by (the library's rule, as in every CLI
    # output): a class or module by its own name, any other object by its
    # class.
    def object_label(id) # :nodoc:
      _info(id)[12]
    end

    # "TYPE label" as the CLI prints objects ("CLASS PostsController").
    def label(id) # :nodoc:
      info = _info(id)
      "#{info[1]} #{info[12]}"
    end

    def shortest_paths(class_edges) # :nodoc:
      @paths ||= {}
      @paths[!!class_edges] ||= _paths(class_edges)
    end

    private

    def dot_escape(s)
      s.gsub(/["\\\n\r]/) { |c| c == "\n" || c == "\r" ? "\\n" : "\\#{c}" }
    end

    def dot_node(id, target)
      _a, _t, _k, _d, _m, _s, _g, file, line = _info(id)
      label = +"#{dot_escape(label(id))}\\n#{Format.hex(_address(id))}"
      label << "\\n#{dot_escape(File.basename(file))}:#{line || 0}" if file
      "  n#{id} [label=\"#{label}\"#{target ? ', style=filled, fillcolor="#f4a6a6"' : ''}];\n"
    end

    # As hscope_paths_write() writes DOT (until the gem calls it): each
    # root, object and edge once, every given object highlighted.
    def root_paths_dot(ids, paths)
      out = +"digraph heapscope {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n"
      seen = {}
      edges = {}
      targets = ids.to_h { |id| [id, true] }
      ids.each do |tid|
        root, chain = paths._path(tid)
        next unless chain
        root ||= "(roots)"
        unless seen[[:root, root]]
          seen[[:root, root]] = true
          out << "  \"root:#{dot_escape(root)}\" [shape=ellipse, style=filled, fillcolor=\"#cfe2f3\"];\n"
        end
        chain.each do |id|
          next if seen[id]
          seen[id] = true
          out << dot_node(id, targets[id])
        end
        unless edges[[root, chain[0]]]
          edges[[root, chain[0]]] = true
          out << "  \"root:#{dot_escape(root)}\" -> n#{chain[0]};\n"
        end
        chain.each_cons(2) do |from, to|
          next if edges[[from, to]]
          edges[[from, to]] = true
          fi = _refs(from).index(to)
          out << if fi
                   "  n#{from} -> n#{to} [label=\"[#{fi}]\", fontsize=8];\n"
                 else
                   "  n#{from} -> n#{to} [label=\"class\", fontsize=8, style=dashed];\n"
                 end
        end
      end
      out << "}\n"
    end
  end
end
