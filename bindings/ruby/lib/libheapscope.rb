# frozen_string_literal: true

# The gem is published as "libheapscope" and loaded as "heapscope": this file
# lets `gem "libheapscope"` in a Gemfile (Bundler requires the gem's name)
# and `require "libheapscope"` load it too.
require_relative "heapscope"
