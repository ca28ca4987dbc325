# frozen_string_literal: true

# A leak matcher for RSpec:
#
#   require "heapscope/rspec"
#
#   it "does not leak" do
#     expect { app.call(env) }.not_to leak_memory
#     expect { app.call(env) }.not_to leak_memory(objects: 10, per: :site)
#     expect { app.call(env) }.not_to leak_memory.allowing(gem: "i18n", class: Logger::LogDevice)
#   end
#
# The block runs warmup + 2 times (see Heapscope::LeakCheck for the
# options); `not_to leak_memory` fails when what its second run allocated
# and the third left alive exceeds the limits, naming the sites
# (file:line:class) with counts and a path from a GC root to the biggest.
# `to leak_memory` is the opposite (for a test that a leak is found).
require "rspec/expectations"
require "heapscope/leak_check"

module Heapscope
  module RSpecMatchers
    # The matcher behind leak_memory.
    class LeakMemory
      def initialize(**opts)
        @opts = opts
        Heapscope::LeakCheck.new(**opts) # check the options now
      end

      # Add to the allow-list: allowing(class: ..., file: ..., gem: ...).
      def allowing(**allow)
        merged = (@opts[:allow] || {}).dup
        allow.each { |k, v| merged[k] = Array(merged[k]) + Array(v) }
        LeakMemory.new(**@opts, allow: merged)
      end

      # The last check's Heapscope::LeakCheck::Result.
      attr_reader :result

      def supports_block_expectations?
        true
      end

      def supports_value_expectations?
        false
      end

      def matches?(block)
        check(block).leaked?
      end

      def does_not_match?(block)
        !check(block).leaked?
      end

      def failure_message
        "expected the block to leak more than #{@check.limits}, but it did not " \
          "(#{Heapscope::LeakCheck.objects(@result.count)} counted)"
      end

      def failure_message_when_negated
        "expected the block not to leak memory, but it #{@result.message}"
      end

      def description
        "leak memory (more than #{Heapscope::LeakCheck.new(**@opts).limits})"
      end

      private

      def check(block)
        raise ArgumentError, "leak_memory takes a block: expect { ... }.not_to leak_memory" unless block.is_a?(Proc)
        @check = Heapscope::LeakCheck.new(**@opts)
        @result = @check.run(&block)
      end
    end

    # expect { ... }.not_to leak_memory(objects:, bytes:, per:, allow:, warmup:, fork:)
    def leak_memory(**opts)
      LeakMemory.new(**opts)
    end
  end
end

if defined?(RSpec) && RSpec.respond_to?(:configure)
  RSpec.configure { |c| c.include(Heapscope::RSpecMatchers) }
end
