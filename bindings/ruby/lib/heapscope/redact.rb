# frozen_string_literal: true

module Heapscope
  # What Heapscope.redact did: the copy written (+path+), its lines, the
  # string values replaced, the values kept because they were placeholders
  # already (a redacted dump redacted again), and the lines the parser
  # found damaged (copied all the same, their values replaced as text):
  # +skipped_lines+ in all, +skipped+ by reason ({ "bad_json" => 2, ... }).
  Redaction = Struct.new(:path, :lines, :values, :kept, :skipped_lines, :skipped) do
    def to_s
      "#{path}: #{lines} lines, #{values} string values redacted"
    end
  end

  class << self
    # Write a copy of the dump +input+ (a path; plain or gzip) to the path
    # +output+ that is safe to share, as `heapscope redact IN OUT` does:
    # the "value" of every STRING, SYMBOL and FLOAT record is replaced by
    # its length and the XXH3-64 hash of its bytes, and every other byte
    # stays the same, so that heapscope's answers (waste included) on the
    # copy equal those on the original.
    #
    # gzip: true writes gzip; by default the output is gzip when its name
    # ends in ".gz" (gzip: false with such a name is an ArgumentError).
    # gzip_level: 1-9 (default 6).  Load options: strict:, max_memory:,
    # progress: (see Heap.load; max_line_bytes: has no effect, every line
    # is copied).  A regular +output+ is replaced only by a whole copy
    # (written beside it, then renamed); +output+ naming +input+ raises
    # Heapscope::InvalidArgumentError.  Runs without the GVL; Thread#raise
    # and Ctrl-C stop it (CancelledError from progress: returning
    # :cancel).  Returns a Heapscope::Redaction.
    def redact(input, output, gzip: nil, gzip_level: nil, **load)
      raise ArgumentError, "redact: load option values: does not apply" if load.key?(:values)
      input = redact_path(input, "input")
      output = redact_path(output, "output")
      if gzip == false && output.end_with?(".gz")
        raise ArgumentError, "gzip: false, but the output name #{output} ends in .gz (always gzip)"
      end
      r = Native._redact(input, output, Heap.check_opts(load), gzip, gzip_level)
      Redaction.new(output.dup.freeze, *r)
    end

    private

    def redact_path(p, what)
      return p.to_path if p.respond_to?(:to_path)
      return p if p.is_a?(String)
      raise TypeError, "redact: #{what} must be a path (String or Pathname), not #{p.class}"
    end
  end
end
