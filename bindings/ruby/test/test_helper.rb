# frozen_string_literal: true

# Shared fixtures: real heap dumps made by Ruby itself, once per test run,
# in a temporary directory.
require "minitest/autorun"
require "heapscope"
require "json"
require "objspace"
require "rbconfig"
require "tmpdir"
require "zlib"
require "fileutils"

module Fixtures
  DIR = Dir.mktmpdir("heapscope-test")
  Minitest.after_run { FileUtils.rm_rf(DIR) unless ENV["HEAPSCOPE_KEEP_TEST_DIR"] }

  LEAK_N = 40

  # The planted-leak generator: three traced dumps; between dump 1 and 2
  # the script leaks LEAK_N LeakedWidget objects (each with a String and an
  # Array) into the global $registry, and they survive into dump 3.
  LEAK_SCRIPT = <<~'RUBY'
    require "objspace"
    ObjectSpace.trace_object_allocations_start
    class LeakedWidget
      def initialize(i)
        @name = "widget-#{i}"
        @payload = [i, i + 1, i + 2]
      end
    end
    $registry = []
    def work(n)
      n.times { |i| $registry << LeakedWidget.new(i); "garbage-#{i}" * 3 }
    end
    def dump(path)
      GC.start
      File.open(path, "w") { |f| ObjectSpace.dump_all(output: f) }
    end
    out, n = ARGV[0], Integer(ARGV[1])
    work(n)
    dump("#{out}/leak_1.json")
    work(n)
    dump("#{out}/leak_2.json")
    work(n)
    dump("#{out}/leak_3.json")
  RUBY

  module_function

  def path(name)
    File.join(DIR, name)
  end

  # Run Ruby in a child process with this process's load path.
  def ruby(*args, env: {})
    out = IO.popen(env, [RbConfig.ruby, *lib_flags, *args], err: %i[child out], &:read)
    [out, $?]
  end

  # -I flags that make a child process load the same heapscope as we did.
  def lib_flags
    lib = File.dirname(File.dirname(Heapscope.method(:snapshot).source_location[0]))
    so = $LOADED_FEATURES.grep(%r{/heapscope/heapscope\.(so|bundle)\z}).first
    flags = ["-I#{lib}"]
    flags << "-I#{File.dirname(File.dirname(so))}" if so && !so.start_with?(lib)
    flags
  end

  # A small plain dump of a fresh, gem-less Ruby process.
  def small
    @small ||= begin
      p = path("small.json")
      out, st = IO.popen([RbConfig.ruby, "--disable-gems", "-robjspace", "-e",
                          "$keep = Array.new(300) { |i| \"kept-\#{i}\" }; GC.start; " \
                          "File.open(ARGV[0], 'w') { |f| ObjectSpace.dump_all(output: f) }", p],
                         err: %i[child out], &:read), $?
      raise "dump failed: #{out}" unless st.success?
      p
    end
  end

  def small_gz
    @small_gz ||= begin
      p = path("small.json.gz")
      Zlib::GzipWriter.open(p) { |gz| gz.write(File.binread(small)) }
      p
    end
  end

  # [a, b, c] paths of the planted-leak dumps.
  def leak
    @leak ||= begin
      script = path("make_leak.rb")
      File.write(script, LEAK_SCRIPT)
      out, st = IO.popen([RbConfig.ruby, "--disable-gems", script, DIR, LEAK_N.to_s],
                         err: %i[child out], &:read), $?
      raise "leak generator failed: #{out}" unless st.success?
      (1..3).map { |i| path("leak_#{i}.json") }
    end
  end

  def leak_script
    leak
    path("make_leak.rb")
  end

  def write(name, data)
    p = path(name)
    File.binwrite(p, data)
    p
  end
end

# Interrupting a long native call (a writer, a timeline fold) that runs
# without the GVL: Thread#raise must stop it early, not when it ends.
module InterruptCheck
  # Runs the block on a thread, raises Interrupt in it after a tenth of
  # +full+ (the seconds a whole call takes), and returns [exception,
  # seconds from the raise until the thread ended].  A call that ignored
  # the interrupt ends about 0.9 * full after it; one that stops takes a
  # moment, which a loaded machine can stretch (CI once: 0.27 s of a
  # 0.41 s write), so the measurement is taken up to +tries+ times, until
  # one is under full / 2: a call that ignores interrupts fails them all.
  def assert_interrupt_stops(full, what, tries: 3, &block)
    lags = []
    error = nil
    tries.times do
      started = Queue.new
      th = Thread.new do
        Thread.current.report_on_exception = false
        started << true
        block.call
      end
      started.pop
      sleep full / 10
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      th.raise(Interrupt, "stop the #{what}")
      error = assert_raises(Interrupt) { th.value }
      lags << Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
      break if lags.last < full / 2
    end
    assert_operator lags.min, :<, full / 2,
                    "the #{what} ran on after the interrupt (whole: #{full} s; after the interrupt: #{lags})"
    error
  end
end
