# frozen_string_literal: true

require "objspace"

module Heapscope
  class << self
    # Snapshot this process's heap: run GC (gc: true), then capture the
    # heap with ObjectSpace.dump_all and return it as a Heap.
    #
    # The dump is never stored: dump_all writes into a pipe on this thread
    # while a native thread (no GVL, no Ruby objects) parses the other
    # end, so the extra memory is the parsed model, not the dump.  With
    # path: the dump is also written to that file (gzip if it ends in .gz)
    # and loaded from it.  Load options as for Heap.load (except progress:).
    #
    # To get allocation sites (file:line) into the snapshot, trace
    # allocations first: ObjectSpace.trace_object_allocations_start.
    #
    # fork: true writes the dump in a forked child instead: the process is
    # held only while the fork starts (see README.md, "Snapshots from a
    # fork"); NotImplementedError where Process.fork does not exist.
    def snapshot(gc: true, path: nil, fork: false, **load)
      load = Heap.check_opts(load)
      raise ArgumentError, "progress: is not supported by snapshot" if load[:progress]
      return Heap.load(dump(path, gc: gc, fork: fork), **load) if path
      return ForkSnapshot.capture(load, nil, gc: gc) if fork
      full_gc if gc
      capture(load, nil)
    end

    # Write a heap dump of this process to +path+ (gzip when gzip: or the
    # name ends in .gz), atomically (a temporary name, then rename), and
    # return the path.  fork: true as for snapshot: a child writes the file.
    def dump(path, gc: true, gzip: path.to_s.end_with?(".gz"), fork: false)
      path = path.to_path if path.respond_to?(:to_path)
      tmp = "#{path}.#{Process.pid}.tmp"
      begin
        if fork
          ForkSnapshot.write(tmp, gzip: gzip, gc: gc)
        else
          full_gc if gc
          _write_dump(tmp, gzip)
        end
        File.rename(tmp, path)
      ensure
        File.unlink(tmp) if File.exist?(tmp)
      end
      path
    end

    # Find what a piece of code leaks.  With allocation tracing on, runs the
    # block and takes a snapshot, three times in all, and returns the Diff
    # of the three snapshots: the objects the block allocated on its second
    # run that are still alive after the third.  The first run is the
    # warm-up (caches, lazy constants).  See Diff#groups, Diff#suspects,
    # Diff#report.
    #
    #   leaks = Heapscope.find_leaks { handle_request }
    #   puts leaks.report
    #
    # fork: true takes the snapshots from a fork (see snapshot).
    def find_leaks(gc: true, fork: false, **load)
      raise ArgumentError, "find_leaks needs a block" unless block_given?
      load = Heap.check_opts(load)
      # Everything kept across the runs is allocated before the first
      # snapshot, so that none of it can pass for a leak of the block.
      shells = Array.new(3) { Heap._new_empty }
      ObjectSpace.trace_object_allocations do
        3.times do |i|
          yield
          if fork
            ForkSnapshot.capture(load, shells[i], gc: gc)
          else
            full_gc if gc
            capture(load, shells[i])
          end
        end
      end
      # What the snapshot code allocated in between (inline caches of
      # snapshot.rb and fork.rb) is the dumper's: the library leaves it
      # out, as it does objspace.rb's (Diff#excluded).
      Diff._compute(shells[0], shells[1], shells[2], false, false, false)
    end

    # dump_all into the file +tmp+, gzip or plain (also in a fork's child).
    def _write_dump(tmp, gzip) # :nodoc:
      gzip ? dump_gzip(tmp) : File.open(tmp, "wb") { |f| ObjectSpace.dump_all(output: f) }
    end

    private

    def full_gc
      GC.start(full_mark: true, immediate_sweep: true)
    end

    # dump_all into a pipe, parsed on a native thread.
    def capture(load, into)
      dump_to_pipe(->(r) { Native::Loader.start(r, load) }) { |loader| loader.finish(into) }
    end

    def close_quietly(io)
      io.close unless io.closed?
    rescue SystemCallError, ::IOError
      nil
    end

    # dump_all into a pipe whose read end a native thread (GzipSink, not a
    # Ruby thread) gzips into +tmp+.  A Ruby reader would read(2) into a
    # Ruby String without the GVL while dump_all, waiting on the full pipe,
    # escapes that same String into the dump: a line of raw bytes now and
    # then.  The native thread touches no Ruby object.
    def dump_gzip(tmp)
      dump_to_pipe(->(r) { Native::GzipSink.start(r, tmp) }, &:finish)
    end

    # dump_all into a pipe read by the native thread that +start+ starts on
    # its own dup of the read end (Loader, GzipSink); returns what the block
    # makes of that reader once the write end is closed (its #finish, which
    # raises the reader's error).  If the reader stops early, dump_all gets
    # EPIPE; if dump_all fails, a Loader is cancelled.
    def dump_to_pipe(start)
      r, w = IO.pipe
      reader = nil
      done = false
      begin
        reader = start.call(r)
        r.close
        begin
          ObjectSpace.dump_all(output: w)
        rescue Errno::EPIPE
          nil # the reader stopped; its #finish raises its error
        end
        close_quietly(w) # EOF for the reader
        value = yield reader
        done = true
        value
      ensure
        close_quietly(r)
        close_quietly(w)
        reader.cancel if reader && !done && reader.respond_to?(:cancel)
      end
    end
  end
end
