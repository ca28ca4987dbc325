# frozen_string_literal: true

# Heapscope.check (a budget without the CLI) and Heapscope.export(...,
# format: :pprof), on the planted-leak dumps: LEAK_N LeakedWidget objects
# (each with a String and an Array) are added before each of the three
# dumps and all stay alive.
require_relative "test_helper"

class TestCheck < Minitest::Test
  N = Fixtures::LEAK_N

  def test_leaked_over_and_within_budget
    a, b, c = Fixtures.leak
    over = Heapscope.check("[leaked]\nobjects = #{N}\n", a, b, c)
    assert_equal :over, over.verdict
    refute over.ok?
    rule = over.rules.fetch(0)
    assert_equal [:leaked, :objects, nil, 2, N], [rule.scope, rule.metric, rule.key, rule.line, rule.limit]
    # born between dumps 1 and 2, alive in 3: the widgets of the second
    # batch, each with its String and its Array
    assert_operator rule.actual, :>=, 3 * N
    assert rule.over?
    assert_equal [rule], over.over
    within = Heapscope.check("[leaked]\nobjects = #{rule.actual}\n", a, b, c)
    assert_equal :pass, within.verdict
    assert_empty within.over
  end

  def test_class_rule_from_a_file_and_the_cli_agrees
    *, c = Fixtures.leak
    budget = Fixtures.write("widgets.toml", "[class.\"LeakedWidget\"]\nobjects = #{3 * N - 1}\n" \
                                            "[total]\nmemsize = \"1 TB\"\n")
    r = Heapscope.check(budget, c)
    widgets, total = r.rules
    assert_equal [:class, "LeakedWidget", 3 * N, true, true],
                 [widgets.scope, widgets.key, widgets.actual, widgets.over?, widgets.found?]
    assert_equal [:total, :memsize, false], [total.scope, total.metric, total.over?]
    assert_equal :over, r.verdict
    assert_equal r.memsize, total.actual
    assert_match(/LeakedWidget/, r.report)
    j = r.to_h
    assert_equal "check", j[:kind]
    cli = ENV["HEAPSCOPE_CLI"]
    if cli && File.executable?(cli)
      out = IO.popen([cli, "check", "--budget", budget, "--json", "--no-progress", c], &:read)
      assert_equal 1, $?.exitstatus
      assert_equal JSON.parse(out)["rules"], JSON.parse(r.report(format: :json))["rules"]
    end
  end

  # Ruby's allocation tracer (the leak script traces allocations) is left
  # out of the totals and counted; keep_tracer: puts exactly it back; a
  # class."<allocation tracer>" rule measures it either way.
  def test_allocation_tracer_left_out
    *, c = Fixtures.leak
    mem = File.foreach(c).map { |l| JSON.parse(l) }
              .select { |r| r["struct"] == "ObjectTracing/allocation_info_tracer" }.map { |r| r["memsize"] }
    assert_equal 1, mem.size
    budget = "[total]\nmemsize = \"1 TB\"\n[class.\"<allocation tracer>\"]\nobjects = 1\nmemsize = #{mem[0]}\n"
    left = Heapscope.check(budget, c)
    kept = Heapscope.check(budget, c, keep_tracer: true)
    assert_equal [1, mem[0]], left.excluded_tracer.to_a
    assert_equal [0, 0], kept.excluded_tracer.to_a
    assert_equal [left.count + 1, left.memsize + mem[0]], [kept.count, kept.memsize]
    assert_equal [left.memsize, 1, mem[0]], left.rules.map(&:actual)
    assert_equal [kept.memsize, 1, mem[0]], kept.rules.map(&:actual)
    assert_equal :pass, left.verdict
  end

  def test_bad_budget_and_wrong_dump_count
    *, c = Fixtures.leak
    e = assert_raises(Heapscope::ParseError) { Heapscope.check("[nonsense]\nobjects = 1\n", c) }
    assert_match(/nonsense/, e.message)
    assert_raises(Heapscope::InvalidArgumentError) { Heapscope.check("[leaked]\nobjects = 1\n", c) }
    assert_raises(ArgumentError) { Heapscope.check("[total]\nobjects = 1\n") }
  end

  # A protobuf reader of our own for the test: {field => [values]} of one
  # message (varints as Integers, length-delimited as Strings).
  def pb_fields(bytes)
    out = Hash.new { |h, k| h[k] = [] }
    io = StringIO.new(bytes)
    varint = lambda do
      v = 0
      shift = 0
      loop do
        b = io.readbyte
        v |= (b & 0x7f) << shift
        shift += 7
        break if b < 0x80
      end
      v
    end
    until io.eof?
      key = varint.call
      case key & 7
      when 0 then out[key >> 3] << varint.call
      when 2 then out[key >> 3] << io.read(varint.call)
      else flunk "wire type #{key & 7}"
      end
    end
    out
  end

  def packed(s)
    vals = []
    io = StringIO.new(s)
    until io.eof?
      v = 0
      shift = 0
      loop do
        b = io.readbyte
        v |= (b & 0x7f) << shift
        shift += 7
        break if b < 0x80
      end
      vals << v
    end
    vals
  end

  def test_export_pprof
    *, c = Fixtures.leak
    out = Fixtures.path("leak_3.pb.gz")
    assert_equal out, Heapscope.export(c, format: :pprof, out: out, time: Time.at(1_714_564_800, 250, :millisecond))
    prof = pb_fields(Zlib.gunzip(File.binread(out)))
    strings = prof[6]
    assert_equal "", strings[0]
    assert_equal [1_714_564_800_250_000_000], prof[9]
    assert_equal %w[inuse_objects count inuse_space bytes],
                 prof[1].flat_map { |vt| f = pb_fields(vt); [strings[f[1][0]], strings[f[2][0]]] }
    assert_equal "inuse_space", strings[prof[14][0]]
    samples = prof[2].map do |s|
      f = pb_fields(s)
      labels = f[3].to_h { |l| lf = pb_fields(l); [strings[lf[1][0]], strings[lf[2][0]]] }
      [packed(f[2][0]), labels]
    end
    widgets = samples.select { |_, l| l["class"] == "LeakedWidget" }
    assert_equal 3 * N, widgets.sum { |v, _| v[0] }
    assert(widgets.all? { |_, l| l["type"] == "OBJECT" && l["gem"] == "(app)" })
    # totals: the library's own tally without the dumper's objects
    t = Heapscope::Heap.load(c).tally(by: :type, top: 100, keep_dumper: false)
    assert_equal [t.sum(&:count), t.sum(&:memsize)],
                 [samples.sum { |v, _| v[0] }, samples.sum { |v, _| v[1] }]
    assert_raises(ArgumentError) { Heapscope.export(c, format: :pprof) }
    assert_raises(ArgumentError) { Heapscope.export([c, c], format: :pprof, out: out) }
    assert_raises(Heapscope::NotFoundError, Heapscope::IOError) do
      Heapscope.export(Fixtures.path("missing.json"), format: :pprof, out: out, time: 1)
    end
  end
end
