#!/usr/bin/env ruby
# frozen_string_literal: false
#
# waste.rb - a workload with planted waste, for `heapscope waste` and its
# tests: duplicate strings (frozen and not, at one site and across two,
# short and long, in the application and in a fake gem), empty Arrays,
# Hashes and Strings, and oversized buffers (Strings made with
# String.new(capacity:), Arrays and Hashes emptied by delete_if), each at
# a line of its own.
#
#   ruby examples/workloads/waste.rb OUT_DIR [--scale N] [--gzip]
#
# Writes OUT_DIR/waste.json (ObjectSpace.dump_all with allocation tracing;
# also waste.json.gz with --gzip) and OUT_DIR/waste_truth.json: for every
# planted set, its kind, type, file, line and count, the value of the
# duplicates, and each object's memsize, bytesize and frozen flag as Ruby
# itself reports them (ObjectSpace.memsize_of), measured in this process
# right before the dump.  Runs on Debian's Ruby 3.1 (and later).
#
# The string literals below are not frozen (this file says so above):
# every evaluation of "..." makes a new String, as in code without the
# magic comment.

require 'objspace'
require 'fileutils'

out = ARGV[0] or abort 'usage: ruby waste.rb OUT_DIR [--scale N] [--gzip]'
scale = ARGV.include?('--scale') ? Float(ARGV[ARGV.index('--scale') + 1]) : 1.0
gzip = ARGV.include?('--gzip')
n = ->(count) { [(count * scale).round, 2].max }
FileUtils.mkdir_p(out)
out = File.expand_path(out)

# A fake gem, so that --by gem has a gem to show: OUT/gems/wastegem-1.2.3.
gem_dir = File.join(out, 'gems', 'wastegem-1.2.3', 'lib')
FileUtils.mkdir_p(gem_dir)
GEM_FILE = File.join(gem_dir, 'wastegem.rb')
File.write(GEM_FILE, <<~RUBY)
  module Wastegem
    def self.labels(count)
      Array.new(count) { "wastegem-label" }
    end
  end
RUBY

ObjectSpace.trace_object_allocations_start
require GEM_FILE

PENDING = 'waste-dup-pending'.freeze # embedded: a dup is a copy, not shared
LOREM = 'lorem ipsum dolor sit amet, '.freeze
PLANTS = []
KEEP = []

def plant(kind, type, line, objects, file: __FILE__, value: nil)
  # the file as Ruby names it in allocation info (as the script was run)
  PLANTS << { kind: kind, type: type, file: file, line: line, value: value, objects: objects }
  KEEP << objects
end

# duplicate strings, not frozen, one site
c = n.(3000)
a1 = Array.new(c); i = 0; while i < c; a1[i] = "waste-dup-active"; i += 1; end
plant(:duplicate, :STRING, __LINE__ - 1, a1, value: a1.first)

# duplicate strings, frozen (not interned), one site
c = n.(2000)
a2 = Array.new(c); i = 0; while i < c; a2[i] = PENDING.dup.freeze; i += 1; end
plant(:duplicate, :STRING, __LINE__ - 1, a2, value: a2.first)

# one value made at two sites: 1500 here, 500 below
c = n.(1500)
a3 = Array.new(c); i = 0; while i < c; a3[i] = "waste-dup-two-sites"; i += 1; end
plant(:duplicate, :STRING, __LINE__ - 1, a3, value: a3.first)
c = n.(500)
a4 = Array.new(c); i = 0; while i < c; a4[i] = "waste-dup-two-sites"; i += 1; end
plant(:duplicate, :STRING, __LINE__ - 1, a4, value: a4.first)

# a long duplicated value (not embedded: 140 bytes on the heap)
c = n.(800)
a5 = Array.new(c); i = 0; while i < c; a5[i] = LOREM * 5; i += 1; end
plant(:duplicate, :STRING, __LINE__ - 1, a5, value: a5.first)

# a value with escapes in the dump ("\t", "\"", "\\")
c = n.(600)
a6 = Array.new(c); i = 0; while i < c; a6[i] = "waste\t\"dup\"\\esc"; i += 1; end
plant(:duplicate, :STRING, __LINE__ - 1, a6, value: a6.first)

# duplicates made in a gem
c = n.(700)
a7 = Wastegem.labels(c)
plant(:duplicate, :STRING, 3, a7, file: GEM_FILE, value: a7.first)

# empty collections
c = n.(4000)
e1 = Array.new(c); i = 0; while i < c; e1[i] = []; i += 1; end
plant(:empty, :ARRAY, __LINE__ - 1, e1)
c = n.(3000)
e2 = Array.new(c); i = 0; while i < c; e2[i] = {}; i += 1; end
plant(:empty, :HASH, __LINE__ - 1, e2)
c = n.(2500)
e3 = Array.new(c); i = 0; while i < c; e3[i] = String.new; i += 1; end
plant(:empty, :STRING, __LINE__ - 1, e3)

# oversized buffers: strings with a large capacity and a few bytes
c = n.(40)
o1 = Array.new(c); i = 0; while i < c; o1[i] = String.new(capacity: 10_000); i += 1; end
o1.each_with_index { |s, k| s << "buffer #{k}" }
plant(:oversized, :STRING, __LINE__ - 2, o1)

# arrays of 1000 elements cut to 10 by delete_if (the buffer stays)
c = n.(30)
o2 = Array.new(c); i = 0; while i < c; o2[i] = Array.new(1000) { |k| k }; i += 1; end
o2.each { |x| x.delete_if { |k| k >= 10 } }
plant(:oversized, :ARRAY, __LINE__ - 2, o2)

# hashes of 1000 entries cut to 5 (the table stays)
c = n.(20)
o3 = Array.new(c); i = 0; while i < c; o3[i] = {}; i += 1; end
o3.each { |h| 1000.times { |k| h[k] = k }; h.delete_if { |k, _| k >= 5 } }
plant(:oversized, :HASH, __LINE__ - 2, o3)

GC.start
GC.start
truth = PLANTS.map do |p|
  objs = p[:objects]
  {
    kind: p[:kind].to_s, type: p[:type].to_s, file: p[:file], line: p[:line], value: p[:value],
    count: objs.size,
    memsize: objs.map { |o| ObjectSpace.memsize_of(o) },
    bytesize: objs.map { |o| o.respond_to?(:bytesize) ? o.bytesize : o.size },
    frozen: objs.count(&:frozen?),
  }
end
dump = File.join(out, 'waste.json')
File.open(dump, 'w') { |f| ObjectSpace.dump_all(output: f) }
ObjectSpace.trace_object_allocations_stop

require 'json'
File.write(File.join(out, 'waste_truth.json'),
           JSON.pretty_generate(ruby: RUBY_VERSION, script: File.expand_path(__FILE__),
                                dump: dump, scale: scale, plants: truth))
system('gzip', '-kf', '-n', dump) or abort 'gzip failed' if gzip
puts "waste.rb: #{dump} (#{File.size(dump)} bytes), #{truth.size} planted sets"
