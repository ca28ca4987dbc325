# frozen_string_literal: true

require_relative "test_helper"

# Heapscope::Format (the numbers of LeakCheck's and Waste's sentences) is
# the library's formatter: the same text as the CLI and every report.
class TestFormat < Minitest::Test
  F = Heapscope::Format

  # Worked out by hand: binary units, one decimal from 1 KB on, "-" before
  # a negative value (a change), commas every three digits.
  BYTES = {
    0 => "0 B", 1 => "1 B", 1023 => "1023 B", 1024 => "1.0 KB", 1536 => "1.5 KB",
    1024 * 1024 - 1 => "1024.0 KB", 3 * 1024**3 + 200 * 1024**2 => "3.2 GB",
    5 * 1024**4 => "5.0 TB", 2048 * 1024**4 => "2048.0 TB",
    -1 => "-1 B", -1023 => "-1023 B", -2048 => "-2.0 KB", -1536 * 1024 => "-1.5 MB"
  }.freeze
  COUNTS = {
    0 => "0", 7 => "7", 999 => "999", 1000 => "1,000", 1_234_567 => "1,234,567",
    2**64 - 1 => "18,446,744,073,709,551,615",
    -1 => "-1", -1000 => "-1,000", -1_234_567 => "-1,234,567"
  }.freeze

  def test_bytes
    BYTES.each { |n, want| assert_equal want, F.bytes(n), "bytes(#{n})" }
  end

  def test_grouped
    COUNTS.each { |n, want| assert_equal want, F.grouped(n), "grouped(#{n})" }
  end

  def test_non_integers_and_range
    assert_equal "1.5 KB", F.bytes(1536.9) # to_i first, as before
    assert_equal "1,000", F.grouped("1000")
    assert_raises(RangeError) { F.bytes(2**63) }
    assert_raises(RangeError) { Heapscope::Native.format_count(-1) }
  end

  # The CLI's tally table prints each group's count and memsize with the
  # same formatter: every row the gem sees reads the same in the CLI.
  def test_same_as_cli
    cli = ENV["HEAPSCOPE_CLI"]
    skip "HEAPSCOPE_CLI not set: nothing to compare with" unless cli && File.executable?(cli)
    dump = Fixtures.leak[2]
    rows = Heapscope::Heap.load(dump).tally(top: nil, keep_dumper: false).to_h { |r| [r.key, r] }
    out = IO.popen([cli, "tally", "--top", "0", dump], &:read)
    assert $?.success?, out
    seen = 0
    out.each_line do |line|
      m = line.match(/\A  (\S.*?)\s+([\d,]+)\s+[\d.]+%\s+(-?[\d.]+ [KMGT]?B)\s+[\d.]+%\s*\z/) or next
      row = rows[m[1]] or next
      assert_equal m[2], F.grouped(row.count), m[1]
      assert_equal m[3], F.bytes(row.memsize), m[1]
      seen += 1
    end
    assert_operator seen, :>=, 5, "too few CLI rows matched:\n#{out}"
  end
end
