# frozen_string_literal: true

module Heapscope
  # Version of the gem (follows the library's version).
  VERSION = "0.1.0"
end
