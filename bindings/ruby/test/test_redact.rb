# frozen_string_literal: true

require_relative "test_helper"
require "pathname"

# Heapscope.redact on the workload with planted waste
# (examples/workloads/waste.rb): the same bytes as `heapscope redact`
# (plain and gzip), no planted value left in the copy, waste on the copy
# finding what it finds on the original (the planted duplicates by their
# length and hash), a copy of a copy unchanged, and errors as
# Heapscope::Error subclasses.
class TestRedact < Minitest::Test
  WORKLOAD = File.expand_path("../../../examples/workloads/waste.rb", __dir__)

  def self.fixture
    @fixture ||= begin
      out = File.join(Fixtures::DIR, "redact")
      system(RbConfig.ruby, "--disable-gems", WORKLOAD, out, out: File::NULL) or
        raise "examples/workloads/waste.rb failed"
      dump = File.join(out, "waste.json")
      red = File.join(out, "redacted.json")
      [dump, JSON.parse(File.read(File.join(out, "waste_truth.json"))), red,
       Heapscope.redact(dump, red)]
    end
  end

  def dump = self.class.fixture[0]
  def truth = self.class.fixture[1]
  def redacted = self.class.fixture[2]
  def result = self.class.fixture[3]

  def setup
    skip "examples/workloads/waste.rb is not here (an installed gem)" unless File.file?(WORKLOAD)
  end

  def cli
    c = ENV["HEAPSCOPE_CLI"]
    skip "HEAPSCOPE_CLI not set: nothing to compare with" unless c && File.executable?(c)
    c
  end

  def run_cli(*args)
    out = IO.popen([cli, *args], err: File::NULL, &:read)
    assert $?.success?, "heapscope #{args.join(' ')} failed"
    out
  end

  def test_what_was_done
    r = result
    assert_instance_of Heapscope::Redaction, r
    assert_equal redacted, r.path
    # every line is copied: the copy has the original's lines
    assert_equal File.foreach(dump).count, r.lines
    assert_equal r.lines, File.foreach(redacted).count
    # one value replaced per STRING/SYMBOL/FLOAT record that has one
    # (counted here with Ruby's JSON parser, not the library's)
    want = File.foreach(dump).count do |l|
      rec = JSON.parse(l)
      %w[STRING SYMBOL FLOAT].include?(rec["type"]) && rec.key?("value")
    end
    assert_equal want, r.values
    assert_equal 0, r.kept
    assert_equal 0, r.skipped_lines
    assert_equal({}, r.skipped)
    assert_match(/#{r.lines} lines, #{r.values} string values redacted/, r.to_s)
  end

  def test_no_planted_value_left_and_other_bytes_kept
    text = File.binread(redacted)
    truth["plants"].each do |p|
      next unless p["value"]
      refute_includes text, p["value"], "planted value #{p['value']} left in the copy"
    end
    # records without a value are byte for byte the original's
    orig = File.foreach(dump).to_a
    copy = File.foreach(redacted).to_a
    orig.zip(copy).each do |a, b|
      next if a.include?('"value":')
      assert_equal a, b
    end
  end

  def test_same_bytes_as_the_cli
    out = Fixtures.path("redact_cli.json")
    run_cli("redact", dump, out)
    assert_equal File.binread(out), File.binread(redacted), "Heapscope.redact != heapscope redact"
  end

  def test_gzip_by_name_and_by_option_same_as_the_cli
    by_name = Fixtures.path("redact_rb.json.gz")
    forced = Fixtures.path("redact_rb_forced.json")
    cli_out = Fixtures.path("redact_cli.json.gz")
    Heapscope.redact(dump, by_name)
    r = Heapscope.redact(Pathname.new(dump), forced, gzip: true, gzip_level: 6)
    run_cli("redact", dump, cli_out)
    assert_equal "\x1f\x8b".b, File.binread(forced, 2)
    assert_equal File.binread(cli_out), File.binread(by_name)
    assert_equal File.binread(cli_out), File.binread(forced)
    assert_equal File.binread(redacted), Zlib::GzipReader.open(by_name, &:read).b
    assert_equal result.values, r.values
    # a lower level compresses differently, to the same bytes
    fast = Fixtures.path("redact_fast.json.gz")
    Heapscope.redact(dump, fast, gzip_level: 1)
    assert_equal File.binread(redacted), Zlib::GzipReader.open(fast, &:read).b
  end

  def strip(rows)
    rows.map do |r|
      [r.key, r.kind, r.type, r.count, r.saving, r.memsize, r.copies, r.frozen, r.fstring,
       r.buffer, r.used, r.values.map { |v| [v.value.digest, v.value.length, v.count, v.saving] }]
    end
  end

  def test_waste_on_the_copy_finds_the_same
    a = Heapscope.waste(dump)
    b = Heapscope.waste(redacted)
    refute_empty a.duplicates
    assert_equal strip(a.rows), strip(b.rows)
    assert_equal a.totals, b.totals
    # the planted duplicates, found in the copy by length and count
    truth["plants"].select { |p| p["kind"] == "duplicate" }.each do |p|
      r = b.rows.find { |x| x.key == "#{p['file']}:#{p['line']}" && x.kind == :duplicate }
      refute_nil r, "duplicate at #{p['file']}:#{p['line']} in the copy"
      assert(r.values.any? { |v| v.value.length == p["value"].bytesize },
             "a value of #{p['value'].bytesize} bytes at #{r.key}")
    end
    # and the CLI says the same of both (but for the dump's name)
    ja = JSON.parse(run_cli("waste", "--json", "--no-progress", dump))
    jb = JSON.parse(run_cli("waste", "--json", "--no-progress", redacted))
    %w[total recoverable findings groups group_count value_count].each do |k|
      assert_equal ja[k], jb[k], "waste --json #{k}"
    end
    assert_equal a.recoverable, jb["recoverable"]["memsize"]
  end

  def test_a_copy_of_the_copy_is_the_same
    again = Fixtures.path("redact_again.json")
    r = Heapscope.redact(redacted, again)
    assert_equal File.binread(redacted), File.binread(again)
    assert_equal 0, r.values
    assert_equal result.values, r.kept
  end

  def test_errors
    assert_raises(Heapscope::InvalidArgumentError) { Heapscope.redact(dump, dump) }
    missing = Fixtures.path("no-such-dump.json")
    e = assert_raises(Heapscope::Error) { Heapscope.redact(missing, Fixtures.path("x.json")) }
    assert_match(/no-such-dump/, e.message)
    refute File.exist?(Fixtures.path("x.json"))
    # a failed pass leaves an existing output as it was
    keep = Fixtures.write("keep.json", "unchanged\n")
    notdump = Fixtures.write("not-a-dump.gz", "\x1f\x8bnot gzip at all".b)
    assert_raises(Heapscope::Error) { Heapscope.redact(notdump, keep) }
    assert_equal "unchanged\n", File.read(keep)
    assert_empty Dir[Fixtures.path("keep.json.tmp.*")]
    assert_raises(Heapscope::IOError) { Heapscope.redact(dump, Fixtures.path("no-dir/out.json")) }
    assert_raises(ArgumentError) { Heapscope.redact(dump, Fixtures.path("a.json"), gzip_level: 10) }
    assert_raises(ArgumentError) { Heapscope.redact(dump, Fixtures.path("a.json.gz"), gzip: false) }
    assert_raises(ArgumentError) { Heapscope.redact(dump, Fixtures.path("a.json"), values: true) }
    assert_raises(ArgumentError) { Heapscope.redact(dump, Fixtures.path("a.json"), nonsense: 1) }
    assert_raises(TypeError) { Heapscope.redact(dump, 42) }
  end

  def test_progress_cancel
    out = Fixtures.path("cancelled.json")
    calls = 0
    assert_raises(Heapscope::CancelledError) do
      Heapscope.redact(dump, out, progress: ->(_done, _total) { calls += 1; :cancel })
    end
    assert_operator calls, :>=, 1
    refute File.exist?(out)
  end
end
