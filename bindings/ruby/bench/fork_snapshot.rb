# frozen_string_literal: true

# In-process vs fork snapshots on a process with a large heap, two busy
# threads beside the caller.
#
#   ruby bench/fork_snapshot.rb OBJECTS [RUNS] [MODES]
#     OBJECTS  live objects to build (e.g. 1000000, 3000000)
#     RUNS     snapshots per mode (default 3)
#     MODES    comma-separated, default "inprocess,fork,idle"; "inprocess-nogc"
#              and "fork-nogc" snapshot without the GC first; "idle" takes no
#              snapshot but sleeps as long as the previous mode's call took,
#              for the ticker's gaps without a snapshot (on a machine shared
#              with other jobs the scheduler alone makes gaps of 50 ms)
#
# For every snapshot it prints one line, then the best and the median per
# mode:
#   call     wall time of the Heapscope.snapshot call (the caller waits this
#            long: with fork: true, without the GVL after the fork)
#   held     how long the snapshot held the GVL, i.e. the whole process: for
#            in-process snapshots the call (dump_all keeps the GVL except
#            while the pipe is full, so this is an upper bound), for fork
#            snapshots Heapscope.fork_stats[:held_seconds] (GC, fork, loader
#            start)
#   gc       the full GC the snapshot starts with (in-process: a full GC
#            timed just before the snapshot, which makes the same one)
#   gap      the largest gap of a thread that sleeps 1 ms in a loop
#   ticks    how many times that thread woke up during the call
#   moves    how many times the mutator changed its structure during the call
#   state    the mutator's invariant as the loaded Heap shows it: "consistent",
#            or "torn" (the snapshot caught the Array and the Hash at
#            different moments)
#   cow      Heapscope.fork_stats[:child_private_bytes]: memory the fork cost
#            by the end of the dump
#
# The mutator appends a new String to $log (emptied when it reaches 1000)
# and then stores the same String in $last[:s], 50 times, then sleeps
# 0.1 ms, in a loop.  Between two moves $log.last and $last[:s] are one
# object; the bench finds both in the loaded Heap by address and compares.
# (A move has no point where Ruby switches threads: those are the ends of
# blocks and methods, loop jumps and blocking calls.)
require "heapscope"
require_relative "record"
require "json"

OBJECTS = Integer(ARGV[0] || 1_000_000)
RUNS = Integer(ARGV[1] || 3)
MODES = (ARGV[2] || "inprocess,fork,idle").split(",")

def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
def live = ObjectSpace.count_objects.then { |c| c[:TOTAL] - c[:FREE] }
def address_of(obj) = Integer(JSON.parse(ObjectSpace.dump(obj))["address"], 16)

$records = []
GC.start
i = 0
while live < OBJECTS
  10_000.times do
    $records << Record.new(i)
    i += 1
  end
  GC.start if (i % 200_000).zero?
end
GC.start

$log = []
$last = {}
$moves = 0
$stop = false
mutator = Thread.new do
  n = 0
  until $stop
    50.times do
      s = (n += 1).to_s
      $log.clear if $log.size >= 1000
      $log << s
      $last[:s] = s
      $moves += 1
    end
    sleep 0.0001
  end
end

$ticks = 0
$gap = 0.0
ticker = Thread.new do
  t = now
  until $stop
    sleep 0.001
    t1 = now
    $gap = t1 - t if t1 - t > $gap
    $ticks += 1
    t = t1
  end
end
sleep 0.2
LOG = address_of($log)
LAST = address_of($last)

def state(heap)
  last_of_log = heap.references(LOG).last
  held = heap.references(LAST)
  held == [last_of_log] ? "consistent" : "torn"
end

rss = File.read("/proc/self/status")[/^VmRSS:\s+(\d+)/, 1].to_i << 10
printf("live objects %d, RSS %.0f MB, ruby %s, %d CPUs\n", live, rss / 1048576.0, RUBY_VERSION,
       File.read("/proc/cpuinfo").scan(/^processor/).size)
results = Hash.new { |h, k| h[k] = [] }
last_call = 1.0
RUNS.times do
  MODES.each do |mode|
    if mode == "idle"
      $gap = 0.0
      ticks0 = $ticks
      sleep last_call
      results[mode] << { call: last_call, held: 0.0, gap: $gap, ticks: $ticks - ticks0 }
      printf("%-15s sleep %6.3f s  gap %6.1f ms  ticks %5d\n", mode, last_call, $gap * 1000, $ticks - ticks0)
      next
    end
    fork = mode.start_with?("fork")
    gc = !mode.end_with?("-nogc")
    GC.start # each run starts from the same state
    t0 = now
    GC.start # as long as the snapshot's own full GC will take, about
    pre_gc = now - t0
    $gap = 0.0
    ticks0 = $ticks
    moves0 = $moves
    t0 = now
    heap = Heapscope.snapshot(fork: fork, gc: gc)
    call = now - t0
    last_call = call
    gap = $gap
    ticks = $ticks - ticks0
    moves = $moves - moves0
    st = fork ? Heapscope.fork_stats : nil
    r = { call: call, held: st ? st[:held_seconds] : call, gc: st ? st[:gc_seconds] : (gc ? pre_gc : 0.0),
          gap: gap, ticks: ticks, moves: moves, state: state(heap), objects: heap.object_count,
          cow: st && st[:child_private_bytes] }
    results[mode] << r
    printf("%-15s call %6.3f s  held %6.3f s  gc %6.3f s  gap %6.1f ms  ticks %5d  moves %8d  %-10s  %d objects%s\n",
           mode, r[:call], r[:held], r[:gc], gap * 1000, ticks, moves,
           r[:state], r[:objects], r[:cow] ? format("  cow %.1f MB", r[:cow] / 1048576.0) : "")
    heap = nil
  end
end
$stop = true
[mutator, ticker].each(&:join)

def median(v) = v.sort[v.size / 2]

puts
puts "best / median of #{RUNS}:"
results.each do |mode, rs|
  pick = lambda do |key|
    v = rs.map { |r| r[key] }.sort
    format("%.3f / %.3f", v.first, v[v.size / 2])
  end
  gaps = rs.map { |r| r[:gap] * 1000 }.sort
  if mode == "idle"
    printf("%-15s gap %.1f / %.1f ms\n", mode, gaps.first, gaps[gaps.size / 2])
    next
  end
  cow = rs.map { |r| r[:cow] }.compact.sort
  printf("%-15s call %s s  held %s s  gc %s s  gap %.1f / %.1f ms  consistent %d of %d%s\n",
         mode, pick.(:call), pick.(:held), pick.(:gc), gaps.first, gaps[gaps.size / 2],
         rs.count { |r| r[:state] == "consistent" }, rs.size,
         cow.empty? ? "" : format("  cow %.1f / %.1f MB", cow.first / 1048576.0, cow[cow.size / 2] / 1048576.0))
end
%w[fork fork-nogc].each do |f|
  base = f == "fork" ? "inprocess" : "inprocess-nogc"
  next unless results.key?(f) && results.key?(base)
  held = results[f].map { |r| r[:held] }
  calls = results[base].map { |r| r[:call] }
  printf("%s held / %s call: best %.1f %%, median %.1f %%\n", f, base,
         100 * held.min / calls.min, 100 * median(held) / median(calls))
end
