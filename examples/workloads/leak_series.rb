#!/usr/bin/env ruby
# frozen_string_literal: true

# leak_series.rb: three heap dumps of one leaking process, and the truth.
#
#   ruby examples/workloads/leak_series.rb --out DIR [--scale 1] [--seed 42] [--gzip] [--variants]
#
# Boots the Desk help-desk application (lib/desk.rb) with five planted leaks
# and runs three iterations of R requests; after each, a heap snapshot:
# DIR/heap_1.json, heap_2.json, heap_3.json (.gz with --gzip).  The objects
# that leak in iteration 2 are what a 3-dump diff (in 2, not in 1, still in
# 3) must find.  DIR/truth.json is computed in this same process, from
# ObjectSpace (see README.md next to this script for every field).  With
# --variants, the same window after the third iteration also writes
# heap_3_full.json (full: true), heap_3_no_shapes.json (shapes: false, Ruby
# 3.2+) and heap_since.json (since: the first generation of iteration 2).
#
# Runs unchanged on CRuby 3.1+ and on ruby.wasm (core, objspace, json).

require "objspace"
ObjectSpace.trace_object_allocations_start
require_relative "lib/heap_workload"
require_relative "lib/desk"

W = HeapWorkload
USAGE = "usage: ruby #{File.basename(__FILE__)} --out DIR [--scale S] [--seed N] [--requests R] [--gzip] [--variants]"
OPTS = W.parse_options(ARGV, USAGE, {
  "out" => [nil, :string, "directory for heap_1..3.json and truth.json (created)"],
  "scale" => [1.0, :float, "size of the application's data (dump size grows about linearly)"],
  "seed" => [42, :int, "seed of the simulated client and the data"],
  "requests" => [nil, :int, "requests per iteration (default max(100, 100 x scale))"],
  "gzip" => [false, :flag, "gzip the dumps (needs Ruby's zlib); truth.json stays plain"],
  "variants" => [false, :flag, "also dump with full: true, shapes: false and since: after iteration 3"],
})
abort "#{USAGE}\n(--out is required)" unless OPTS["out"]
abort "--scale must be > 0" unless OPTS["scale"].positive?
OUT = File.expand_path(OPTS["out"])
Dir.mkdir(OUT) unless Dir.exist?(OUT)
LEAKS = %i[audit subscriptions memo hooks pinned].freeze
REQUESTS = OPTS["requests"] || [100, (100 * OPTS["scale"]).round].max
abort "--requests must be at least 24 (every leak once)" if REQUESTS < 24

t0 = W.clock
VARIANTS = OPTS["variants"] ? [["heap_3_full.json", :full], ["heap_3_no_shapes.json", :no_shapes],
                                ["heap_since.json", :since]] : []
NAMES = %w[heap_1.json heap_2.json heap_3.json] + VARIANTS.map(&:first)
snaps = W::Snapshots.new(OUT, names: NAMES, variants: OPTS["variants"]) # its warm-up dumps are small before the application boots
rng = Random.new(OPTS["seed"])
app = Desk::App.new(scale: OPTS["scale"], rng: rng, leaks: LEAKS)
3.times do |i|
  app.run(REQUESTS, rng)
  snaps.take("heap_#{i + 1}.json")
  snaps.since = snaps.fence if i.zero? # the first generation of iteration 2
end
snaps.take(nil, nil, dumps: VARIANTS) unless VARIANTS.empty?
t_dumps = W.clock - t0
records, variants = snaps.records.partition { |r| r["variant"] == "plain" }

# ------------------------------------------------------------------ truth
# Iteration 2 ran between the fence after dump 1 and the GC before dump 2.
gmin = records[0]["fence_gc_count"]
gmax = records[1]["gc_count"]
sites = W.site_lines(File.expand_path("lib/desk.rb", __dir__))
desk_file = File.expand_path("lib/desk.rb", __dir__)

# name => [holder, root path, expression, direct entries per iteration]
schedule = ->(every, offset) { (0...REQUESTS).count { |j| j % every == offset } }
holders = {
  "audit" => [Desk::AuditTrail::LINES, W.root_path("vm", Object, Desk, Desk::AuditTrail, Desk::AuditTrail::LINES),
              "Desk::AuditTrail::LINES", REQUESTS],
  "subscriptions" => [$desk_subscriptions, W.root_path("global_tbl", $desk_subscriptions),
                      "$desk_subscriptions", schedule.call(4, 1)],
  "memo" => [Desk::Customer.match_memo, W.root_path("vm", Object, Desk, Desk::Customer, Desk::Customer.match_memo),
             "Desk::Customer.@match_memo", schedule.call(6, 2)],
  "hooks" => [Desk::Hooks.after_reply, W.root_path("vm", Object, Desk, Desk::Hooks, Desk::Hooks.after_reply),
              "Desk::Hooks.@after_reply", schedule.call(12, 3)],
  "pinned" => [Desk::Überblick::PINNED, W.root_path("vm", Object, Desk, Desk::Überblick, Desk::Überblick::PINNED),
               "Desk::Überblick::PINNED", schedule.call(24, 5)],
}

problems = []
leaks = {}
all_rows = {}
holders.each do |name, (holder, path, expr, per_iteration)|
  objs, internal = W.leaked_objects(holder, gmin, gmax)
  rows = objs.map { |o| W.row_of(o) }
  rows.each { |r| all_rows[r[0]] = r }
  direct = ObjectSpace.reachable_objects_from(holder).count do |o|
    !o.is_a?(ObjectSpace::InternalObjectWrapper) &&
      (g = ObjectSpace.allocation_generation(o)) && g >= gmin && g < gmax
  end
  # a Hash holder reaches its key and its value: count entries by value
  direct = holder.each_value.count { |v| (g = ObjectSpace.allocation_generation(v)) && g >= gmin && g < gmax } if holder.is_a?(Hash)
  problems << "#{name}: #{direct} entries added in iteration 2, planned #{per_iteration}" if direct != per_iteration
  hrow = W.row_of(holder)
  planted = sites.fetch(name).map { |line| "#{desk_file}:#{line}" }
  by_site = W.tally(rows, nil) { |r| "#{r[3] || '(none)'}:#{r[4] || 0}:#{r[2]}" }
  leaks[name] = {
    "holder" => { "address" => hrow[0], "type" => hrow[1], "class" => hrow[2], "expr" => expr,
                  "file" => hrow[3], "line" => hrow[4], "entries" => holder.size },
    "root_path" => path,
    "entries_per_iteration" => per_iteration,
    "sites" => planted,
    "count" => rows.size,
    "memsize" => rows.sum { |r| r[6] },
    "internal_objects" => internal,
    "by_type" => W.tally(rows, nil) { |r| r[1] },
    "by_site" => by_site,
    "planted_by_site" => by_site.select { |k, _| planted.any? { |s| k.start_with?("#{s}:") } },
    "objects" => rows,
  }
end

# Every object alive at a planted site that iteration 2 allocated must be
# one the walk from its holder found: nothing else may sit on those lines.
planted_lines = sites.values_at(*holders.keys).flatten.map { |l| [desk_file, l] }
census = W.census(planted_lines, gmin, gmax)
walked = Hash.new(0)
leaks.each_value { |l| l["planted_by_site"].each { |k, n| walked[k] += n } }
if census != walked.sort.to_h
  problems << "census of the planted lines #{census} differs from the leak walk #{walked.sort.to_h}"
end

truth = {
  "workload" => "leak_series",
  "format" => 1,
  "ruby" => RUBY_DESCRIPTION,
  "ruby_version" => RUBY_VERSION,
  "platform" => RUBY_PLATFORM,
  "pointer_bits" => 0.size * 8,
  "scale" => OPTS["scale"],
  "seed" => OPTS["seed"],
  "requests_per_iteration" => REQUESTS,
  "gzip" => OPTS["gzip"],
  "source" => desk_file,
  "dumper_file" => snaps.dumper_file,
  "window" => { "generation_min" => gmin, "generation_max_exclusive" => gmax },
  "snapshots" => records,
  "variants" => variants,
  "leaks" => leaks,
  "leaked" => {
    "count" => all_rows.size,
    "memsize" => all_rows.values.sum { |r| r[6] },
    "by_site" => W.tally(all_rows.values, nil) { |r| "#{r[3] || '(none)'}:#{r[4] || 0}:#{r[2]}" },
  },
  "planted_census" => census,
  "problems" => problems,
}
if OPTS["gzip"]
  gz = W.gzip_files(OUT, (records + variants).map { |r| r["file"] })
  (records + variants).each { |r| r["gz_bytes"] = gz[r["file"]] }
end
truth["seconds"] = { "dumps" => t_dumps.round(3), "total" => (W.clock - t0).round(3) }
W.write_json(File.join(OUT, "truth.json"), truth)
warn format("leak_series: 3 dumps (%s objects), %d leaked objects in %d leaks, %.1f s%s",
            records.map { |r| r["objects"] }.join(" / "), all_rows.size, leaks.size, W.clock - t0,
            problems.empty? ? "" : "\nPROBLEMS:\n  #{problems.join("\n  ")}")
exit(problems.empty? ? 0 : 3)
