# frozen_string_literal: true

require_relative "test_helper"

# examples/ruby/*.rb: the same jobs, and the same output, as examples/c/.
class TestExamples < Minitest::Test
  EXAMPLES = File.expand_path("../../../examples/ruby", __dir__)

  def run_example(name, *args)
    Fixtures.ruby(File.join(EXAMPLES, name), *args)
  end

  # The C twin from a meson build (HEAPSCOPE_BUILD), if there is one.
  def c_example(name)
    build = ENV["HEAPSCOPE_BUILD"]
    exe = build && File.join(build, "examples", name)
    exe if exe && File.executable?(exe)
  end

  def test_bleak_tally
    out, st = run_example("bleak_tally.rb", Fixtures.leak[2])
    assert st.success?, out
    lines = out.lines
    assert_match(/\A\d+ objects, \d+ distinct file:line:class sites; top 20:\n\z/, lines[0])
    assert_equal 20, lines.size - 1
    lines.drop(1).each { |l| assert_match(/\A {0,9}\d+ {1,12}\d+  \S.*:\d+:.+\n\z/, l) }
    counts = lines.drop(1).map { |l| l.split[0].to_i }
    assert_equal counts.sort.reverse, counts
    if (c = c_example("bleak_tally"))
      assert_equal IO.popen([c, Fixtures.leak[2]], &:read), out
    end
  end

  def test_leak_diff
    out, st = run_example("leak_diff.rb", *Fixtures.leak)
    assert st.success?, out
    assert_match(/\Aleaked: \d+ objects, \d+ bytes\n/, out)
    refute_includes out, "warning:"
    line = Fixtures::LEAK_SCRIPT.lines.index { |l| l.include?("LeakedWidget.new(i)") } + 1
    assert_match(/^ {6}#{Fixtures::LEAK_N}  #{Regexp.escape(Fixtures.leak_script)}:#{line}:LeakedWidget\n {9}e\.g\.( 0x\h+){3}$/, out)
    if (c = c_example("leak_diff"))
      assert_equal IO.popen([c, *Fixtures.leak], &:read), out
    end
  end

  def test_warnings_and_errors
    out, st = run_example("leak_diff.rb", Fixtures.small, Fixtures.small, Fixtures.small)
    assert st.success?, out
    assert_match(/^warning: .*trace_object_allocations was off/, out)
    if (c = c_example("leak_diff"))
      assert_equal IO.popen([c, Fixtures.small, Fixtures.small, Fixtures.small], &:read), out
    end

    out, st = run_example("bleak_tally.rb")
    assert_equal 2, st.exitstatus
    assert_match(/usage: .*bleak_tally\.rb DUMP/, out)
    out, st = run_example("bleak_tally.rb", __FILE__)
    assert_equal 1, st.exitstatus
    assert_match(/\A#{Regexp.escape(__FILE__)}: not a heap dump/, out)
    out, st = run_example("leak_diff.rb", "a")
    assert_equal 2, st.exitstatus
    assert_match(/usage: .*leak_diff\.rb A B C/, out)
  end
end
