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

  module Format
    module_function

    # 1234567 -> "1,234,567"
    def grouped(n)
      n.to_i.to_s.reverse.scan(/\d{1,3}/).join(",").reverse.then { |s| n.to_i.negative? ? "-#{s}" : s }
    end

    # 1536 -> "1.5 KB"
    def bytes(n)
      n = n.to_i
      return "#{n} B" if n < 1024
      units = %w[KB MB GB TB]
      v = n.to_f
      u = -1
      while v >= 1024 && u < units.size - 1
        v /= 1024
        u += 1
      end
      format("%.1f %s", v, units[u])
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

  # One group of a tally: a key, how many live objects it has and the sum of
  # their memsize.
  Row = Struct.new(:key, :count, :memsize) do
    def to_s
      format("%10d %12d  %s", count, memsize, key)
    end

    def inspect
      "#<Heapscope::Row #{key} count=#{count} memsize=#{memsize}>"
    end
  end

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

    def to_s
      format("%10d %12d  %s", count, memsize, key)
    end

    def inspect
      eg = addresses(3).map { |a| Format.hex(a) }
      eg << "..." if count > 3
      "#<Heapscope::Group #{key} count=#{count} memsize=#{memsize} e.g. #{eg.join(' ')}>"
    end

    def ==(other)
      other.is_a?(Group) && to_h == other.to_h
    end
  end

  # The rows of a tally, largest first: an Array of Row (or Group, for a
  # diff), with the totals over all groups.
  class Tally < Array
    # The grouping key ("class", "file:line:class", ...).
    attr_reader :by
    # Distinct groups before top: was applied.
    attr_reader :group_count
    # Objects and memsize over all groups (before top:).
    attr_reader :total_count, :total_memsize
    # Objects left out as the dumper's own (Heap#tally keep_dumper: false).
    attr_reader :excluded_dumper_objects

    def initialize(rows, by:, group_count:, total_count:, total_memsize:, excluded_dumper_objects: 0)
      super(rows)
      @by = by
      @group_count = group_count
      @total_count = total_count
      @total_memsize = total_memsize
      @excluded_dumper_objects = excluded_dumper_objects
    end

    # The rows as a text table (the format of examples/c/bleak_tally.c).
    def to_s
      lines = [format("%10s %12s  %s", "count", "memsize", by)]
      each { |r| lines << r.to_s }
      lines.join("\n") << "\n"
    end

    def inspect
      head = "#<Heapscope::Tally by #{by}: #{size} of #{Format.grouped(group_count)} groups, " \
             "#{Format.grouped(total_count)} objects, #{Format.bytes(total_memsize)}"
      return "#{head}>" if empty?
      "#{head}\n#{to_s.gsub(/^/, '  ')}>"
    end

    def pretty_print(q)
      q.text(inspect)
    end
  end

  # An object of a heap (Heap#object).
  ObjectInfo = Struct.new(:address, :type, :class_name, :detail, :memsize, :size,
                          :generation, :file, :line, :method, :flags, :class_address,
                          :references, keyword_init: true) do
    def site
      "#{file || '(none)'}:#{line || 0}"
    end

    def inspect
      s = +"#<Heapscope::ObjectInfo #{Format.hex(address)} #{type} #{class_name}"
      s << " #{detail}" if detail
      s << " memsize=#{memsize}"
      s << " #{site}" if file
      s << " generation=#{generation}" if generation
      s << " flags=#{flags.join(',')}" unless flags.empty?
      s << " refs=#{references.size}>"
    end
  end

  # An object that keeps memory alive (Heap#retained, DominatorTree#top).
  # +class_name+ is the object's label (a class or module: its own name;
  # as "label" in `heapscope retained --json`); +label+ is "TYPE name" as
  # the CLI prints it.
  Retained = Struct.new(:address, :type, :class_name, :label, :memsize, :retained,
                        :retained_count, :file, :line, keyword_init: true) do
    def to_s
      s = format("%12d %10d  %s %s", retained, retained_count, Format.hex(address), label)
      s << "  (#{file}:#{line})" if file
      s
    end

    def inspect
      "#<Heapscope::Retained #{Format.hex(address)} #{label} " \
        "retained=#{Format.bytes(retained)} (#{retained_count} objects)>"
    end
  end

  # A shortest path from a GC root category to a target object.  +path+
  # lists addresses from the first object after the root down to the
  # target; +root+ is nil (and +path+ empty) when the target is unreachable.
  Path = Struct.new(:target, :root, :path, keyword_init: true) do
    def reachable?
      !root.nil?
    end

    def inspect
      return "#<Heapscope::Path #{Format.hex(target)} unreachable>" unless reachable?
      "#<Heapscope::Path #{Format.hex(target)} from #{root}: " \
        "#{path.map { |a| Format.hex(a) }.join(' -> ')}>"
    end
  end

  # What keeps leaked objects alive (Diff#suspects): the holder's address
  # (nil when a root category holds them directly), type and class, how
  # many leaked objects and bytes it holds, and a path from a GC root.
  # +class_name+ is the holder's label (a class or module: its own name; as
  # "label" in `heapscope suspects --json`); +label+ is "TYPE name" as the
  # text report prints it.
  Suspect = Struct.new(:address, :type, :class_name, :label, :file, :line, :retained,
                       :leaked_count, :leaked_memsize, :root, :path, keyword_init: true) do
    def to_s
      if address.nil?
        return "root #{root} directly holds #{Format.grouped(leaked_count)} leaked objects " \
               "(#{Format.bytes(leaked_memsize)})"
      end
      s = +"#{Format.hex(address)} #{label} holds #{Format.grouped(leaked_count)} " \
           "leaked objects (#{Format.bytes(leaked_memsize)})"
      s << ", allocated at #{file}:#{line}" if file
      s << "\n   path from root #{root || '(unreachable)'}: #{path.map { |a| Format.hex(a) }.join(' -> ')}"
      s
    end

    def inspect
      "#<Heapscope::Suspect #{address ? Format.hex(address) : "root #{root}"} #{label} " \
        "leaked_count=#{leaked_count} leaked_memsize=#{leaked_memsize}>"
    end
  end
end
