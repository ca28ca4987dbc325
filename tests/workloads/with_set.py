#!/usr/bin/env python3
"""with_set.py SET FILE PROGRAM [ARGS...]: generate our workload set SET
(tests/workloads/workloads.py, cached in $HEAPSCOPE_WORK), then run
PROGRAM ARGS... SET_DIR/FILE in its place (exit status and all).  For the
tests written in C, which cannot run Ruby themselves."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402

if len(sys.argv) < 4 or sys.argv[1] not in workloads.SETS:
    raise SystemExit('usage: with_set.py {%s} FILE PROGRAM [ARGS...]' % ','.join(workloads.SETS))
path = workloads.dump_path(workloads.ensure_set(sys.argv[1]), sys.argv[2])
sys.stdout.flush()
os.execv(sys.argv[3], sys.argv[3:] + [path])
