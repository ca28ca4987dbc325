# frozen_string_literal: true

# The benchmarks' heap: app-like records with a few ivars, strings
# (embedded and not), arrays and hashes; about 4.5 objects per record.
class Record
  def initialize(i)
    @id = i
    @name = "record-#{i}"
    @body = "x" * (64 + (i % 7) * 32)
    @tags = [i % 10, "t#{i % 100}"]
    @meta = { "k" => i } if (i % 4).zero?
  end
end
