# frozen_string_literal: true

require_relative "test_helper"
require "heapscope/minitest"

# assert_no_leaks and the Heapscope::LeakCheck behind it (and behind the
# RSpec matcher; test_leak_apps.rb runs both in fresh apps).
class TestLeakAssertions < Minitest::Test
  Leaky = Struct.new(:name, :tags)
  REGISTRY = [] # rubocop:disable Style/MutableConstant -- the planted leak's holder
  N = 25

  # A fake gem that leaks: its file lives under .../gems/NAME-VERSION/, as
  # installed gems do.
  GEM_FILE = Fixtures.write("gems/fakeleak-1.2.3/lib/fakeleak.rb".tap do |p|
    FileUtils.mkdir_p(File.dirname(Fixtures.path(p)))
  end, <<~'RUBY')
    module FakeLeak
      STORE = []
      def self.call = STORE << "fake gem leak #{STORE.size}"
    end
  RUBY
  require GEM_FILE

  def leak
    N.times { |i| REGISTRY << Leaky.new("leak-#{i}", [i]) }
  end
  LEAK_LINE = __LINE__ - 2

  def teardown
    REGISTRY.clear
  end

  # One Diff of a block that leaks N Leaky (each with a String and an
  # Array, all at LEAK_LINE) and one String in the fake gem per run.
  def leak_diff
    @leak_diff ||= Heapscope.find_leaks do
      leak
      FakeLeak.call
    end
  end

  def site(klass) = "#{__FILE__}:#{LEAK_LINE}:#{klass}"

  def test_planted_leak_fails_naming_the_site
    e = assert_raises(Minitest::Assertion) { assert_no_leaks { leak } }
    msg = e.message
    assert_match(/\Aleaked #{3 * N} objects \(.*\), more than 0 objects in total: allocated by the block's run 2 of 3, still alive after the last$/, msg)
    ["TestLeakAssertions::Leaky", "String", "Array"].each do |k|
      assert_match(/^ +#{N} +\d+  #{Regexp.escape(site(k))}$/, msg)
    end
    assert_equal 3, msg.scan(/^ +\d+ +\d+  /).size, msg
    # The biggest site, one of its objects and a labelled path from a root
    # through the registry (allocated before the check: no site).
    big = msg[/^biggest: (.*), e\.g\. 0x\h+, reached from GC root \S+:$/, 1]
    assert_includes [site("TestLeakAssertions::Leaky"), site("String"), site("Array")], big, msg
    steps = msg.lines.drop_while { |l| !l.start_with?("biggest:") }.drop(1)
    assert_operator steps.size, :>=, 2, msg
    assert_match(/^     0x\h+ \S+ \S+/, steps.first)
    assert(steps.any? { |l| l.match?(/^  -> 0x\h+ ARRAY Array$/) }, msg) # REGISTRY
    assert_match(/^  -> 0x\h+ \S+ \S+ \(allocated at #{Regexp.escape(__FILE__)}:#{LEAK_LINE}\)$/, steps.last)
  end

  def test_clean_block_passes
    cache = {}
    5.times do
      result = assert_no_leaks do
        cache[:greeting] ||= +"hello" # filled by the warm-up run
        rows = Array.new(200) { |i| { id: i, name: "row #{i}" } }
        rows.map { |r| "#{cache[:greeting]} #{r[:name]}" }.join(",").size
      end
      assert_equal 0, result.count
      refute result.leaked?
    end
  end

  def test_large_freed_garbage_passes
    result = assert_no_leaks { Array.new(150_000) { |i| "temporary #{i}" * 4 }.size } # ~10 MB
    assert_equal 0, result.count
  end

  def test_message_argument
    e = assert_raises(Minitest::Assertion) { assert_no_leaks("the widget cache") { leak } }
    assert_match(/\Athe widget cache\.\nleaked #{3 * N} objects/, e.message)
  end

  # Thresholds, per:, allow: on one Diff.
  def test_thresholds
    diff = leak_diff
    total = 3 * N + 1
    assert_equal total, diff.count
    check = ->(**o) { Heapscope::LeakCheck.new(**o).check(diff) }
    assert check.(objects: total).leaked? == false
    assert check.(objects: total - 1).leaked?
    assert check.(objects: N, per: :site).leaked? == false
    assert check.(objects: N - 1, per: :site).leaked?
    r = check.(objects: N - 1, per: :site)
    assert_equal [N] * 3, r.offenders.map(&:count), "the gem's one String is within the limit"
    assert check.(bytes: diff.memsize).leaked? == false
    assert check.(bytes: diff.memsize - 1).leaked?
    assert check.(objects: 1, per: :class).leaked?
    assert check.(objects: 2 * N + 1, per: :class).leaked? == false # Strings: N + 1
    assert check.(objects: 3 * N, per: :file).leaked? == false
    assert check.(objects: 1, per: :gem).leaked?
    assert_equal "10 objects or 4,096 bytes per file:line:class",
                 Heapscope::LeakCheck.new(objects: 10, bytes: 4096, per: :site).limits
    assert_equal "0 objects in total", Heapscope::LeakCheck.new.limits
    assert_equal "100 bytes per gem", Heapscope::LeakCheck.new(bytes: 100, per: :gem).limits
  end

  def test_allow_list
    diff = leak_diff
    check = ->(allow) { Heapscope::LeakCheck.new(allow: allow).check(diff) }
    r = check.(file: __FILE__)
    assert_equal ["#{GEM_FILE}:3:String"], r.offenders.map(&:key)
    assert_equal "fakeleak-1.2.3", r.offenders[0].gem
    refute check.(file: [__FILE__, %r{/gems/fakeleak}]).leaked?
    refute check.(file: [File.basename(__FILE__)], gem: "fakeleak").leaked?
    refute check.(file: __FILE__, gem: /\Afake/).leaked?
    assert check.(file: __FILE__, gem: "fake").leaked?, "a gem String names the whole gem"
    assert check.(file: __FILE__, gem: "fakeleak-1.2").leaked?
    refute check.(file: __FILE__, gem: "fakeleak-1.2.3").leaked?
    r = check.(class: [Leaky, "Array"])
    assert_equal [site("String"), "#{GEM_FILE}:3:String"].sort, r.offenders.map(&:key).sort
    assert_equal 2 * N, r.allowed.sum(&:count)
    refute check.(class: [Leaky, /\AStr/, "Array"]).leaked?
    assert_match(/^\(allowed: #{2 * N} objects in 2 sites\)$/, r.message)
    assert_match(/\Aleaked 1 object \(/, check.(file: __FILE__, gem: "fake").message)
  end

  def test_bad_options
    assert_raises(ArgumentError) { Heapscope::LeakCheck.new(objects: -1) }
    assert_raises(ArgumentError) { Heapscope::LeakCheck.new(bytes: "1k") }
    assert_raises(ArgumentError) { Heapscope::LeakCheck.new(per: :method) }
    assert_raises(ArgumentError) { Heapscope::LeakCheck.new(allow: { module: "X" }) }
    assert_raises(ArgumentError) { Heapscope::LeakCheck.new(allow: { file: String }) }
    assert_raises(ArgumentError) { Heapscope::LeakCheck.new(warmup: 0) }
    assert_raises(ArgumentError) { Heapscope::LeakCheck.new(colour: 1) }
    assert_raises(ArgumentError) { assert_no_leaks }
  end

  def test_warmup
    calls = 0
    assert_no_leaks(warmup: 3) { calls += 1 }
    assert_equal 5, calls
  end
end
