# frozen_string_literal: true

require "json"

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
          _open_io(source, opts).tap { |h| h._path = source.to_path if source.respond_to?(:to_path) }
        elsif source.respond_to?(:to_path) || source.is_a?(String)
          path = source.respond_to?(:to_path) ? source.to_path : source
          _open_file(path, opts).tap { |h| h._path = path }
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

    # The path the heap was loaded from, as given (what reports print as
    # the dump's name, the CLI's argument), or nil (an IO without a path,
    # a String, a snapshot).
    attr_reader :path

    def _path=(path) # :nodoc:
      @path = path.to_s.dup.freeze
    end

    # What the heap holds, as `heapscope summary` prints it: objects and
    # memsize, references, ROOT categories, dangling references, skipped
    # lines, count and memsize per type and the +top+ classes (nil: all),
    # load figures.  format: :text (default) or :json (kind "summary",
    # docs/JSON.md; all classes and indented, as `summary --json`).  See
    # Heapscope::Report for the other options.
    def report(format: :text, top: (format.to_sym == :json ? nil : 20),
               pretty: format.to_sym == :json, **opts)
      _write_summary(Report.options(opts, format: format, top: top, pretty: pretty, names: [path]))
    end

    # The summary text (#report).
    def to_s
      report
    end

    # The summary as a Hash: `heapscope summary --json` parsed, with
    # symbol keys (docs/JSON.md): :total ({ count:, memsize: }),
    # :references, :roots, :dangling, :skipped_lines, :skipped, :by_type
    # and :by_class ({ by:, group_count:, groups: [{ key:, count:,
    # memsize: }] }), :load, :warnings, ...; :by_class has the +top+
    # classes (nil: all).
    def summary(top: nil)
      Report.parse(report(format: :json, top: top))
    end

    # heapy's generation view, as `heapscope generations` prints it: live
    # objects per allocation generation with their +top+ file:line:class
    # groups.  format: :text (default) or :json; see Heapscope::Report.
    def generations(format: :text, top: 5, **opts)
      _write_generations(Report.options(opts, format: format, top: top, names: [path]))
    end

    # Everything about some objects, as `heapscope show` prints it (the
    # dump's record lines are not kept by a heap: no "record"): type,
    # class, memsize, allocation site, flags, the first +top+ references
    # and referrers (JSON: all).  values: true also prints String values
    # (the heap must have been loaded with values: true).  An address that
    # is not an object of the heap is left out of the text (JSON: "found":
    # false).  format: :text (default) or :json (indented, as `show
    # --json`); see Heapscope::Report.
    def show(*addresses, format: :text, top: 20, values: false,
             pretty: format.to_sym == :json, **opts)
      addresses = addresses.flatten.map { |a| Heapscope.address(a) }
      raise ArgumentError, "show needs at least one address" if addresses.empty?
      _write_objects(addresses, Report.options(opts, format: format, top: top, values: values,
                                                     pretty: pretty, names: [path]))
    end

    # GC root categories: { "vm" => { records:, targets:, dangling: }, ... }
    def roots
      _roots.to_h { |name, records, targets, dangling| [name, { records: records, targets: targets, dangling: dangling }] }
    end

    # Group live objects by +by+ ("type", "class", "file", "file:line",
    # "file:line:class", "method", "generation" or "gem") and return the
    # first +top+ groups (nil: all), by :count or :memsize, as a Tally (an
    # Array of Row) whose to_s is what `heapscope tally` prints.
    # keep_dumper: false leaves out the objects the dumper allocated
    # (ObjectSpace.dump_all's, Heapscope.snapshot's: the rule of the diff
    # and of `heapscope tally`), counted in Tally#excluded_dumper_objects;
    # the default counts every object (`heapscope tally --keep-dumper`).
    # keep_tracer: true keeps Ruby's allocation tracer (the table
    # trace_object_allocations keeps, labelled <allocation tracer>), which
    # is left out by default as in `heapscope tally`.
    def tally(by: "file:line:class", top: 20, sort: :count, keep_dumper: true, keep_tracer: false)
      native = _tally(by.to_s, top, sort, keep_dumper, keep_tracer)
      rows = native.rows.map { |k, c, m| Row.new(k, c, m) }
      Tally.new(native, rows, source: self, top: top, names: [path])
    end

    # The dominator tree (computed once per class_edges: setting, then
    # cached; 16 bytes per object).
    def dominators(class_edges: true)
      @dominators ||= {}
      @dominators[!!class_edges] ||= _dominators(class_edges)
    end

    # The +top+ objects that keep the most memory alive (retained size: the
    # memsize of everything they dominate), largest first: a RetainedList
    # of Retained, whose to_s is what `heapscope retained` prints.  With
    # by: a tally key, what each group keeps alive instead (each object
    # counted once, under its topmost dominator of the same group), the
    # +top+ groups by +sort+: a Tally (`heapscope retained --by`).
    # keep_tracer: true keeps Ruby's allocation tracer, left out by default
    # as in `heapscope retained`.
    def retained(top: 20, by: nil, sort: :memsize, class_edges: true, keep_tracer: false)
      tree = dominators(class_edges: class_edges)
      if by
        native = tree._tally(by.to_s, top, sort, keep_tracer)
        rows = native.rows.map { |k, c, m| Row.new(k, c, m) }
        return Tally.new(native, rows, source: tree, top: top, names: [path])
      end
      RetainedList.new(tree.top(top), tree, top, keep_tracer: keep_tracer)
    end

    # Shortest paths from the GC roots to the given objects (Integers or
    # "0x..." Strings), as `heapscope root` finds them.  format: :array
    # (default): an Array of Path, +max_paths+ per object (the shortest
    # first, then one through each other referrer); :text, :json or :dot
    # (a Graphviz graph: every object and edge once, the targets
    # highlighted; render with dot -Tsvg): the library's output, as
    # `heapscope root [--json | --dot] [--max-paths N]` prints it.  See
    # Heapscope::Report for the other options.
    def root_paths(*addresses, format: :array, max_paths: 1, class_edges: true, **opts)
      addresses = addresses.flatten.map { |a| Heapscope.address(a) }
      raise ArgumentError, "root_paths needs at least one address" if addresses.empty?
      ids = addresses.map { |a| id_of(a) }
      array = format.to_sym == :array
      opts = Report.options(opts, format: array ? :json : format, max_paths: max_paths,
                                  names: [path])
      out = shortest_paths(class_edges)._write(ids, opts)
      array ? Report.parse(out)[:paths].map { |p| Path.from_json(p) } : out
    end

    # root_paths(..., format: :dot): the Graphviz graph of the paths.
    def dot(*addresses, **opts)
      root_paths(*addresses, **opts, format: :dot)
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
      "#<Heapscope::Heap #{path || '(no path)'}: #{object_count} objects, " \
        "#{reference_count} references>"
    end

    # internal -------------------------------------------------------------

    def id_of(address) # :nodoc:
      a = Heapscope.address(address)
      _find(a) or raise NotFoundError, "#{Format.hex(a)} is not an object of this heap"
    end

    def object_info(id) # :nodoc:
      addr, type, klass, detail, memsize, size, gen, file, line, meth, flags, caddr, label = _info(id)
      ObjectInfo.new(address: addr, type: type, class_name: klass, label: label, detail: detail,
                     memsize: memsize, size: size, generation: gen, file: file,
                     line: line, method: meth,
                     flags: FLAG_NAMES.select { |bit, _| flags & bit != 0 }.values,
                     class_address: caddr.zero? ? nil : caddr,
                     references: _refs(id).map { |i| _address(i) })
    end

    def shortest_paths(class_edges) # :nodoc:
      @paths ||= {}
      @paths[!!class_edges] ||= _paths(class_edges)
    end
  end
end
