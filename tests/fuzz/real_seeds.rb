# frozen_string_literal: false
#
# real_seeds.rb - fuzzing seeds cut from real heap dumps, written by the
# Ruby that runs this script (ObjectSpace.dump_all), so the fuzzers start
# from what Ruby really writes: every record type it has, its key order and
# escapes, ROOT and (with full: true) NONE records, SHAPE records on 3.2+.
#
#   ruby tests/fuzz/real_seeds.rb OUTDIR [--max-bytes N] [--slices N] [--seed N]
#
# Writes OUTDIR/dump.json and OUTDIR/dump-full.json (the whole dumps), and
# OUTDIR/slices/real-rubyX.Y-*.json: runs of whole lines of at most
# --max-bytes bytes (default 4000) from the start, around ROOT, CLASS,
# IMEMO and NONE records, the end, and random places (--slices of those,
# default 40; --seed picks them, default 1).  scripts/fuzz.sh --real runs
# it; the few real-ruby3.1-* seeds under corpus/fuzz_parse were made so.
#
# SPDX-License-Identifier: MIT

require "objspace"
require "set"

out = ARGV.shift or abort "usage: ruby #{$0} OUTDIR [--max-bytes N] [--slices N] [--seed N]"
max_bytes = 4000
nrandom = 40
seed = 1
until ARGV.empty?
  case (a = ARGV.shift)
  when "--max-bytes" then max_bytes = Integer(ARGV.shift)
  when "--slices" then nrandom = Integer(ARGV.shift)
  when "--seed" then seed = Integer(ARGV.shift)
  else abort "real_seeds.rb: unknown option #{a}"
  end
end

# A heap with a bit of everything, allocated with tracing on so records
# carry file, line and method.
module Shop
  Item = Struct.new(:sku, :price, :tags)
  class Order
    attr_reader :items, :notes

    def initialize(n)
      @items = Array.new(n) { |i| Item.new("SKU-#{i}", i * 1.25, [:new, "tag#{i % 3}"]) }
      @notes = { created: Time.now, by: "user-#{n}", "raw" => "caf\u00e9 \u2603 \"q\" \\ \t\x01" }
      @total = @items.sum(&:price)
    end
  end
  module Audit; end
end

ObjectSpace.trace_object_allocations_start
keep = []
keep << Array.new(40) { |i| Shop::Order.new(i % 7) }
keep << (1..300).map { |i| "string #{i} " * (i % 5) }
keep << (1..50).to_h { |i| ["k#{i}".to_sym, [i, i.to_s, i.to_f, 2**(64 + i)]] }
keep << Set.new(1..20) << (1r / 3) << Complex(1, 2) << (1..10) << /a(b+)c/i
keep << ->(x) { x * 2 } << proc { |y| y } << method(:puts) << "frozen".freeze
keep << "bin\xff\xfe".b << :"odd sym \u2603" << Class.new { def hi; end }.new
keep << Module.new << Shop::Audit << Thread.new { :done }.tap(&:join)
keep << Mutex.new << [].freeze << {} << "" << Object.new << StandardError.new("boom")
keep << Enumerator.new { |y| y << 1 } << ObjectSpace::WeakMap.new
keep << Data.define(:x, :y).new(x: 1, y: 2) if defined?(Data)
GC.start

Dir.mkdir(out) unless Dir.exist?(out)
slices_dir = File.join(out, "slices")
Dir.mkdir(slices_dir) unless Dir.exist?(slices_dir)
File.open(File.join(out, "dump.json"), "w") { |f| ObjectSpace.dump_all(output: f) }
File.open(File.join(out, "dump-full.json"), "w") { |f| ObjectSpace.dump_all(output: f, full: true) }
ObjectSpace.trace_object_allocations_stop
keep.clear

ver = RUBY_VERSION.split(".").first(2).join(".")
rng = Random.new(seed)
written = 0

# Whole lines from `from` on (from the first that fits), while they fit
# in max_bytes.
slice = lambda do |lines, from|
  acc = +""
  i = from
  i += 1 while i < lines.size && lines[i].bytesize > max_bytes
  while i < lines.size && acc.bytesize + lines[i].bytesize <= max_bytes
    acc << lines[i]
    i += 1
  end
  acc
end

emit = lambda do |name, text|
  next if text.empty?
  File.binwrite(File.join(slices_dir, "real-ruby#{ver}-#{name}.json"), text)
  written += 1
end

%w[dump dump-full].each do |which|
  lines = File.binread(File.join(out, "#{which}.json")).lines
  emit.call("#{which}-start", slice.call(lines, 0))
  emit.call("#{which}-end", slice.call(lines, [lines.size - 12, 0].max))
  { "root" => '"type":"ROOT"', "class" => '"type":"CLASS"', "imemo" => '"type":"IMEMO"',
    "none" => '"type":"NONE"', "shape" => '"type":"SHAPE"', "struct" => '"struct":',
    "escapes" => "\\u" }.each do |kind, needle|
    at = lines.index { |l| l.include?(needle) }
    emit.call("#{which}-#{kind}", slice.call(lines, [at - 2, 0].max)) if at
  end
  nrandom.times do |k|
    emit.call("#{which}-random-#{k}", slice.call(lines, rng.rand(lines.size)))
  end
end
puts "real_seeds: #{written} slices of at most #{max_bytes} bytes in #{slices_dir} (Ruby #{RUBY_VERSION})"
