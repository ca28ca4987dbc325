# frozen_string_literal: true

module Heapscope
  # The options every report method takes (Heap#report, Tally#report,
  # Diff#report, DominatorTree#report, Heap#show, Heap#root_paths,
  # Timeline#report, Export#report, ...).
  # The output is the library's writer's, byte for byte what the
  # `heapscope` command prints for the same dump and options:
  #
  #   format:   :text (default), :json, or what else the result has a
  #             writer for (:csv for tallies, diffs and timelines, :svg for
  #             timelines and histograms, :dot for root paths, :folded for
  #             the dominator tree); any other raises UnsupportedError
  #   width:    text: columns (default 100; longer keys are cut in the
  #             middle with "…", keeping the file name and line)
  #   ascii:    text: "..." instead of "…", no other UTF-8 of our own
  #   pretty:   JSON indented by two spaces
  #   warnings: false leaves the "warning: ..." lines out of the text (the
  #             CLI prints them on stderr instead; JSON always has them)
  #   io:       write to this IO (anything with #write), in chunks, and
  #             return it, instead of returning a String
  #
  # Writers run without the GVL; Ctrl-C, Thread#raise and Timeout stop
  # them.  The JSON documents are described in docs/JSON.md.
  module Report
    COMMON = %i[format width ascii pretty warnings io].freeze

    module_function

    # The options Hash of the extension's _write methods: the caller's
    # +opts+ (checked against the common keys) and the method's own
    # (format:, top:, names: ...).
    def options(opts, **own) # :nodoc:
      bad = opts.keys - COMMON
      raise ArgumentError, "unknown report option#{'s' if bad.size > 1}: #{bad.join(', ')}" unless bad.empty?
      opts.merge(own)
    end

    # JSON of a report, parsed with symbol keys.
    def parse(json) # :nodoc:
      JSON.parse(json, symbolize_names: true)
    end

    # "0x7f..." of a JSON document as an Integer (nil stays nil).
    def address(s) # :nodoc:
      s && Integer(s, 16)
    end
  end
end
