# frozen_string_literal: true

require_relative "test_helper"

# heapscope/minitest and heapscope/rspec in a fresh app that only adds the
# gem: no Gemfile, no bundler, a plain `ruby` / `rspec` run in a temporary
# directory.  Under test.sh the gem comes from the scratch install
# (GEM_HOME/GEM_PATH, as `gem install` leaves it); elsewhere (rake test)
# from -I flags pointing at this checkout.
class TestLeakApps < Minitest::Test
  APP = <<~'RUBY'
    module App
      TEMPLATES = {}
      SESSIONS = []

      def self.render(n)
        TEMPLATES[:row] ||= "%d: %s" # filled once, by the warm-up run
        rows = Array.new(n) { |i| { id: i, name: "row #{i}", tags: %w[a b] } }
        rows.map { |r| format(TEMPLATES[:row], r[:id], r[:name]) }.join("\n").size
      end

      def self.report
        Array.new(200_000) { |i| "temporary #{i}" * 3 }.sum(&:size) # ~12 MB, all freed
      end

      def self.login(user)
        SESSIONS << { user: user, token: "token-#{user}" } # the leak: line 16
      end
    end
  RUBY
  LEAK_LINE = 16

  MINITEST = <<~'RUBY'
    require "minitest/autorun"
    require "heapscope/minitest"
    require_relative "../lib/app"

    class AppTest < Minitest::Test
      def test_render_is_clean
        Integer(ENV.fetch("CLEAN_RUNS")).times { assert_no_leaks { App.render(100) } }
      end

      def test_report_frees_its_garbage
        assert_no_leaks { App.report }
      end

      def test_login_leaks
        assert_no_leaks { App.login("bob") }
      end
    end
  RUBY

  SPEC = <<~'RUBY'
    require "heapscope/rspec"
    require_relative "../lib/app"

    RSpec.describe App do
      it "renders without leaking, again and again" do
        Integer(ENV.fetch("CLEAN_RUNS")).times { expect { App.render(100) }.not_to leak_memory }
      end

      it "frees the report's garbage" do
        expect { App.report }.not_to leak_memory
      end

      it "does not keep sessions" do
        expect { App.login("bob") }.not_to leak_memory.allowing(file: "spec/app_spec.rb") # "bob"
      end

      it "keeps them, as a positive test can show" do
        expect { App.login("eve") }.to leak_memory(objects: 2) # 3: "eve", the Hash, its token
      end
    end
  RUBY

  def app_dir
    dir = Fixtures.path("app-#{name}")
    FileUtils.mkdir_p(["#{dir}/lib", "#{dir}/test", "#{dir}/spec"])
    File.write("#{dir}/lib/app.rb", APP)
    File.write("#{dir}/test/app_test.rb", MINITEST)
    File.write("#{dir}/spec/app_spec.rb", SPEC)
    dir
  end

  # The gem as `gem install` put it (test.sh), or this checkout's lib.
  def gem_flags
    so = $LOADED_FEATURES.grep(%r{/heapscope/heapscope\.(so|bundle)\z}).first
    home = ENV["GEM_HOME"].to_s
    !home.empty? && so&.start_with?(home) ? [] : Fixtures.lib_flags
  end

  # How many times the clean block runs: 50 in the minitest app, 10 in the
  # RSpec one (the same check, and each run costs three snapshots);
  # HEAPSCOPE_CLEAN_RUNS=N for both.
  def clean_runs(default)
    Integer(ENV.fetch("HEAPSCOPE_CLEAN_RUNS", default))
  end

  def run_in(dir, runs, *cmd)
    out = IO.popen({ "CLEAN_RUNS" => runs.to_s }, cmd, chdir: dir, err: %i[child out], &:read)
    [out, $?]
  end

  def test_minitest_app
    dir = app_dir
    t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    runs = clean_runs(50)
    out, st = run_in(dir, runs, RbConfig.ruby, *gem_flags, "test/app_test.rb")
    secs = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t
    assert_equal 1, st.exitstatus, out
    assert_match(/^3 runs, #{runs + 2} assertions, 1 failures, 0 errors, 0 skips$/, out)
    assert_match(/^AppTest#test_login_leaks \[test\/app_test\.rb:15\]:\nleaked 3 objects /, out)
    assert_match(%r{^\s+1 +\d+  test/app_test\.rb:15:String$}, out) # "bob"
    check_leak_report(out, dir)
    warn format("\n   minitest app: %d clean runs + 2 tests in %.1f s", runs, secs) if ENV["HEAPSCOPE_TEST_TIMES"]
  end

  def test_rspec_app
    rspec = ENV.fetch("PATH", "").split(File::PATH_SEPARATOR).map { |d| File.join(d, "rspec") }
                .find { |f| File.executable?(f) }
    skip "rspec not installed (Debian: ruby-rspec)" unless rspec
    dir = app_dir
    t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    runs = clean_runs(10)
    out, st = run_in(dir, runs, rspec, *gem_flags.flat_map { |f| ["-I", f.delete_prefix("-I")] }, "spec/app_spec.rb")
    secs = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t
    assert_equal 1, st.exitstatus, out
    assert_match(/^4 examples, 1 failure$/, out)
    assert_match(%r{^rspec \./spec/app_spec\.rb:13 # App does not keep sessions$}, out)
    assert_match(/expected the block not to leak memory, but it leaked 2 objects /, out)
    assert_match(/^\s+\(allowed: 1 object in 1 site\)$/, out) # the spec's "bob"
    check_leak_report(out, dir)
    warn format("\n   rspec app: %d clean runs + 3 examples in %.1f s", runs, secs) if ENV["HEAPSCOPE_TEST_TIMES"]
  end

  # The failure names the planted allocation (a Hash and its token String,
  # one each per run; the user name String is the test's) and a path from a
  # root through SESSIONS to the biggest.
  def check_leak_report(out, dir)
    site = "#{dir}/lib/app.rb:#{LEAK_LINE}"
    assert_match(/^\s+1 +\d+  #{Regexp.escape(site)}:Hash$/, out)
    assert_match(/^\s+1 +\d+  #{Regexp.escape(site)}:String$/, out)
    assert_match(/^\s*biggest: #{Regexp.escape(site)}:(Hash|String), e\.g\. 0x\h+, reached from GC root \S+:$/, out)
    assert_match(/^\s*-> 0x\h+ ARRAY Array$/, out) # SESSIONS (allocated before tracing)
    assert_match(/^\s*-> 0x\h+ (HASH Hash|STRING String) \(allocated at #{Regexp.escape(site)}\)$/, out)
  end
end
