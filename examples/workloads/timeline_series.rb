#!/usr/bin/env ruby
# frozen_string_literal: true

# timeline_series.rb: K heap dumps of one process in which exactly one
# allocation site grows, and the truth.
#
#   ruby examples/workloads/timeline_series.rb --out DIR [--steps 10] [--warmup 2]
#        [--scale 1] [--seed 42] [--requests R] [--gzip]
#
# Boots the Desk help-desk application (lib/desk.rb) with one planted leak,
# "receipts": every request keeps a 64-byte String in
# Desk::Receipts::BY_REQUEST, so that site grows by exactly R Strings per
# step.  Every step runs the same R requests (a fresh Random of the same
# seed), so everything else is in the same state after each step: every
# type other than STRING has the same count in every dump.  W warm-up
# steps run first and dump to a scratch file (the first runs of a code
# path allocate inline caches).  DIR/step_01.json ... step_K.json and
# DIR/truth.json, computed in this process from ObjectSpace (README.md).
#
# Runs unchanged on CRuby 3.1+ and on ruby.wasm (core, objspace, json).

require "objspace"
ObjectSpace.trace_object_allocations_start
require_relative "lib/heap_workload"
require_relative "lib/desk"

W = HeapWorkload
USAGE = "usage: ruby #{File.basename(__FILE__)} --out DIR [--steps K] [--warmup W] [--scale S] " \
        "[--seed N] [--requests R] [--gzip]"
OPTS = W.parse_options(ARGV, USAGE, {
  "out" => [nil, :string, "directory for step_NN.json and truth.json (created)"],
  "steps" => [10, :int, "measured steps, one dump each"],
  "warmup" => [2, :int, "steps run before the first dump"],
  "scale" => [1.0, :float, "size of the application's data (dump size grows about linearly)"],
  "seed" => [42, :int, "seed of the simulated client and the data"],
  "requests" => [nil, :int, "requests per step (default max(100, 100 x scale))"],
  "gzip" => [false, :flag, "gzip the dumps (needs Ruby's zlib); truth.json stays plain"],
})
abort "#{USAGE}\n(--out is required)" unless OPTS["out"]
abort "--scale must be > 0" unless OPTS["scale"].positive?
abort "--steps must be 1..99" unless (1..99).cover?(OPTS["steps"])
abort "--warmup must be >= 1" unless OPTS["warmup"] >= 1
OUT = File.expand_path(OPTS["out"])
Dir.mkdir(OUT) unless Dir.exist?(OUT)
STEPS = OPTS["steps"]
WARMUP = OPTS["warmup"]
REQUESTS = OPTS["requests"] || [100, (100 * OPTS["scale"]).round].max
abort "--requests must be at least 12" if REQUESTS < 12
DESK = File.expand_path("lib/desk.rb", __dir__)
SITE_LINE = W.site_lines(DESK).fetch("receipts").first

# The growing site's live Strings and their memsize (run before each dump;
# what it allocates is garbage by the dump's GC).
def site_census
  n = 0
  bytes = 0
  ObjectSpace.each_object(String) do |s|
    next unless ObjectSpace.allocation_sourceline(s) == SITE_LINE && ObjectSpace.allocation_sourcefile(s) == DESK

    n += 1
    bytes += ObjectSpace.memsize_of(s)
  end
  [n, bytes]
end

t0 = W.clock
snaps = W::Snapshots.new(OUT, names: (1..STEPS).map { |k| format("step_%02d.json", k) }) # its warm-up dumps are small before the application boots
app = Desk::App.new(scale: OPTS["scale"], rng: Random.new(OPTS["seed"]), leaks: [:receipts])
(WARMUP + STEPS).times do |k|
  rng = Random.new(OPTS["seed"] + 1)
  app.run(REQUESTS, rng)
  rng = nil
  GC.start
  n, bytes = site_census
  name = k >= WARMUP ? format("step_%02d.json", k - WARMUP + 1) : nil
  snaps.take(name, { "site_count" => n, "site_memsize" => bytes, "holder_entries" => Desk::Receipts::BY_REQUEST.size,
                     "holder_memsize" => ObjectSpace.memsize_of(Desk::Receipts::BY_REQUEST) })
end
records = snaps.records

# ------------------------------------------------------------------ truth
holder = Desk::Receipts::BY_REQUEST
hrow = W.row_of(holder)
counts = records.map { |r| r["extra"]["site_count"] }
expected = (1..STEPS).map { |k| (WARMUP + k) * REQUESTS }
types = records.flat_map { |r| r["by_type"].keys }.uniq.sort
series = types.to_h { |t| [t, records.map { |r| r["by_type"].fetch(t, 0) }] }
others = series.reject { |t, _| t == "STRING" }
others_change = others.values.map { |ys| ys.max - ys.min }.max || 0
problems = []
entries = records.map { |r| r["extra"]["holder_entries"] }
problems << "entries of the holder #{entries}, planned #{expected}" if entries != expected
# The census may also meet a temporary of the site's line that a conservative
# root still holds (ruby.wasm keeps 2): the site must grow by exactly R.
if counts.each_cons(2).any? { |a, b| b - a != REQUESTS } || counts.zip(entries).any? { |c, e| c < e }
  problems << "growing site counts #{counts}, planned #{expected} (+#{REQUESTS} per step)"
end
unless others_change.zero?
  moved = others.select { |_, ys| ys.uniq.size > 1 }
  problems << "types other than STRING are not flat: #{moved}"
end
string_others = series.fetch("STRING").zip(counts).map { |s, c| s - c }
problems << "Strings other than the growing site's are not flat: #{string_others}" if string_others.uniq.size > 1

truth = {
  "workload" => "timeline_series",
  "format" => 1,
  "ruby" => RUBY_DESCRIPTION,
  "ruby_version" => RUBY_VERSION,
  "platform" => RUBY_PLATFORM,
  "pointer_bits" => 0.size * 8,
  "scale" => OPTS["scale"],
  "seed" => OPTS["seed"],
  "steps" => STEPS,
  "warmup_steps" => WARMUP,
  "requests_per_step" => REQUESTS,
  "gzip" => OPTS["gzip"],
  "source" => DESK,
  "dumper_file" => snaps.dumper_file,
  "growing" => {
    "type" => "STRING",
    "class" => "String",
    "file" => DESK,
    "line" => SITE_LINE,
    "site" => "#{DESK}:#{SITE_LINE}",
    "expected_count_per_step" => REQUESTS,
    "count_at_step" => counts,
    "count_deltas" => counts.each_cons(2).map { |a, b| b - a },
    "memsize_at_step" => records.map { |r| r["extra"]["site_memsize"] },
    "memsize_deltas" => records.each_cons(2).map { |a, b| b["extra"]["site_memsize"] - a["extra"]["site_memsize"] },
    "holder" => {
      "address" => hrow[0], "type" => hrow[1], "class" => hrow[2], "expr" => "Desk::Receipts::BY_REQUEST",
      "file" => hrow[3], "line" => hrow[4],
      "root_path" => W.root_path("vm", Object, Desk, Desk::Receipts, holder),
      "entries_at_step" => records.map { |r| r["extra"]["holder_entries"] },
      "memsize_at_step" => records.map { |r| r["extra"]["holder_memsize"] },
    },
  },
  "other_types_max_count_change" => others_change,
  "snapshots" => records,
  "problems" => problems,
}
if OPTS["gzip"]
  gz = W.gzip_files(OUT, records.map { |r| r["file"] })
  records.each { |r| r["gz_bytes"] = gz[r["file"]] }
end
truth["seconds"] = (W.clock - t0).round(3)
W.write_json(File.join(OUT, "truth.json"), truth)
warn format("timeline_series: %d steps x %d requests, %s .. %s objects, site +%s per step, %.1f s%s",
            STEPS, REQUESTS, records.first["objects"], records.last["objects"], truth["growing"]["count_deltas"].uniq.inspect,
            W.clock - t0, problems.empty? ? "" : "\nPROBLEMS:\n  #{problems.join("\n  ")}")
exit(problems.empty? ? 0 : 3)
