# frozen_string_literal: true

require_relative "test_helper"
require "open3"
require "stringio"

# Heapscope.report: the library's HTML report (hscope_html_report_*) from
# Ruby.  On the planted-leak dumps (Fixtures::LEAK_SCRIPT leaks LEAK_N
# LeakedWidget objects made at one line between dumps 1 and 2, alive in
# dump 3) the leak is on the page at its line with that count, the holder
# ($registry) is the first suspect; the page is the CLI's (HEAPSCOPE_CLI)
# but for the time it was generated, the same into an io:; options and
# errors.
class TestHtmlReport < Minitest::Test
  GENERATED = /generated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/

  def page
    @page ||= Heapscope.report(Fixtures.leak)
  end

  # The LeakedWidget.new line of the generator: file:line:class of the leak.
  def leak_key
    line = Fixtures::LEAK_SCRIPT.lines.index { |l| l.include?("LeakedWidget.new") } + 1
    "#{Fixtures.leak_script}:#{line}:LeakedWidget"
  end

  def section(html, id)
    html[%r{<section id="#{id}">.*?</section>}m] or flunk "no #{id} section"
  end

  def test_the_planted_leak_on_the_page
    assert_equal Encoding::UTF_8, page.encoding
    assert page.valid_encoding?
    assert page.start_with?("<!DOCTYPE html>")
    assert page.end_with?("</html>\n")
    diff = section(page, "diff")
    assert_includes diff, "<td class=\"key mono\">#{leak_key}</td>" \
                          "<td class=\"n\" data-v=\"#{Fixtures::LEAK_N}\">#{Fixtures::LEAK_N}</td>"
    # what holds it: the $registry Array, the first suspect
    registry = section(page, "suspects")[/<tr id="suspect-1" data-addr="(0x\h+)"/, 1]
    refute_nil registry
    heap = Heapscope::Heap.load(Fixtures.leak[2])
    info = heap.object(Integer(registry, 16))
    assert_equal "Array", info.class_name
    # it holds every widget: LEAK_N made before each of the three dumps
    assert_equal 3 * Fixtures::LEAK_N, heap.references(info.address).count { |a|
      heap.object(a).class_name == "LeakedWidget"
    }
    %w[summary histograms sites retainers dominators timeline waste].each do |s|
      assert_includes page, "<section id=\"#{s}\">"
    end
  end

  def test_the_same_bytes_as_the_cli
    cli = ENV["HEAPSCOPE_CLI"]
    skip "HEAPSCOPE_CLI not set: nothing to compare with" unless cli && File.executable?(cli)
    out, err, st = Open3.capture3(cli, "report", "--no-progress", "--no-index", "--out", "-",
                                  *Fixtures.leak)
    assert st.success?, err
    assert_equal out.force_encoding(Encoding::UTF_8).sub(GENERATED, ""), page.sub(GENERATED, "")
    one = Heapscope.report(Fixtures.small, top: 5, by: "type")
    out, = Open3.capture3(cli, "report", "--no-progress", "--no-index", "--out", "-",
                          "--top", "5", "--by", "type", Fixtures.small)
    assert_equal out.force_encoding(Encoding::UTF_8).sub(GENERATED, ""), one.sub(GENERATED, "")
  end

  # keep_tracer: as `heapscope report --keep-tracer` (the leak script
  # traces allocations: the tracer is left out of every section and said)
  def test_keep_tracer
    kept = Heapscope.report(Fixtures.leak, keep_tracer: true)
    refute_includes kept, "Left out: the allocation tracer"
    assert_includes page, "Left out: the allocation tracer"
    cli = ENV["HEAPSCOPE_CLI"]
    skip "HEAPSCOPE_CLI not set: nothing to compare with" unless cli && File.executable?(cli)
    out, err, st = Open3.capture3(cli, "report", "--no-progress", "--no-index", "--keep-tracer",
                                  "--out", "-", *Fixtures.leak)
    assert st.success?, err
    assert_equal out.force_encoding(Encoding::UTF_8).sub(GENERATED, ""), kept.sub(GENERATED, "")
  end

  def test_io_and_options
    io = StringIO.new(+"")
    assert_same io, Heapscope.report(Fixtures.leak, io: io)
    assert_equal page.sub(GENERATED, ""), io.string.force_encoding(Encoding::UTF_8).sub(GENERATED, "")
    bare = Heapscope.report(Fixtures.small, waste: false, title: "<mine>", top: 1)
    refute_includes bare, "<section id=\"waste\">"
    assert_includes bare, "<title>&lt;mine&gt;</title>"
    refute_includes bare, "<section id=\"diff\">"
    rows = section(bare, "sites")[%r{<tbody>.*</tbody>}m].scan("<tr>").size
    assert_equal 1, rows
  end

  def test_errors
    assert_raises(Heapscope::IOError) { Heapscope.report([Fixtures.path("missing.json")]) }
    assert_raises(ArgumentError) { Heapscope.report([]) }
    assert_raises(ArgumentError) { Heapscope.report(Fixtures.small, order: :sideways) }
    assert_raises(Heapscope::UnsupportedError) { Heapscope.report(Fixtures.small, by: "colour") }
    assert_raises(ArgumentError) { Heapscope.report(Fixtures.small, progress: ->(*) {}) }
    assert_raises(ArgumentError) { Heapscope.report(Fixtures.small, bogus: 1) }
  end
end
