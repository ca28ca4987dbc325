#!/usr/bin/env ruby
# frozen_string_literal: true

# leak_diff.rb - the heapleak report with heapscope: objects allocated
# between dump A and dump B that are still alive in dump C, grouped by
# allocation site, with a few addresses to look up with `heapscope show`.
# Same job and same output as examples/c/leak_diff.c.
#
#   ruby leak_diff.rb heap_1.json heap_2.json heap_3.json
#   ruby -I bindings/ruby/lib leak_diff.rb A B C     # from the repository
#
# The recipe: dump after warm-up (A), after running the suspect code (B),
# and after running it again (C).  What B added and C still holds is what
# the code leaks.  In-process, Heapscope.find_leaks { code } does all of it.

require "heapscope"

if ARGV.size != 3
  warn "usage: #{$PROGRAM_NAME} A B C"
  exit 2
end

# Given paths, Heapscope.diff keeps only C in memory and streams A and B
# past it, so three multi-gigabyte dumps cost about as much as one.
begin
  diff = Heapscope.diff(*ARGV)
rescue Heapscope::Error => e
  warn "diff: #{e.message}"
  exit 1
end

puts "leaked: #{diff.count} objects, #{diff.memsize} bytes"

# Say plainly when the dumps cannot support an exact answer (no allocation
# tracing, partial dumps, compaction), and when the dumps cannot be one
# process's series (repeated, other processes, out of order).
diff.warnings.each { |w| puts "warning: #{w}" }

# Group the leaked objects; each group knows its members' addresses (in C).
diff.groups(by: "file:line:class", top: 10).each do |g|
  printf("%8d  %s\n         e.g.", g.count, g.key)
  g.addresses(3).each { |a| printf(" 0x%x", a) }
  print "\n"
end
