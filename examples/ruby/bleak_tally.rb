#!/usr/bin/env ruby
# frozen_string_literal: true

# bleak_tally.rb - the bleak_house report with heapscope: the 20 allocation
# sites (file:line:class) holding the most live objects.  Same job and same
# output as examples/c/bleak_tally.c.
#
#   ruby bleak_tally.rb heap.json.gz                      # installed gem
#   ruby -I bindings/ruby/lib bleak_tally.rb heap.json    # from the repository
#
# To get allocation sites into a dump, the Ruby process must trace
# allocations before the objects are made:
#
#   require "objspace"
#   ObjectSpace.trace_object_allocations_start
#   ...
#   File.open("heap.json", "w") { |f| ObjectSpace.dump_all(output: f) }
#
# (or, in-process and without a file: Heapscope.snapshot.tally(top: 20)).

require "heapscope"

if ARGV.size != 1
  warn "usage: #{$PROGRAM_NAME} DUMP"
  exit 2
end

begin
  heap = Heapscope::Heap.load(ARGV[0])
rescue Heapscope::Error => e
  # Every library failure is a Heapscope::Error subclass (ParseError,
  # NotADumpError, IOError, ...) carrying the library's message.
  warn "#{ARGV[0]}: #{e.message}"
  exit 1
end

# Group live objects by bleak_house's key.  Objects allocated while tracing
# was off land in "(none):0:CLASS".  bleak_house counted every live object:
# keep_tracer: keeps Ruby's allocation tracer too (its row says
# <allocation tracer>), as the C example, which counts every object.
rows = heap.tally(by: "file:line:class", top: 20, sort: :count, keep_tracer: true)

puts "#{heap.object_count} objects, #{rows.group_count} distinct file:line:class sites; top #{rows.size}:"
rows.each { |r| printf("%10d %12d  %s\n", r.count, r.memsize, r.key) }
