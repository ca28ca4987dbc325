# frozen_string_literal: true

# The harness shared by the workloads: command-line options, snapshots
# (GC, object counts from ObjectSpace, ObjectSpace.dump_all) and the ground
# truth that is computed in this very process.
#
# Portable on purpose: core Ruby, objspace and json only (zlib only for
# --gzip), no threads, no fork, no subprocess, no gems, and addresses are
# kept as the strings the dump prints (a 32-bit wasm build prints short
# ones), so the same scripts run on Debian's ruby and on ruby.wasm.

require "objspace"
require "json"

module HeapWorkload
  module_function

  # ---------------------------------------------------------------- options

  METAVAR = { int: "N", float: "X", string: "DIR" }.freeze

  # Parses "--name VALUE" / "--flag" arguments.  spec: name => [default,
  # kind, help] with kind :int, :float, :string or :flag.  Prints usage and
  # exits on --help; raises ArgumentError on a bad argument.
  def parse_options(argv, usage, spec)
    opts = spec.to_h { |name, (default, _kind, _help)| [name, default] }
    args = argv.dup
    until args.empty?
      arg = args.shift
      if arg == "--help" || arg == "-h"
        $stdout.puts usage, "", "options:"
        spec.each do |name, (default, kind, help)|
          left = kind == :flag ? "--#{name}" : "--#{name} #{METAVAR[kind]}"
          dflt = kind == :flag || default.nil? ? "" : " (default #{default})"
          $stdout.puts format("  %-18s %s%s", left, help, dflt)
        end
        exit 0
      end
      name, inline = arg.start_with?("--") ? arg[2..].split("=", 2) : [nil, nil]
      raise ArgumentError, "unexpected argument #{arg.inspect} (try --help)" unless name && spec.key?(name)

      kind = spec[name][1]
      if kind == :flag
        raise ArgumentError, "--#{name} takes no value" if inline

        opts[name] = true
        next
      end
      value = inline || args.shift
      raise ArgumentError, "--#{name} needs a value" if value.nil?

      opts[name] = case kind
                   when :int then Integer(value, 10)
                   when :float then Float(value)
                   else value
                   end
    end
    opts
  rescue ArgumentError => e
    warn "#{File.basename($PROGRAM_NAME)}: #{e.message}"
    exit 2
  end

  # --------------------------------------------------------------- objects

  # The address the dump gives obj ("0x7f..."; shorter on 32-bit builds).
  def address_of(obj)
    ObjectSpace.dump(obj)[/"address":"(0x\h+)"/, 1]
  end

  # The dump's "type" of obj (STRING, DATA for a Proc, ...).
  def dump_type(obj)
    ObjectSpace.dump(obj)[/"type":"([A-Z_]+)"/, 1]
  end

  # A row of the truth: [address, type, class, file, line, generation, memsize].
  def row_of(obj)
    [address_of(obj), dump_type(obj), class_name(obj), ObjectSpace.allocation_sourcefile(obj),
     ObjectSpace.allocation_sourceline(obj), ObjectSpace.allocation_generation(obj),
     ObjectSpace.memsize_of(obj)]
  end

  CLASS_OF = Kernel.instance_method(:class)

  # The class label heapscope prints for obj: the class's name (the planted
  # objects have no singleton class and no anonymous class).
  def class_name(obj)
    CLASS_OF.bind_call(obj).name || "<anonymous>"
  rescue TypeError
    "<unknown>"
  end

  # A holder's root path for the truth: [{"root" => category}, {address,
  # type, name/class, direct} ...].  "direct" (from ObjectSpace, here) is
  # whether the object is among those the previous one (for the first, the
  # root category) references itself; when it is not, the dump has
  # internal objects in between that Ruby gives no handle to: on 3.4+ the
  # VM's list of pinned objects (a hidden DATA) between the root vm and a
  # class, on 4.0+ an IMEMO fields object between a class (or String,
  # Array, typed Data) and the values of its instance variables.
  def root_path(root, *objects)
    prev = nil
    [{ "root" => root }] + objects.map do |o|
      # (the root hash compares its keys by identity: look the name up by value)
      kids = prev ? ObjectSpace.reachable_objects_from(prev) : ObjectSpace.reachable_objects_from_root.find { |k, _| k == root }&.last
      entry = { "address" => address_of(o), "type" => dump_type(o) }
      entry[o.is_a?(Module) ? "name" : "class"] = o.is_a?(Module) ? o.name : class_name(o)
      entry["direct"] = (kids || []).any? { |k| k.equal?(o) }
      prev = o
      entry
    end
  end

  # ------------------------------------------------------------ snapshots

  # Takes heap snapshots so that the objects the dump holds can be counted
  # from ObjectSpace in the same instant:
  #
  #   GC.start; GC.disable
  #   count_objects + count_objects_size     -> "by_type", "memsize_by_type"
  #   ObjectSpace.dump_all(output: file)      (nothing else allocates here)
  #   count_objects                          -> "by_type_after"
  #   GC.enable; GC.start                     (a fence: see below)
  #
  # With GC disabled nothing is freed, so the dump holds exactly the counted
  # objects plus those of the dumper's own allocations (ObjectSpace.dump_all,
  # file = dumper_file, generation = gc_count) that its heap walk met.
  # The output file is in sync mode: without a write buffer its memsize does
  # not change while it is written.  The fence GC after the dump makes every
  # object allocated after it younger than the dump's generation, so
  # "generation >= fence" marks what the next phase allocated.
  #
  # A snapshot may write several dumps in the same window, each with its
  # own dump_all options (VARIANTS: :plain, :full = full: true, :no_shapes
  # = shapes: false on 3.2+, :since = since: the generation given to
  # #since=); all of them hold the counted objects plus the dumper's.
  #
  # The counts go to a side file as JSON lines, not into the heap (they
  # would be in the next dump).  Two warm-up dumps go first (to a scratch
  # file in DIR: WASI has no /dev/null): the first dump_all of a process
  # allocates inline caches of its own; with variants: true a third one
  # runs every variant, for the same reason.  The paths of the dumps named
  # up front (names:) are made once, before anything is counted: a String
  # made in #take could outlive it through a conservative root (ruby.wasm
  # 3.2 kept the previous dump's path for a while) and make the count of
  # Strings jitter.
  class Snapshots
    VARIANTS = %i[plain full no_shapes since].freeze

    attr_reader :dumper_file, :fence
    attr_accessor :since

    # Does this Ruby's dump_all take shapes: (3.2+)?
    def self.shapes_option?
      ObjectSpace.method(:dump_all).parameters.any? { |_, n| n == :shapes }
    end

    def initialize(dir, names: [], variants: false)
      @dir = dir
      @paths = names.to_h { |n| [n, File.join(dir, n).freeze] }
      @side = File.join(dir, ".snapshots.jsonl")
      @scratch = File.join(dir, ".warmup.json")
      File.write(@side, "")
      @before = {}
      @after = {}
      @sizes = {}
      @since = 0
      loc = ObjectSpace.method(:dump_all).source_location
      @dumper_file = loc && loc[0]
      warmup(variants)
    end

    # Dumps to the scratch file: the same code path as a real snapshot.
    def warmup(variants)
      2.times { take(nil) }
      take(nil, nil, dumps: VARIANTS.map { |v| [nil, v] }) if variants
    end

    # Dumps the heap to DIR/name (nil: to the scratch file, for a warm-up)
    # and returns GC.count at the dump.  extra: more facts for the record
    # (allocated before the dump, so they are in it).  dumps: instead of
    # name, [[name, variant], ...] to write in the same window.
    def take(name, extra = nil, dumps: nil)
      dumps ||= [[name, :plain]]
      dumps = dumps.reject { |_, v| v == :no_shapes } unless Snapshots.shapes_option?
      paths = dumps.map { |n, _| n ? @paths[n] || File.join(@dir, n) : @scratch }
      # everything the window uses is allocated before it: files, pairs
      jobs = paths.zip(dumps).map do |path, (_, variant)|
        io = File.open(path, "wb")
        io.sync = true
        [io, variant]
      end
      since = @since
      GC.start
      GC.disable
      ObjectSpace.count_objects(@before)
      ObjectSpace.count_objects_size(@sizes)
      gc = GC.count
      jobs.each do |io, variant|
        case variant
        when :full then ObjectSpace.dump_all(output: io, full: true)
        when :no_shapes then ObjectSpace.dump_all(output: io, shapes: false)
        when :since then ObjectSpace.dump_all(output: io, since: since)
        else ObjectSpace.dump_all(output: io)
        end
      end
      ObjectSpace.count_objects(@after)
      GC.enable
      jobs.each { |io, _| io.close }
      GC.start
      @fence = GC.count
      # warm-up dumps record too (then dropped): every snapshot runs the
      # same code, so none allocates inline caches the others did not
      File.open(@side, "a") do |f|
        dumps.zip(paths) do |(n, variant), path|
          rec = { "file" => n, "variant" => variant.to_s, "bytes" => File.size(path), "gc_count" => gc,
                  "fence_gc_count" => @fence, "extra" => extra, "counts" => @before, "sizes" => @sizes,
                  "counts_after" => @after }
          rec["since"] = since if variant == :since
          f.puts(JSON.generate(rec))
        end
      end
      gc
    end

    # The recorded snapshots, in the truth's form; removes the side file.
    def records
      recs = File.readlines(@side).map { |l| JSON.parse(l) }.select { |r| r["file"] }
      File.delete(@side)
      File.delete(@scratch) if File.exist?(@scratch)
      recs.map do |r|
        r["slots"] = { "total" => r["counts"]["TOTAL"], "free" => r["counts"]["FREE"],
                       "total_after" => r["counts_after"]["TOTAL"], "free_after" => r["counts_after"]["FREE"] }
        by_type = types_of(r.delete("counts"))
        after = types_of(r.delete("counts_after"))
        mem = types_of(r.delete("sizes"))
        r.delete("extra") unless r["extra"]
        r.merge("objects" => by_type.values.sum, "by_type" => by_type,
                "memsize_by_type" => mem.reject { |_, v| v.zero? },
                "objects_after" => after.values.sum, "by_type_after" => after)
      end
    end

    # {:T_STRING => n, :FREE => f, :TOTAL => t} -> {"STRING" => n} (n > 0)
    def types_of(counts)
      counts.each_with_object({}) do |(k, v), h|
        k = k.to_s
        h[k.delete_prefix("T_")] = v if k.start_with?("T_") && v.positive?
      end.sort.to_h
    end
  end

  # ----------------------------------------------------------------- truth

  # Everything a leak keeps alive that was allocated in the generation
  # window [gmin, gmax): a walk from the holder over
  # ObjectSpace.reachable_objects_from that only continues through objects
  # of the window.  A Proc's captured variables sit in its environment, an
  # internal object without a Ruby handle, so they are reached through
  # Proc#binding.  Internal objects (imemos, hidden strings) have no
  # address here and are counted, not listed.
  def leaked_objects(holder, gmin, gmax)
    seen = {}.compare_by_identity
    out = []
    internal = 0
    queue = [holder]
    until queue.empty?
      obj = queue.shift
      kids = ObjectSpace.reachable_objects_from(obj) || []
      if obj.is_a?(Proc)
        b = obj.binding
        kids += b.local_variables.map { |v| b.local_variable_get(v) } + [b.receiver]
      end
      kids.each do |k|
        if k.is_a?(ObjectSpace::InternalObjectWrapper)
          internal += 1
          next
        end
        next if seen[k]

        seen[k] = true
        g = ObjectSpace.allocation_generation(k)
        next unless g && g >= gmin && g < gmax

        out << k
        queue << k
      end
    end
    [out, internal]
  end

  # Live objects allocated at the given source lines within [gmin, gmax),
  # as {"FILE:LINE:CLASS" => count}: a census of the whole heap that checks
  # the leak walk missed nothing at a planted site.
  def census(sites, gmin, gmax)
    lines = sites.to_h { |file, line| [line, file] }
    want = sites.to_h { |file, line| [[file, line], true] }
    counts = Hash.new(0)
    GC.start
    ObjectSpace.each_object do |o|
      line = ObjectSpace.allocation_sourceline(o)
      next unless line && lines.key?(line)

      g = ObjectSpace.allocation_generation(o)
      next unless g && g >= gmin && g < gmax

      file = ObjectSpace.allocation_sourcefile(o)
      counts["#{file}:#{line}:#{class_name(o)}"] += 1 if want[[file, line]]
    end
    counts.sort.to_h
  end

  # Lines of `file` tagged "# @leak-site NAME": {NAME => [line, ...]}.
  def site_lines(file)
    sites = Hash.new { |h, k| h[k] = [] }
    File.foreach(file).with_index(1) do |text, n|
      text.scan(/# @leak-site (\w+)/) { |(name)| sites[name] << n }
    end
    sites
  end

  def tally(rows, index)
    rows.each_with_object(Hash.new(0)) { |r, h| h[yield(r)] += 1 if index.nil? || r[index] }.sort.to_h
  end

  # --------------------------------------------------------------- output

  # gzip each file of dir (DIR/name -> DIR/name.gz, the plain file removed);
  # returns {name => gz_bytes}.  Needs Ruby's zlib extension.
  def gzip_files(dir, names)
    begin
      require "zlib"
    rescue LoadError
      warn "--gzip needs Ruby's zlib extension, which this Ruby does not have"
      exit 2
    end
    names.to_h do |name|
      src = File.join(dir, name)
      Zlib::GzipWriter.open("#{src}.gz", 6) do |gz|
        gz.mtime = 1
        File.open(src, "rb") do |f|
          while (chunk = f.read(1 << 20))
            gz.write(chunk)
          end
        end
      end
      File.delete(src)
      [name, File.size("#{src}.gz")]
    end
  end

  def write_json(path, obj)
    File.write(path, JSON.pretty_generate(obj) + "\n")
  end

  def clock
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end
end
