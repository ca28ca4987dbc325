# frozen_string_literal: true

# Measure Heapscope.snapshot on a process with a large heap.
#
#   ruby bench/snapshot_memory.rb [HEAP_MB] snapshot   # peak extra memory of a snapshot
#   ruby bench/snapshot_memory.rb [HEAP_MB] dump FILE  # size of the same heap's dump
#
# The heap is deterministic (same objects for the same HEAP_MB), so the two
# runs can be compared.  Peak extra memory = VmHWM after the snapshot minus
# VmRSS before it, with the high-water mark reset to the current RSS just
# before (echo 5 > /proc/self/clear_refs, Linux >= 4.0).  Run under
#   strace -f -e trace=openat,creat,memfd_create
# to see that the snapshot opens no file for writing.
require "heapscope"
require_relative "record"

def status(key)
  File.read("/proc/self/status")[/^#{key}:\s+(\d+) kB/, 1].to_i << 10
end

def io_stat(key)
  File.read("/proc/self/io")[/^#{key}: (\d+)/, 1].to_i
end

def mb(n) = format("%.1f MB", n / 1048576.0)

heap_mb = Integer(ARGV[0] || 200)
mode = ARGV[1] || "snapshot"

GC.start
base = status("VmRSS")
$records = []
i = 0
while status("VmRSS") - base < (heap_mb << 20)
  10_000.times { $records << Record.new(i); i += 1 }
end
GC.start
GC.compact if GC.respond_to?(:compact) && ENV["COMPACT"] == "1"
objects = ObjectSpace.count_objects[:TOTAL] - ObjectSpace.count_objects[:FREE]

case mode
when "dump"
  path = ARGV[2] or abort "usage: #{$PROGRAM_NAME} HEAP_MB dump FILE"
  File.open(path, "w") { |f| ObjectSpace.dump_all(output: f) }
  puts "records #{i}, live objects #{objects}, dump #{File.size(path)} bytes (#{mb(File.size(path))})"
when "snapshot"
  rss0 = status("VmRSS")
  File.write("/proc/self/clear_refs", "5") # reset VmHWM to the current RSS
  hwm0 = status("VmHWM")
  wchar0 = io_stat("wchar")
  wbytes0 = io_stat("write_bytes")
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  heap = Heapscope.snapshot
  secs = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
  hwm1 = status("VmHWM")
  rss1 = status("VmRSS")
  s = heap.stats
  puts "records #{i}, live objects #{objects}; heap of the process #{mb(rss0 - base)} over a #{mb(base)} baseline"
  puts "snapshot: #{heap.object_count} objects, #{s[:references]} references, #{format('%.2f', secs)} s"
  puts "  dump bytes streamed through the pipe (parsed): #{s[:bytes]} (#{mb(s[:bytes])})"
  puts "  bytes written by write(2) during the snapshot: #{io_stat('wchar') - wchar0}; to storage: #{io_stat('write_bytes') - wbytes0}"
  puts "  RSS before #{mb(rss0)}, VmHWM reset to #{mb(hwm0)}, peak during snapshot #{mb(hwm1)}, after #{mb(rss1)}"
  puts "  peak extra memory: #{mb(hwm1 - rss0)} (#{format('%.1f', 100.0 * (hwm1 - rss0) / s[:bytes])} % of the dump size)"
  puts "  library model + index: #{mb(s[:model_bytes] + s[:index_bytes])}; ObjectSpace.memsize_of(heap): #{mb(ObjectSpace.memsize_of(heap))}"
else
  abort "mode must be snapshot or dump"
end
