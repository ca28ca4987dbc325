# frozen_string_literal: true

# Leak assertions for Minitest:
#
#   require "heapscope/minitest"
#
#   def test_request_does_not_leak
#     assert_no_leaks { app.call(env) }
#     assert_no_leaks(objects: 10, per: :site, allow: { gem: "i18n" }) { app.call(env) }
#   end
#
# The block runs warmup + 2 times (see Heapscope::LeakCheck for the
# options); the assertion fails when what its second run allocated and the
# third left alive exceeds the limits, naming the sites (file:line:class)
# with counts and a path from a GC root to the biggest.  It returns the
# Heapscope::LeakCheck::Result.
require "minitest"
require "heapscope/leak_check"

module Minitest
  module Assertions
    def assert_no_leaks(msg = nil, **opts, &block)
      raise ArgumentError, "assert_no_leaks needs a block" unless block
      result = Heapscope::LeakCheck.new(**opts).run(&block)
      assert !result.leaked?, message(msg, "") { result.message.chomp }
      result
    end
  end
end
