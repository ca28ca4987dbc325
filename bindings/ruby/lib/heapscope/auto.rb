# frozen_string_literal: true

# bleak_house-style conveniences, switched on by the environment:
#
#   HEAPSCOPE=1 ruby -r heapscope/auto app.rb
#
# - allocation tracing is turned on (ObjectSpace.trace_object_allocations_start),
#   so dumps and tallies know each object's file:line;
# - `kill -USR2 PID` writes a numbered gzip heap dump,
#   HEAPSCOPE_DIR/heapscope.PID.N.json.gz (HEAPSCOPE_DIR defaults to
#   Dir.tmpdir), after a full GC, from a background thread, and prints
#     heapscope: wrote /tmp/heapscope.4242.1.json.gz (1843210 bytes, 0.42 s)
#   (or "heapscope: dump 1 failed: ..." on an error);
# - at exit, the top-20 file:line:class tally of the live heap goes to stderr:
#     heapscope: exit tally of pid 4242: 123456 objects, 789 distinct file:line:class sites; top 20:
#          count      memsize  file:line:class
#          12000       480000  /app/models/user.rb:12:String
#     ...
#
# Other settings: HEAPSCOPE_SIGNAL (default USR2; "none" for no handler),
# HEAPSCOPE_EXIT=0 (no exit tally), HEAPSCOPE_TRACE=0 (no allocation tracing),
# HEAPSCOPE_FORK=1 / 0 (dumps and the exit tally always / never from a
# fork; unset: from a fork when Process.fork exists and another thread than
# the one taking the dump is running, which is always the case for the
# signal's dumps; without Process.fork, always in-process).
#
# For continuous profilers (docs/FLEET.md):
# - HEAPSCOPE_PPROF=1 writes a gzipped pprof profile beside each dump
#   (heapscope.PID.N.pb.gz, as `heapscope export --format pprof`, its time
#   the dump's); HEAPSCOPE_PPROF=DIR writes them into DIR instead;
# - HEAPSCOPE_INTERVAL=SECONDS takes a dump (and its pprof) every SECONDS
#   from a background thread, as the signal does;
# - HEAPSCOPE_KEEP_DUMPS=0 deletes each dump once its pprof is written.
# Without HEAPSCOPE=1, requiring this file does nothing.  Heapscope::Auto.install
# does the same from code.
require "heapscope"
require "tmpdir"

module Heapscope
  module Auto
    @lock = Mutex.new
    @count = 0
    @installed = false

    class << self
      # Directory dumps go to; where pprof profiles go (nil: none).
      attr_reader :dir, :pprof_dir

      # Install the signal handler and the exit report (once per process).
      # fork: true, false or :auto (see the top of this file).
      def install(dir: ENV.fetch("HEAPSCOPE_DIR", Dir.tmpdir), signal: ENV.fetch("HEAPSCOPE_SIGNAL", "USR2"),
                  at_exit: ENV["HEAPSCOPE_EXIT"] != "0", trace: ENV["HEAPSCOPE_TRACE"] != "0",
                  out: $stderr, fork: { "1" => true, "0" => false }.fetch(ENV["HEAPSCOPE_FORK"], :auto),
                  pprof: ENV["HEAPSCOPE_PPROF"], interval: ENV["HEAPSCOPE_INTERVAL"],
                  keep_dumps: ENV["HEAPSCOPE_KEEP_DUMPS"] != "0")
        return false if @installed
        @installed = true
        @dir = dir
        # pprof: true / "1" beside the dumps, a directory, or nil / false / "0"
        @pprof_dir = case pprof
                     when nil, false, "", "0" then nil
                     when true, "1" then dir
                     else pprof.to_s
                     end
        @keep_dumps = keep_dumps
        @out = out
        @fork = fork
        ObjectSpace.trace_object_allocations_start if trace
        install_signal(signal) unless signal.nil? || signal == "" || signal == "none"
        install_schedule(Float(interval)) if interval && interval != ""
        if at_exit
          pid = Process.pid
          Kernel.at_exit { exit_report if Process.pid == pid }
        end
        true
      end

      # Write the next numbered dump now (on this thread); returns its path.
      def dump
        n = @lock.synchronize { @count += 1 }
        write_dump(n)
      end

      # Print the exit tally (top 20 file:line:class) to +out+: a line that
      # says what it is, then the library's table (Tally#to_s).
      def exit_report(out = @out || $stderr, top: 20)
        heap = Heapscope.snapshot(fork: fork?)
        # without the snapshot's own objects (they are not the app's)
        tally = heap.tally(by: "file:line:class", top: top, keep_dumper: false)
        out.puts "heapscope: exit tally of pid #{Process.pid}: #{heap.object_count} objects, " \
                 "#{tally.group_count} distinct file:line:class sites; top #{tally.size}:"
        out.print tally.to_s
        out.flush
      rescue StandardError => e
        out.puts "heapscope: exit tally failed: #{e.class}: #{e.message}"
      end

      private

      # A dump (and its pprof) every +secs+ seconds, from a daemon thread.
      def install_schedule(secs)
        raise ArgumentError, "HEAPSCOPE_INTERVAL must be above 0, not #{secs}" unless secs.positive?
        @schedule = Thread.new do
          Thread.current.thread_variable_set(:heapscope_dump, true)
          Thread.current.report_on_exception = false
          loop do
            sleep secs
            dump
          end
        end
      end

      def install_signal(signal)
        previous = nil
        previous = Signal.trap(signal) do |signo|
          # Trap context: no locks here; the dump runs on its own thread,
          # so the handler returns at once and the app keeps running.
          n = (@count += 1)
          Thread.new do
            Thread.current.thread_variable_set(:heapscope_dump, true)
            write_dump(n)
          end
          previous.call(signo) if previous.respond_to?(:call)
        end
      end

      # Whether the next dump comes from a fork: the setting, or with :auto
      # whether another thread than this one (and heapscope's own dump
      # threads) would be held by an in-process dump.
      def fork?
        return false unless ForkSnapshot.available?
        return @fork unless @fork == :auto
        Thread.list.any? { |t| t != Thread.current && t.alive? && !t.thread_variable_get(:heapscope_dump) }
      end

      def write_dump(n)
        path = File.join(@dir, "heapscope.#{Process.pid}.#{n}.json.gz")
        t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        held = @lock.synchronize { dump_to(path, n) }
        secs = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
        (@out || $stderr).puts format("heapscope: wrote %s (%d bytes, %.2f s%s)", path, File.size(path), secs,
                                      held ? format(", from a fork, process held %.3f s", held) : "")
        write_pprof(path, n, Time.now) if @pprof_dir
        path
      rescue StandardError => e
        (@out || $stderr).puts "heapscope: dump #{n} failed: #{e.class}: #{e.message}"
        nil
      end

      # The dump's pprof profile (heapscope.PID.N.pb.gz in the pprof
      # directory, written under a temporary name and renamed, so that an
      # uploader never sees half a file); the dump deleted unless kept.
      def write_pprof(path, n, time)
        out = File.join(@pprof_dir, "heapscope.#{Process.pid}.#{n}.pb.gz")
        tmp = "#{out}.tmp"
        Heapscope.export(path, format: :pprof, out: tmp, time: time)
        File.rename(tmp, out)
        File.unlink(path) unless @keep_dumps
        (@out || $stderr).puts "heapscope: wrote #{out} (#{File.size(out)} bytes, pprof)"
      rescue StandardError => e
        File.unlink(tmp) if tmp && File.exist?(tmp)
        (@out || $stderr).puts "heapscope: pprof of dump #{n} failed: #{e.class}: #{e.message}"
      end

      # Write the dump; returns how long a fork dump held the process, or
      # nil.  When a fork dump chosen by :auto fails, this one and the next
      # are written in-process.
      def dump_to(path, n)
        unless fork?
          Heapscope.dump(path, gc: true, gzip: true)
          return nil
        end
        begin
          Heapscope.dump(path, gc: true, gzip: true, fork: true)
          Heapscope.fork_stats[:held_seconds]
        rescue ForkError => e
          raise unless @fork == :auto
          @fork = false
          (@out || $stderr).puts "heapscope: dump #{n} from a fork failed (#{e.message}); dumping in-process from now on"
          Heapscope.dump(path, gc: true, gzip: true)
          nil
        end
      end
    end
  end
end

Heapscope::Auto.install if ENV["HEAPSCOPE"] == "1"
