# frozen_string_literal: true

require_relative "test_helper"

# Heapscope.waste / Heap#waste on the workload with planted waste
# (examples/workloads/waste.rb): the planted sets at their sites with the
# counts and savings Ruby measured in that process, the two entry points
# agreeing, privacy of the reports, and the same JSON bytes as the CLI.
class TestWaste < Minitest::Test
  WORKLOAD = File.expand_path("../../../examples/workloads/waste.rb", __dir__)

  def self.fixture
    @fixture ||= begin
      out = File.join(Fixtures::DIR, "waste")
      system(RbConfig.ruby, "--disable-gems", WORKLOAD, out, out: File::NULL) or
        raise "examples/workloads/waste.rb failed"
      [File.join(out, "waste.json"), JSON.parse(File.read(File.join(out, "waste_truth.json")))]
    end
  end

  def dump = self.class.fixture[0]
  def truth = self.class.fixture[1]

  def setup
    skip "examples/workloads/waste.rb is not here (an installed gem)" unless File.file?(WORKLOAD)
  end

  def waste
    @waste ||= Heapscope.waste(dump)
  end

  def row(w, key, kind, type)
    w.rows.find { |r| r.key == key && r.kind == kind && r.type == type }
  end

  def test_planted_sets_at_their_sites
    truth["plants"].each do |p|
      r = row(waste, "#{p['file']}:#{p['line']}", p["kind"].to_sym, p["type"])
      refute_nil r, "#{p['kind']} #{p['type']} at #{p['file']}:#{p['line']}"
      mem, size, n = p["memsize"], p["bytesize"], p["count"]
      case p["kind"]
      when "empty"
        assert_equal n, r.count
        assert_equal mem.sum, r.saving
      when "oversized"
        per = { "STRING" => 1, "ARRAY" => 8, "HASH" => 64 }[p["type"]]
        term = p["type"] == "STRING" ? 1 : 0
        assert_equal n, r.count
        assert_equal mem.zip(size).sum { |m, s| m - 40 - term - per * s }, r.saving
      else
        assert_equal n, r.copies
        assert_equal p["frozen"], r.frozen
        # Ruby 3.1 marks no literal: frozen copies are no literals, the
        # others may be either; the gem's code is not the app's
        want = if p["file"].include?("/gems/wastegem-") then :gem
               elsif p["frozen"] == n then :intern
               else :intern_or_literal
               end
        assert_equal want, r.fix_kind, "fix of #{r.key}: #{r.fix}"
        assert_equal 0, r.chilled
        v = r.values.find { |x| x.value.value == p["value"] }
        refute_nil v, "the value of #{r.key}"
        assert_equal n, v.count
      end
    end
    # one value at two sites: the copy kept is where most copies are
    a, b = truth["plants"].select { |p| p["value"] == "waste-dup-two-sites" }
    ra = row(waste, "#{a['file']}:#{a['line']}", :duplicate, "STRING")
    rb = row(waste, "#{b['file']}:#{b['line']}", :duplicate, "STRING")
    assert_equal a["count"] - 1, ra.count
    assert_equal a["memsize"].sum - a["memsize"].max, ra.saving
    assert_equal b["count"], rb.count
    assert_equal b["memsize"].sum, rb.saving
  end

  def test_totals_and_order
    t = waste.totals
    assert_equal waste.rows.sum(&:saving), t[:saving]
    assert_equal waste.rows.sum(&:count), t[:count]
    assert_equal t[:saving], waste.recoverable
    assert_in_delta t[:saving].fdiv(t[:memsize]), waste.share, 1e-12
    assert_equal waste.rows.map(&:saving).sort.reverse, waste.rows.map(&:saving)
    assert_equal waste.values.size, t[:duplicate_values]
    assert_equal [], waste.warnings
    assert_operator t[:excluded], :>, 0
    assert_equal waste.duplicates.size + waste.empty.size + waste.oversized.size, waste.rows.size
  end

  # Ruby's allocation tracer (the workload traces allocations) is left out
  # of the heap's total and counted; keep_tracer: puts exactly it back.
  def test_allocation_tracer_left_out
    mem = File.foreach(dump).map { |l| JSON.parse(l) }
              .select { |r| r["struct"] == "ObjectTracing/allocation_info_tracer" }.map { |r| r["memsize"] }
    assert_equal 1, mem.size
    t = waste.totals
    assert_equal [1, mem[0]], [t[:excluded_tracer], t[:excluded_tracer_memsize]]
    k = Heapscope.waste(dump, keep_tracer: true).totals
    assert_equal [0, 0], [k[:excluded_tracer], k[:excluded_tracer_memsize]]
    assert_equal [t[:objects] + 1, t[:memsize] + mem[0]], [k[:objects], k[:memsize]]
    assert_equal k, Heapscope::Heap.load(dump, values: true).waste(keep_tracer: true).totals
  end

  def test_loaded_heap_agrees
    heap = Heapscope::Heap.load(dump, values: true)
    w = heap.waste
    assert_equal waste.totals, w.totals
    assert_equal waste.rows.map(&:to_a).map { |a| a[0..11] }, w.rows.map(&:to_a).map { |a| a[0..11] }
    assert_equal waste.values.map { |v| [v.digest, v.value, v.count, v.saving, v.sites.map(&:to_a)] },
                 w.values.map { |v| [v.digest, v.value, v.count, v.saving, v.sites.map(&:to_a)] }
    plain = Heapscope::Heap.load(dump).waste
    assert_includes plain.warnings, :no_values
    assert_equal 0, plain.totals[:duplicate_values]
  end

  def test_by_gem
    gem = truth["plants"].find { |p| p["file"].end_with?("wastegem.rb") }
    w = Heapscope.waste(dump, by: :gem)
    r = row(w, "wastegem-1.2.3", :duplicate, "STRING")
    refute_nil r
    assert_equal gem["count"], r.copies
    assert_equal waste.recoverable, w.recoverable
  end

  def test_privacy
    text = waste.to_s
    json = waste.report(format: :json, top: 0)
    values = truth["plants"].map { |p| p["value"] }.compact
    values.each do |v|
      refute_includes text, v
      refute_includes json, JSON.generate(v)[1..-2]
    end
    refute_includes json, '"value"'
    v = waste.values.find { |x| x.value == "waste-dup-active" }
    refute_includes v.inspect, "waste-dup-active"
    assert_includes text, "16 B ##{v.digest[0, 8]}"
    assert_includes waste.report(values: true), '"waste-dup-active" (16 B)'
    doc = JSON.parse(waste.report(format: :json, values: true, top: 0))
    assert_equal "waste", doc["kind"]
    assert(doc["values"].any? { |x| x["value"] == "waste-dup-active" && x["hash"] == v.digest })
  end

  def test_same_bytes_as_the_cli
    cli = ENV["HEAPSCOPE_CLI"]
    skip "no CLI (HEAPSCOPE_CLI)" unless cli && File.executable?(cli)
    out = IO.popen([cli, "waste", "--json", "--top", "0", dump], &:read)
    assert_equal out, waste.report(format: :json, top: 0, name: dump)
    out = IO.popen([cli, "waste", "--top", "5", dump], &:read)
    assert_equal out, waste.report(top: 5, name: dump)
  end

  def test_errors
    assert_raises(ArgumentError) { Heapscope.waste(dump, by: :class) }
    assert_raises(ArgumentError) { Heapscope.waste(dump, ratio: 1) }
    assert_raises(ArgumentError) { waste.report(format: :csv) }
    assert_raises(Heapscope::IOError) { Heapscope.waste(File.join(Fixtures::DIR, "missing.json")) }
    assert_raises(Heapscope::UnsupportedError) { Heapscope.waste(Fixtures::DIR) }
    assert_raises(ArgumentError) { Heapscope.waste(dump, bogus: 1) }
  end
end
