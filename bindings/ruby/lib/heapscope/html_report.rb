# frozen_string_literal: true

module Heapscope
  # The library's HTML report (`heapscope report`): Heapscope.report.
  module HtmlReport
    # The library's codes (HSCOPE_HTML_*).
    NO_CLASS_EDGES = 0x1
    KEEP_DUMPER = 0x2
    NO_WASTE = 0x4
    KEEP_TRACER = 0x8
  end

  class << self
    # `heapscope report`: one self-contained HTML page (no external assets)
    # about the dump files +paths+, written by the library
    # (hscope_html_report_*), the same bytes as the CLI's page but for the
    # time it says it was generated:
    #
    # - 1 dump: summary, histograms, allocation sites, retainers and the
    #   dominator-tree icicle;
    # - 2 or 3 dumps: also the diff (what leaked) and the suspects (what
    #   holds it), in the order given;
    # - 2+ dumps: also the timeline (what grows, grouped by +by+, dumps put
    #   in time order by +order+ as for Heapscope.timeline);
    # - the waste of the last dump (as Heapscope.waste; values as length
    #   and hash only) unless waste: false, which saves its pass over the
    #   file.
    #
    # top: rows per table (nil or 0: all); keep_dumper: keep the objects
    # the dumper allocated; keep_tracer: keep Ruby's allocation tracer (left
    # out of every section by default and said, as `heapscope report`);
    # class_edges: false for the dominator tree
    # without object -> class edges; title: the page's <title>; io: write
    # the page to this IO (anything with #write) in chunks and return it,
    # instead of returning a String.  The load options as Heap.load (no
    # progress: the dumps are read on several threads).  Runs without the
    # GVL.
    #
    #   File.write("leak.html", Heapscope.report(%w[h1.json h2.json h3.json]))
    #   File.open("tl.html", "w") { |f| Heapscope.report(Dir["step_*.json"], io: f) }
    def report(paths, io: nil, top: 30, by: "class", order: :auto, keep_dumper: false,
               keep_tracer: false, class_edges: true, waste: true, title: nil, **load)
      flags = (class_edges ? 0 : HtmlReport::NO_CLASS_EDGES) |
              (keep_dumper ? HtmlReport::KEEP_DUMPER : 0) | (waste ? 0 : HtmlReport::NO_WASTE) |
              (keep_tracer ? HtmlReport::KEEP_TRACER : 0)
      native = Native::HtmlReport._compute(paths_of(paths), Heap.check_opts(load), by.to_s,
                                           order_code(order), flags, title&.to_s)
      native._write({ format: :html, top: top, io: io })
    ensure
      native&._free
    end
  end
end
