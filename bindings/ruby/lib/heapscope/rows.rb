# frozen_string_literal: true

module Heapscope
  # Raised for every failure the library reports.  Subclasses name the
  # status (ParseError, NotADumpError, IOError, LimitError, ...); the message
  # is the library's own, e.g. "line 12, column 80 (byte 4311): ...".
  class Error < StandardError
    # Symbol of the library status (:parse, :io, :limit, ...).
    attr_reader :status
    # The C name of the status, e.g. "HSCOPE_ERR_PARSE".
    attr_reader :status_name
    # 1-based input line of a parse error, or nil.
    attr_reader :line
    # Byte offset (uncompressed) of a parse error, or nil.
    attr_reader :offset
    # errno of an IO error, or nil.
    attr_reader :errno
  end

  # Numbers in LeakCheck's sentences, Waste's and ObjectInfo#inspect, in
  # the library's own formats (hscope_format_bytes, hscope_format_count):
  # the same text as the reports and the CLI print.  Reports (every to_s
  # and inspect of a result) are written by the library, not with these.
  module Format # :nodoc:
    module_function

    # 1234567 -> "1,234,567"; a negative number with "-" before it, as the
    # library writes a change.
    def grouped(n)
      n = n.to_i
      n.negative? ? "-#{Native.format_count(-n)}" : Native.format_count(n)
    end

    # 1536 -> "1.5 KB"; -2048 -> "-2.0 KB"
    def bytes(n)
      Native.format_bytes(n.to_i)
    end

    def hex(address)
      address.nil? ? "nil" : format("0x%x", address)
    end
  end

  # Turn an Integer or a String "0x7f..." (hex with 0x, as the dump writes
  # it; spaces around it are fine) into an Integer address.  A String
  # without 0x (a decimal number, bare hex digits) is an ArgumentError:
  # "4096" is not read as 0x4096.
  def self.address(value)
    case value
    when Integer then value
    when String
      s = value.strip
      unless s.match?(/\A0x\h{1,16}\z/i)
        raise ArgumentError, "not an address: #{value.inspect} (addresses are hex with 0x, " \
                             "as in the dump: 0x7f2a3c4d5e60)"
      end
      Integer(s)
    else
      raise ArgumentError, "not an address: #{value.inspect}"
    end
  end

  # A number of objects and their memsize, as the JSON's {"count",
  # "memsize"} totals (Tally#total, Suspect#leaked, Retained#retained, ...).
  Total = Struct.new(:count, :memsize)

  # An object as every report names it (the JSON's object reference):
  # +class_name+ is the JSON's "class" (the class label: "Class" for a
  # class), +label+ what a user reads (a class or module by its own name,
  # any other object by its class).
  ObjectRef = Struct.new(:address, :type, :class_name, :label, keyword_init: true) do
    def self.from_json(h) # :nodoc:
      new(address: Report.address(h[:address]), type: h[:type], class_name: h[:class],
          label: h[:label])
    end
  end

  # One group of a tally: a key, how many live objects it has and the sum of
  # their memsize.
  Row = Struct.new(:key, :count, :memsize)

  # One group of a diff: like Row, plus the addresses of its leaked objects
  # (from the heap of the last snapshot).
  class Group
    attr_reader :key, :count, :memsize

    def initialize(native, index, key, count, memsize)
      @native = native
      @index = index
      @key = key
      @count = count
      @memsize = memsize
    end

    # Addresses of the group's objects (all, or the first +limit+).
    def addresses(limit = nil)
      @native._row_addresses(@index, limit)
    end

    def to_h
      { key: key, count: count, memsize: memsize }
    end

    def inspect
      "#<Heapscope::Group key=#{key.inspect} count=#{count} memsize=#{memsize}>"
    end

    def ==(other)
      other.is_a?(Group) && to_h == other.to_h
    end
  end

  # Rows of a result (Tally, RetainedList): Enumerable, indexable, and
  # deliberately not an Array, so that `puts result` prints the report (the
  # library's text, header included) rather than one row per line.
  class Rows
    include Enumerable

    def initialize(rows) # :nodoc:
      @rows = rows.freeze
    end

    def each(&block)
      return enum_for(:each) { size } unless block
      @rows.each(&block)
      self
    end

    def [](*args)
      @rows[*args]
    end

    def size
      @rows.size
    end
    alias length size

    def empty?
      @rows.empty?
    end

    def last(*args)
      @rows.last(*args)
    end

    # The rows as an Array.
    def to_a
      @rows.dup
    end

    def to_s
      report
    end

    def pretty_print(q)
      q.text(inspect)
    end
  end

  # The rows of a tally, largest first: Row (or Group, for a diff) objects,
  # with the totals over all groups.  to_s, inspect and #report are the
  # library's: for Heap#tally what `heapscope tally` prints, for
  # Diff#groups what `heapscope diff` prints, for Heap#retained(by:) what
  # `heapscope retained --by` prints.
  class Tally < Rows
    # The grouping key ("class", "file:line:class", ...).
    attr_reader :by
    # Distinct groups before top: was applied.
    attr_reader :group_count
    # Objects and memsize over all groups (before top:), a Total.
    attr_reader :total
    # Objects left out as the dumper's own (Heap#tally keep_dumper: false).
    attr_reader :excluded_dumper_objects

    def initialize(native, rows, source:, top:, names:) # :nodoc:
      super(rows)
      @native = native
      @source = source
      @top = top
      @names = names
      @by = native.by
      @group_count = native.group_count
      @total = Total.new(*native.totals)
      @excluded_dumper_objects = native.excluded
    end

    # Deprecated (0.1 names): total.count and total.memsize.
    def total_count
      total.count
    end

    def total_memsize
      total.memsize
    end

    # The tally written by the library: format: :text (default), :json or
    # :csv; addresses: true lists every member of a diff's groups (text
    # without it: three each).  See Heapscope::Report for the other
    # options.
    def report(format: :text, addresses: false, **opts)
      opts = Report.options(opts, format: format, addresses: addresses, top: @top, names: @names)
      @source.is_a?(Diff) ? @source._write(@native, opts) : @native._write(opts)
    end

    def inspect
      "#<Heapscope::Tally\n#{report}>"
    end
  end

  # An object of a heap (Heap#object).  +class_name+ is its class label
  # ("Class" for a class), +label+ the name it goes by in every report (a
  # class or module by its own name); as "class" and "label" in the JSON.
  ObjectInfo = Struct.new(:address, :type, :class_name, :label, :detail, :memsize, :size,
                          :generation, :file, :line, :method, :flags, :class_address,
                          :references, keyword_init: true) do
    def site
      "#{file || '(none)'}:#{line || 0}"
    end

    # One line (the references counted, not listed); Heap#show writes
    # everything about an object as `heapscope show` does.
    def inspect
      s = +"#<Heapscope::ObjectInfo #{Format.hex(address)} #{type} #{label}"
      s << " (#{class_name})" if class_name != label
      s << " #{detail}" if detail
      s << " memsize=#{memsize}"
      s << " #{site}" if file
      s << " generation=#{generation}" if generation
      s << " flags=#{flags.join(',')}" unless flags.empty?
      s << " refs=#{references.size}>"
    end
  end

  # An object that keeps memory alive (Heap#retained, DominatorTree#top):
  # as an object reference (class_name, label: see ObjectRef), its own
  # memsize, +retained+ (a Total: the objects and bytes it keeps alive,
  # itself included) and its allocation site.
  Retained = Struct.new(:address, :type, :class_name, :label, :memsize, :retained,
                        :file, :line, keyword_init: true) do
    # Deprecated (0.1 name): retained.count.
    def retained_count
      retained.count
    end
  end

  # Heap#retained: the objects that keep the most memory alive, largest
  # first (Retained rows).  to_s, inspect and #report are the library's
  # (`heapscope retained`).
  class RetainedList < Rows
    def initialize(rows, tree, top, keep_tracer: false) # :nodoc:
      super(rows)
      @tree = tree
      @top = top
      @keep_tracer = keep_tracer
    end

    # format: :text (default) or :json; see Heapscope::Report.
    def report(format: :text, **opts)
      @tree._write_retained(Report.options(opts, format: format, top: @top,
                                                 names: [@tree.heap.path],
                                                 skip_tracer: !@keep_tracer))
    end

    def inspect
      "#<Heapscope::RetainedList\n#{report}>"
    end
  end

  # A shortest path from a GC root category to a target object (Heap#
  # root_paths), as in `heapscope root --json`: +root+ is the category
  # ("(roots)" when several together), nil when no root reaches the
  # target; +path+ lists the objects (ObjectRef) from the first after the
  # root down to the target, [] when unreachable.
  Path = Struct.new(:target, :root, :path, keyword_init: true) do
    def self.from_json(h) # :nodoc:
      new(target: Report.address(h[:target]), root: h[:root],
          path: h[:path].map { |o| ObjectRef.from_json(o) })
    end

    def reachable?
      !root.nil?
    end

    # The addresses along the path.
    def addresses
      path.map(&:address)
    end
  end

  # What keeps leaked objects alive (Diff#suspects), as in `heapscope
  # suspects --json`: the holder (address, type, class_name, label, file,
  # line; a ROOT category holding leaked objects directly has address,
  # class_name and retained nil, label and root its name), +leaked+ (a
  # Total: what it holds of the leak), +retained+ (a Total: all it keeps
  # alive), +root+ and +path+ (ObjectRefs from the root down to it).
  #
  # And what to change: +sites+ (SuspectSites: where the leaked objects it
  # holds were allocated, those that put objects directly in it first),
  # +site_count+ (all of them), +entries+ (leaked objects directly in it),
  # +owner+ (an ObjectRef: the nearest class or module on its path, or
  # nil) and +owner_steps+, +vm_table+ (nil, or a Hash: kind, address,
  # type, detail, leaked, reason: one of the Ruby VM's own tables, ranked
  # after every application holder).  See docs/JSON.md.
  Suspect = Struct.new(:rank, :address, :type, :class_name, :label, :file, :line, :retained,
                       :leaked, :root, :path, :sites, :site_count, :entries, :owner,
                       :owner_steps, :vm_table, keyword_init: true) do
    def self.from_json(h) # :nodoc:
      new(rank: h[:rank], address: Report.address(h[:address]), type: h[:type],
          class_name: h[:class], label: h[:label], file: h[:file], line: h[:line],
          retained: h[:retained] && Total.new(h[:retained][:count], h[:retained][:memsize]),
          leaked: Total.new(h[:leaked][:count], h[:leaked][:memsize]), root: h[:root],
          path: h[:path].map { |o| ObjectRef.from_json(o) },
          sites: (h[:sites] || []).map { |x| SuspectSite.from_json(x) },
          site_count: h[:site_count], entries: h[:entries],
          owner: h.dig(:held_by, :owner) && ObjectRef.from_json(h[:held_by][:owner]),
          owner_steps: h.dig(:held_by, :steps),
          vm_table: h[:vm_table] && h[:vm_table].merge(address: Report.address(h[:vm_table][:address])))
    end

    # Deprecated (0.1 names): leaked.count and leaked.memsize.
    def leaked_count
      leaked.count
    end

    def leaked_memsize
      leaked.memsize
    end
  end

  # An allocation site of the leaked objects a Suspect holds: file, line,
  # method (nil where the dump has none), class_name, the +count+ and
  # +memsize+ of those allocated there, +entries+ (of them, those directly
  # in the holder) and +kept+ (a Total: what those entries keep).
  SuspectSite = Struct.new(:file, :line, :class_name, :method_name, :count, :memsize, :entries,
                           :kept, keyword_init: true) do
    def self.from_json(h) # :nodoc:
      new(file: h[:file], line: h[:line], class_name: h[:class], method_name: h[:method],
          count: h[:count], memsize: h[:memsize], entries: h[:entries],
          kept: Total.new(h[:kept][:count], h[:kept][:memsize]))
    end

    # "file:line:class", the tally's key.
    def key
      "#{file || '(none)'}:#{line || 0}:#{class_name}"
    end
  end
end
