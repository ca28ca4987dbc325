# frozen_string_literal: true

# heapscope: analyse Ruby heap dumps (ObjectSpace.dump_all) with libheapscope.
#
#   require "heapscope"
#   heap = Heapscope::Heap.load("heap.json.gz")
#   puts heap                                      # `heapscope summary`
#   heap.summary                                   # => { total: { count:, memsize: }, by_type: ... }
#   puts heap.tally(by: "file:line:class", top: 20) # bleak_house's report
#   diff = Heapscope.diff("h1.json", "h2.json", "h3.json")
#   puts diff.groups(by: "class")                  # what leaked
#   puts diff.report                               # what holds it (`heapscope suspects`)
#   puts Heapscope.timeline(Dir["step_*.json"])    # what grows over time (`heapscope timeline`)
#   File.write("r.html", Heapscope.report(paths))  # all of it on one page (`heapscope report`)
#
#   Heapscope.snapshot                             # this process, no temp file
#   Heapscope.snapshot(fork: true)                 # written by a fork: one moment, a short stall
#   Heapscope.find_leaks { run_the_suspect_code }  # 3 runs, 3 snapshots, a Diff
#
#   require "heapscope/minitest"                   # assert_no_leaks { ... }
#   require "heapscope/rspec"                      # expect { ... }.not_to leak_memory
#
# See README.md.
require_relative "heapscope/version"
require_relative "heapscope/heapscope" # the C extension
require_relative "heapscope/report"
require_relative "heapscope/rows"
require_relative "heapscope/heap"
require_relative "heapscope/diff"
require_relative "heapscope/waste"
require_relative "heapscope/timeline"
require_relative "heapscope/check"
require_relative "heapscope/redact"
require_relative "heapscope/html_report"
require_relative "heapscope/snapshot"
require_relative "heapscope/fork"
