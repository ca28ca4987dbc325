# frozen_string_literal: true

module Heapscope
  # A fork snapshot's child process failed: it died (killed by a signal,
  # out of memory), or ObjectSpace.dump_all raised in it.  Whatever the
  # parent had loaded from it by then is thrown away.
  class ForkError < Error
    # The child's pid.
    attr_reader :pid
    # Its Process::Status (nil if it could not be reaped).
    attr_reader :child_status
    # "Class: message" of the exception raised in the child, or nil.
    attr_reader :child_error

    def initialize(message = nil, pid: nil, child_status: nil, child_error: nil)
      super(message)
      @pid = pid
      @child_status = child_status
      @child_error = child_error
    end
  end

  # In a fork snapshot, what another thread's stack referenced when the
  # process forked: the Thread first, then the objects (see README.md).
  class ThreadRoots < Array
  end

  # Snapshots written by a forked child (Heapscope.snapshot(fork: true),
  # Heapscope.dump(path, fork: true)).  Internal; see README.md, "Snapshots
  # from a fork".
  #
  # The parent runs the full GC (as the in-process snapshot does), turns
  # the GC off and forks; the child writes ObjectSpace.dump_all into a pipe
  # (or the file) and leaves with exit!; the parent turns the GC back on
  # and loads the pipe on a native thread and waits for the child, both
  # without the GVL.  The process is held for the GC and the fork only, and
  # the dump is the heap of one moment.
  #
  # No garbage is collected in the child, ever: a GC there would free what
  # only the other threads' stacks hold (after a fork only the forking
  # thread exists), and freeing runs finalizers and dfree functions - an
  # IO's would flush the parent's buffered writes a second time.  Turning
  # the GC off before the fork also finishes any sweep still pending.
  module ForkSnapshot # :nodoc:
    # exit! codes of the child.
    OK = 0
    FAILED = 1
    EPIPE = 2 # the parent stopped reading (its load failed): not the child's fault

    class << self
      def available?
        Process.respond_to?(:fork)
      end

      # Snapshot through a pipe into a Heap (+into+: an empty Heap made
      # beforehand, or nil).
      def capture(load, into, gc:)
        r, w = IO.pipe
        work = lambda do
          r.close # the parent's loader must be the only reader: EPIPE if it stops
          ObjectSpace.dump_all(output: w)
          w.close
        end
        with_child(gc, work, w) do |pid, stats|
          loader = Native::Loader.start(r, load) # parses its own dup of r
          r.close
          stats[:held_seconds] = now - stats[:started]
          begin
            loader.finish(into, pid)
          rescue Exception # rubocop:disable Lint/RescueException -- Interrupt too
            loader.cancel
            raise
          end
        end
      ensure
        [r, w].each { |io| io.close if io && !io.closed? }
      end

      # Write the dump to +tmp+ (gzip: by a native thread, see dump_gzip) in the child.
      def write(tmp, gzip:, gc:)
        with_child(gc, -> { Heapscope._write_dump(tmp, gzip) }, nil) { nil }
        tmp
      end

      # The method that forks without running the Ruby-level fork hooks
      # (see README.md: fork hooks): Process._fork (Ruby 3.1+; Process.fork
      # before) as Ruby defines it, under any modules prepended to it; a
      # Method of Process.
      def fork_method
        m = Process.method(Process.respond_to?(:_fork) ? :_fork : :fork)
        native = m
        native = native.super_method while native && !native.source_location.nil?
        native || m
      end

      private

      def now
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end

      # Start the GC, fork, run +work+ in the child, yield (pid, stats) in
      # the parent (with +parent_closes+ closed), reap the child and check
      # how it ended.  Returns the block's value; the stats go to
      # Heapscope.fork_stats.
      def with_child(gc, work, parent_closes)
        unless available?
          raise NotImplementedError, "a fork snapshot needs Process.fork, which #{RUBY_ENGINE} " \
                                     "#{RUBY_VERSION} on #{RUBY_PLATFORM} does not have; use fork: false"
        end
        stats = { started: now }
        status_r, status_w = IO.pipe
        stats[:gc_seconds] = gc ? full_gc : 0.0
        # From the fork until the ensure that reaps the child is entered,
        # Thread#raise, Timeout and Ctrl-C wait (a child nobody reaps would
        # be left behind); the child inherits the mask and cannot be
        # interrupted half-way either.
        Thread.handle_interrupt(Object => :never) do
          pid = without_gc do
            roots = thread_roots
            pid = fork_method.call
            child(status_r, status_w, work, roots) if pid.zero?
            pid
          end
          stats[:pid] = pid
          begin
            Thread.handle_interrupt(Object => :immediate) do
              status_w.close
              parent_closes&.close
              stats[:held_seconds] = now - stats[:started]
              result, error = parent_part(pid, stats) { |*a| yield(*a) }
              status = wait(pid)
              pid = nil # reaped
              check_child(stats[:pid], status, status_r.read.to_s, error, stats)
              stats[:seconds] = now - stats[:started]
              result
            end
          ensure
            reap(pid) if pid
            Thread.current[:heapscope_fork_stats] = stats.reject { |k, _| k == :started }
          end
        end
      ensure
        [status_r, status_w].each { |io| io.close if io && !io.closed? }
      end

      # The parent's part: [value, nil] or [nil, the library's error] (the
      # child's fate decides which error is reported).
      def parent_part(pid, stats)
        [yield(pid, stats), nil]
      rescue Heapscope::Error => e
        [nil, e]
      end

      # The child's Process::Status, or nil if another part of the program
      # reaped it first (a waitpid(-1) loop): then its report decides.
      def wait(pid)
        Process.wait2(pid)[1]
      rescue Errno::ECHILD
        nil
      end

      # After an interrupt or an error: the child is not wanted any more.
      def reap(pid)
        Process.kill(:KILL, pid)
      rescue SystemCallError
        nil
      ensure
        begin
          Process.wait(pid)
        rescue SystemCallError
          nil
        end
      end

      def full_gc
        t = now
        GC.start(full_mark: true, immediate_sweep: true)
        now - t
      end

      # GC.disable finishes a collection in progress (marking, sweeping),
      # so the child starts with nothing left to free, and inherits the GC
      # off.
      def without_gc
        was_off = GC.disable
        yield
      ensure
        GC.enable unless was_off
      end

      # After a fork only the forking thread exists: the dump's roots would
      # not include the other threads' stacks, and what only they hold
      # would have no path from a root.  Their references, as the GC sees
      # them, go into the child held by this thread (a ThreadRoots each).
      def thread_roots
        (Thread.list - [Thread.current]).map do |t|
          ThreadRoots.new([t, *ObjectSpace.reachable_objects_from(t)])
        rescue ArgumentError, TypeError
          ThreadRoots.new([t])
        end
      end

      # In the child: run +work+ and leave with exit!, which runs no
      # at_exit hooks or finalizers and flushes none of the parent's
      # buffered writes.  Never returns.
      def child(status_r, status_w, work, roots)
        code = FAILED
        begin
          status_r.close
          t = now
          work.call
          status_w.write("ok #{now - t} #{private_dirty || -1} #{roots.size}\n")
          code = OK
        rescue Errno::EPIPE
          code = EPIPE
        rescue Exception => e # rubocop:disable Lint/RescueException -- the child must reach exit!
          begin
            status_w.write("#{e.class}: #{e.message}")
          rescue Exception # rubocop:disable Lint/RescueException
            nil
          end
        ensure
          Process.exit!(code)
        end
      end

      # Bytes the fork has cost so far: pages written by the child or the
      # parent since the fork are private to the child (Linux; nil
      # elsewhere).
      def private_dirty
        File.read("/proc/self/smaps_rollup")[/^Private_Dirty:\s+(\d+) kB/, 1]&.to_i&.<<(10)
      rescue SystemCallError
        nil
      end

      def check_child(pid, status, report, load_error, stats)
        if (status.nil? || status.success?) && report.start_with?("ok ")
          _, dump_s, dirty, threads = report.split
          stats.update(child_dump_seconds: Float(dump_s), threads: Integer(threads),
                       child_private_bytes: Integer(dirty).negative? ? nil : Integer(dirty))
          raise load_error if load_error
          return
        end
        # The parent's load failed first and the child got EPIPE: the load's
        # error is the one to report.
        raise load_error if load_error && (status.nil? || status.exitstatus == EPIPE)
        why = if status.nil?
                report.empty? ? "ended, reaped by someone else, without a report" : "failed: #{report}"
              elsif status.signaled?
                "was killed by SIG#{Signal.signame(status.termsig) || status.termsig}"
              elsif !report.empty?
                "failed: #{report}"
              else
                "exited with status #{status.exitstatus}"
              end
        raise ForkError.new("the snapshot's child process #{pid} #{why}",
                            pid: pid, child_status: status, child_error: report.empty? ? nil : report)
      end
    end
  end
end

module Heapscope
  class << self
    # What the calling thread's last fork snapshot or dump measured, or
    # nil: { pid:, gc_seconds: (the full GC before the fork), held_seconds:
    # (the process was held: GC, fork, loader start), seconds: (in all),
    # threads: (other threads whose references were carried over),
    # child_dump_seconds:, child_private_bytes: (memory the fork cost by the
    # end of the dump: pages either process wrote since the fork; Linux
    # only, else nil) }.
    def fork_stats
      Thread.current[:heapscope_fork_stats]
    end
  end
end
