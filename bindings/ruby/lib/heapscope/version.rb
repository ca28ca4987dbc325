# frozen_string_literal: true

module Heapscope
  # Version of the gem (follows the library's version).
  VERSION = "0.3.0"
  # The name this gem is published under ("heapscope" on rubygems.org is an
  # unrelated memory tool that also has a heapscope.rb); with
  # LIBRARY_VERSION (the C library's version) it tells the two apart at
  # run time: defined?(Heapscope::GEM_NAME) && Heapscope::GEM_NAME == "libheapscope".
  GEM_NAME = "libheapscope"
end
