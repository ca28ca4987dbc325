#!/usr/bin/env ruby
# frozen_string_literal: true

# ruby_ffi.rb - libheapscope from Ruby through the ffi gem (Debian: ruby-ffi).
#
#   ruby ruby_ffi.rb [--lib PATH] [--by KEY] [--diff-by KEY] [--top N]
#                    [--json] DUMP [DUMP2 [DUMP3]]
#   ruby ruby_ffi.rb [--lib PATH] [--by KEY] [--top N] --timeline DUMP...
#
# Loads the last DUMP and prints its tally by KEY (default "type"), then
# recomputes count and memsize per type from the bulk columns
# (HSCOPE_COL_TYPE and HSCOPE_COL_MEMSIZE, one call per column) and checks
# them against the tally.  Given two or three dumps, also prints the
# heapleak diff grouped by --diff-by (default "class").
#
# With --json, prints instead the library's own JSON documents of the same
# tally and diff, one per line, written by hscope_tally_write() and
# hscope_diff_write() through a write callback (an FFI callback sink): the
# same bytes as `heapscope tally --json --keep-dumper --keep-tracer` and `heapscope diff
# --json` print for the same dumps and options (docs/JSON.md).
#
# With --timeline, the DUMPs (any number) are a series of one process: prints
# the library's JSON document of what grows over time (kind "timeline"),
# computed by hscope_timeline_compute() (grouped by --by, default
# file:line:class; the dumps put in time order by the library) and written by
# hscope_timeline_write() through the same sink: the same bytes as
# `heapscope timeline --json --by KEY --top N DUMP...`.  Then, on stderr, the
# growing groups with their count in every dump, read through the
# timeline's accessors.
#
# The shared library is --lib PATH, else $HEAPSCOPE_LIB, else whatever the
# dynamic loader finds as libheapscope.so.0 (after `meson install`).
# Handles are FFI::AutoPointers released by the matching hscope_*_free():
# derived handles keep their heap alive, so the GC may free in any order.
#
# Exit status: 0 success, 1 library error or a disagreement, 2 usage.

require 'ffi'
require 'optparse'

opts = { lib: ENV.fetch('HEAPSCOPE_LIB', 'libheapscope.so.0'), by: nil,
         diff_by: 'class', top: 20, json: false, timeline: false }
parser = OptionParser.new do |o|
  o.banner = 'usage: ruby_ffi.rb [--lib PATH] [--by KEY] [--diff-by KEY] [--top N] [--json] ' \
             "DUMP [DUMP2 [DUMP3]]\n" \
             '       ruby_ffi.rb [--lib PATH] [--by KEY] [--top N] --timeline DUMP...'
  o.on('--lib PATH') { |v| opts[:lib] = v }
  o.on('--by KEY') { |v| opts[:by] = v }
  o.on('--diff-by KEY') { |v| opts[:diff_by] = v }
  o.on('--top N', Integer) { |v| opts[:top] = v }
  o.on('--json') { opts[:json] = true }
  o.on('--timeline') { opts[:timeline] = true }
end
begin
  parser.parse!
rescue OptionParser::ParseError => e
  warn e.message, parser.banner
  exit 2
end
opts[:by] ||= opts[:timeline] ? 'file:line:class' : 'type'
if ARGV.empty? || (ARGV.size > 3 && !opts[:timeline])
  warn parser.banner
  exit 2
end

# The C declarations, transcribed from <heapscope/heapscope.h>.
module HScope
  extend FFI::Library

  OK = 0
  COL_TYPE = 2     # u8 per object: HSCOPE_TYPE_*
  COL_MEMSIZE = 5  # u32 per object; 0xFFFFFFFF: ask the object
  ELEM_U8 = 1
  ELEM_U32 = 3
  SORT_COUNT = 0
  FORMAT_JSON = 2
  TOP_ALL = 2**64 - 1
  METRIC_COUNT = 2

  # hscope_error: caller-owned, size set before the call.
  class Error < FFI::Struct
    layout :size, :uint32,
           :status, :int32,
           :sys_errno, :int32,
           :reserved, :uint32,
           :line, :uint64,
           :offset, :uint64,
           :message, [:char, 256]
  end

  # hscope_tally_options: size-versioned, zero means default.
  # Transcribed whole (flags and reserved came in 0.2):
  # hscope_tally_options_init() writes the library's full struct.
  class TallyOptions < FFI::Struct
    layout :size, :uint32,
           :sort, :uint32,
           :top, :uint64,
           :flags, :uint32,
           :reserved, :uint32
  end

  # hscope_report_options (0.2): how a writer writes; zero means default.
  class ReportOptions < FFI::Struct
    layout :size, :uint32,
           :format, :int32,
           :flags, :uint32,
           :width, :uint32,
           :top, :uint64,
           :depth, :uint32,
           :max_paths, :uint32,
           :dump_names, :pointer,
           :dump_name_count, :uint64
  end

  # hscope_timeline_options (0.2): zero means default (by file:line:class,
  # metric memsize, order auto, one fold per core, 3 dumps to grow).
  class TimelineOptions < FFI::Struct
    layout :size, :uint32,
           :flags, :uint32,
           :by, :pointer,
           :metric, :int32,
           :order, :int32,
           :threads, :uint32,
           :min_dumps, :uint32
  end

  # The output sink: int32_t write(void *user_data, const char *data, uint64_t len).
  callback :write_fn, %i[pointer pointer uint64], :int32

  def self.load(path)
    ffi_lib path
    attach_function :hscope_version_string, [], :string
    attach_function :hscope_status_name, [:int32], :string
    attach_function :hscope_error_init, [Error.by_ref], :void
    attach_function :hscope_tally_options_init, [TallyOptions.by_ref], :void
    attach_function :hscope_heap_open_file, %i[pointer string pointer pointer], :int32
    attach_function :hscope_heap_free, [:pointer], :void
    attach_function :hscope_heap_object_memsize, %i[pointer uint32], :uint64
    attach_function :hscope_heap_type_name, %i[pointer int32], :string
    attach_function :hscope_heap_column, %i[pointer int32 pointer pointer pointer], :int32
    attach_function :hscope_tally_compute, %i[pointer pointer string pointer pointer], :int32
    attach_function :hscope_tally_free, [:pointer], :void
    attach_function :hscope_tally_row_count, [:pointer], :uint64
    attach_function :hscope_tally_group_count, [:pointer], :uint64
    attach_function :hscope_tally_totals, %i[pointer pointer pointer], :void
    attach_function :hscope_tally_row_key, %i[pointer uint64], :string
    attach_function :hscope_tally_row_count_of, %i[pointer uint64], :uint64
    attach_function :hscope_tally_row_memsize, %i[pointer uint64], :uint64
    attach_function :hscope_diff_files,
                    %i[pointer string string string pointer pointer pointer], :int32
    attach_function :hscope_diff_free, [:pointer], :void
    attach_function :hscope_diff_count, [:pointer], :uint64
    attach_function :hscope_diff_memsize, [:pointer], :uint64
    attach_function :hscope_diff_excluded, [:pointer], :uint64
    attach_function :hscope_diff_reused_addresses, [:pointer], :uint64
    attach_function :hscope_diff_snapshot_objects, %i[pointer uint32], :uint64
    attach_function :hscope_diff_warning_text, [:pointer], :string
    attach_function :hscope_diff_tally, %i[pointer pointer string pointer pointer], :int32
    attach_function :hscope_report_options_init, [ReportOptions.by_ref], :void
    attach_function :hscope_tally_write, [:pointer, ReportOptions.by_ref, :write_fn, :pointer,
                                          :pointer], :int32
    attach_function :hscope_diff_write, [:pointer, :pointer, ReportOptions.by_ref, :write_fn,
                                         :pointer, :pointer], :int32
    attach_function :hscope_timeline_options_init, [TimelineOptions.by_ref], :void
    attach_function :hscope_timeline_compute, [:pointer, :pointer, :uint64, :pointer,
                                               TimelineOptions.by_ref, :pointer], :int32
    attach_function :hscope_timeline_free, [:pointer], :void
    attach_function :hscope_timeline_growing_count, [:pointer], :uint64
    attach_function :hscope_timeline_dump_count, [:pointer], :uint64
    attach_function :hscope_timeline_group_key, %i[pointer uint64], :string
    attach_function :hscope_timeline_group_series, %i[pointer uint64 int32], :pointer
    attach_function :hscope_timeline_write, [:pointer, ReportOptions.by_ref, :write_fn,
                                             :pointer, :pointer], :int32
  end

  class LibError < StandardError; end

  def self.new_error
    err = Error.new
    hscope_error_init(err)
    err
  end

  def self.check(status, err, what)
    return if status == OK

    raise LibError, "#{what}: #{hscope_status_name(status)}: #{err[:message].to_s.force_encoding('UTF-8')}"
  end

  # Call a constructor `fn(&out, args..., err)` and wrap the handle so that
  # the GC frees it with `free_fn`.
  def self.construct(fn, free_fn, what, *args)
    err = new_error
    out = FFI::MemoryPointer.new(:pointer)
    check(send(fn, out, *args, err), err, what)
    FFI::AutoPointer.new(out.read_pointer, method(free_fn))
  end

  def self.tally_options(top)
    o = TallyOptions.new
    hscope_tally_options_init(o)
    o[:sort] = SORT_COUNT
    o[:top] = top
    o
  end

  def self.text(str)
    str.to_s.dup.force_encoding('UTF-8')
  end

  def self.print_rows(tally)
    puts format('%10s %13s  %s', 'count', 'memsize', 'key')
    rows = (0...hscope_tally_row_count(tally)).map do |i|
      row = [text(hscope_tally_row_key(tally, i)), hscope_tally_row_count_of(tally, i),
             hscope_tally_row_memsize(tally, i)]
      puts format('%10d %13d  %s', row[1], row[2], row[0])
      row
    end
    puts
    rows
  end

  # A whole column as a Ruby array (one call, one copy).
  def self.column(heap, col, want_elem)
    data = FFI::MemoryPointer.new(:pointer)
    len = FFI::MemoryPointer.new(:uint64)
    elem = FFI::MemoryPointer.new(:int32)
    status = hscope_heap_column(heap, col, data, len, elem)
    raise LibError, "hscope_heap_column(#{col}): #{hscope_status_name(status)}" \
      if status != OK || elem.read_int32 != want_elem

    n = len.read_uint64
    return [] if n.zero?

    ptr = data.read_pointer
    want_elem == ELEM_U8 ? ptr.get_array_of_uint8(0, n) : ptr.get_array_of_uint32(0, n)
  end

  def self.column_check(heap, rows, total_count, total_memsize)
    types = column(heap, COL_TYPE, ELEM_U8)
    mems = column(heap, COL_MEMSIZE, ELEM_U32)
    per_code = Hash.new { |h, k| h[k] = [0, 0] }
    types.each_with_index do |t, id|
      m = mems[id]
      m = hscope_heap_object_memsize(heap, id) if m == 0xFFFFFFFF # too large for u32
      acc = per_code[t]
      acc[0] += 1
      acc[1] += m
    end
    per_name = per_code.to_h { |code, v| [text(hscope_heap_type_name(heap, code)), v] }
    bad = rows.reject { |key, cnt, mem| per_name[key] == [cnt, mem] }.map(&:first)
    n = per_name.values.sum(&:first)
    m = per_name.values.sum(&:last)
    if !bad.empty? || [n, m] != [total_count, total_memsize]
      puts "columns: MISMATCH with the tally for #{bad.empty? ? 'the totals' : bad.join(', ')} " \
           "(columns: #{n} objects, #{m} bytes)"
      return false
    end
    puts "columns: #{n} objects, #{m} bytes in #{per_name.size} types from HSCOPE_COL_TYPE " \
         'and HSCOPE_COL_MEMSIZE: equal to the tally'
    true
  end

  def self.tally_dump(path, key, top)
    heap = construct(:hscope_heap_open_file, :hscope_heap_free, path, path, nil)
    tally = construct(:hscope_tally_compute, :hscope_tally_free, 'tally', heap, key,
                      tally_options(top))
    count = FFI::MemoryPointer.new(:uint64)
    memsize = FFI::MemoryPointer.new(:uint64)
    hscope_tally_totals(tally, count, memsize)
    puts "tally of #{path} by #{key}: #{count.read_uint64} objects, " \
         "#{memsize.read_uint64} bytes in #{hscope_tally_group_count(tally)} groups"
    rows = print_rows(tally)
    key == 'type' ? column_check(heap, rows, count.read_uint64, memsize.read_uint64) : true
  end

  # Run a writer (hscope_tally_write, hscope_diff_write) into a String
  # through the sink; +extra+ are the arguments between the handle and the
  # options (the diff's groups).
  def self.write_json(writer, handle, extra, names, top)
    opts = ReportOptions.new
    hscope_report_options_init(opts)
    opts[:format] = FORMAT_JSON
    opts[:top] = top.zero? ? TOP_ALL : top # as `--top N`, 0 = all
    strings = names.map { |n| FFI::MemoryPointer.from_string(n) }
    array = FFI::MemoryPointer.new(:pointer, names.size)
    array.write_array_of_pointer(strings)
    opts[:dump_names] = array
    opts[:dump_name_count] = names.size
    out = +''.b
    sink = proc do |_user_data, data, len|
      out << data.read_bytes(len)
      0
    end
    err = new_error
    check(send(writer, handle, *extra, opts, sink, nil, err), err, 'write')
    out
  end

  # The library's JSON of the tally and the diff, one document a line.
  def self.json_reports(paths, key, diff_key, top)
    heap = construct(:hscope_heap_open_file, :hscope_heap_free, paths[-1], paths[-1], nil)
    tally = construct(:hscope_tally_compute, :hscope_tally_free, 'tally', heap, key,
                      tally_options(top))
    $stdout.binmode
    $stdout.write(write_json(:hscope_tally_write, tally, [], paths.last(1), top))
    return true if paths.size == 1

    diff = construct(:hscope_diff_files, :hscope_diff_free, 'diff',
                     paths[0], paths[1], paths[2], nil, nil)
    groups = construct(:hscope_diff_tally, :hscope_tally_free, 'diff tally', diff, diff_key,
                       tally_options(top))
    $stdout.write(write_json(:hscope_diff_write, diff, [groups], paths, top))
    true
  end

  # The library's JSON of the dumps' timeline, through the sink; the
  # growing groups (count per dump) on stderr.
  def self.timeline_json(paths, key, top)
    opts = TimelineOptions.new
    hscope_timeline_options_init(opts)
    by = FFI::MemoryPointer.from_string(key)
    opts[:by] = by
    strings = paths.map { |p| FFI::MemoryPointer.from_string(p) }
    array = FFI::MemoryPointer.new(:pointer, paths.size)
    array.write_array_of_pointer(strings)
    tl = construct(:hscope_timeline_compute, :hscope_timeline_free, 'timeline', array,
                   paths.size, nil, opts)
    $stdout.binmode
    $stdout.write(write_json(:hscope_timeline_write, tl, [], paths, top))
    $stdout.flush
    dumps = hscope_timeline_dump_count(tl)
    hscope_timeline_growing_count(tl).times do |g|
      counts = hscope_timeline_group_series(tl, g, METRIC_COUNT).read_array_of_uint64(dumps)
      warn "growing: #{text(hscope_timeline_group_key(tl, g))}, count #{counts.join(' ')}"
    end
    true
  end

  def self.diff_dumps(paths, key, top)
    diff = construct(:hscope_diff_files, :hscope_diff_free, 'diff',
                     paths[0], paths[1], paths[2], nil, nil)
    tally = construct(:hscope_diff_tally, :hscope_tally_free, 'diff tally', diff, key,
                      tally_options(top))
    snaps = (0...paths.size).map { |i| hscope_diff_snapshot_objects(diff, i) }
    puts "diff #{paths.join(' ')} by #{key}: #{hscope_diff_count(diff)} leaked objects, " \
         "#{hscope_diff_memsize(diff)} bytes in #{hscope_tally_group_count(tally)} groups; " \
         "#{hscope_diff_excluded(diff)} dumper objects left out, " \
         "#{hscope_diff_reused_addresses(diff)} reused addresses; snapshots #{snaps.join(' ')}"
    warning = text(hscope_diff_warning_text(diff))
    warning.each_line { |line| puts "warning: #{line.chomp}" }
    print_rows(tally)
  end
end

begin
  HScope.load(opts[:lib])
rescue LoadError => e
  warn "cannot load libheapscope: #{e.message}"
  exit 1
end
begin
  exit(HScope.timeline_json(ARGV, opts[:by], opts[:top]) ? 0 : 1) if opts[:timeline]
  exit(HScope.json_reports(ARGV, opts[:by], opts[:diff_by], opts[:top]) ? 0 : 1) if opts[:json]
  puts "libheapscope #{HScope.hscope_version_string}"
  ok = HScope.tally_dump(ARGV[-1], opts[:by], opts[:top])
  HScope.diff_dumps(ARGV, opts[:diff_by], opts[:top]) if ARGV.size > 1
rescue HScope::LibError => e
  warn e.message
  exit 1
end
exit(ok ? 0 : 1)
