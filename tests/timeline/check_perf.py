#!/usr/bin/env python3
"""timeline memory on our workload's series
(examples/workloads/timeline_series.rb --steps 10 --scale 35: dumps of about
43-56 MB, about 0.5 GB in all):

  * peak RSS of `heapscope timeline` over the 10 dumps (all cores) < 100 MB,
    for --by type and for --by file:line:class (measured with /usr/bin/time);
  * the growing group first in both.
The fold's speed against a load is bench/'s to measure (bench/run.py: fold /
summary), not a test's: timings in the default run mean nothing on a
shared machine, and this test runs beside others.

Skipped (77) in sanitizer builds, whose memory means nothing here.
Env (meson): HEAPSCOPE, HEAPSCOPE_WORK (where the workload's series is cached).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'workloads'))
import workloads  # noqa: E402

HEAPSCOPE = os.environ['HEAPSCOPE']
LIMIT_KB = 100 * 1024

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import checklib  # noqa: E402
from checklib import check, failures  # noqa: E402,F401
checklib.show_ok = True


def peak_rss_kb(args):
    """Run HEAPSCOPE args under /usr/bin/time; (max RSS KB, wall s, stdout)."""
    t0 = time.perf_counter()
    r = subprocess.run(['/usr/bin/time', '-f', '%M', HEAPSCOPE] + args,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit('heapscope %s failed: %s' % (' '.join(args[:3]), r.stderr))
    return int(r.stderr.strip().splitlines()[-1]), wall, r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--sanitize', default='none')
    a = ap.parse_args()
    if a.sanitize not in ('', 'none'):
        print('SKIP: sanitizer build (b_sanitize=%s): memory is not meaningful' % a.sanitize)
        sys.exit(77)
    if not os.path.exists('/usr/bin/time'):
        raise SystemExit('/usr/bin/time is missing (Debian package: time)')

    t0 = time.perf_counter()
    data = workloads.ensure('tl_s35', 'timeline', ['--steps', '10', '--scale', '35'])
    print('     the series (generated once, then cached): %.1f s' % (time.perf_counter() - t0))
    dumps = sorted(glob.glob(os.path.join(data, 'step_*.json')))
    sizes = [os.path.getsize(d) for d in dumps]
    truth = workloads.truth(data)
    print('     %d dumps, %.1f .. %.1f MB, %.0f MB in all; %d cores' % (
        len(dumps), min(sizes) / 1e6, max(sizes) / 1e6, sum(sizes) / 1e6, os.cpu_count()))

    for by in ('type', 'file:line:class'):
        kb, wall, out = peak_rss_kb(['timeline', '--json', '--by', by, '--metric', 'count'] + dumps)
        j = json.loads(out)
        key = truth['growing']['type'] if by == 'type' else '%s:%s' % (truth['growing']['site'],
                                                                       truth['growing']['class'])
        check(j['groups'][0]['key'] == key and j['groups'][0]['growing'],
              'timeline --by %s on the 10 dumps: %s first, growing' % (by, j['groups'][0]['key']))
        check(kb < LIMIT_KB, 'timeline --by %s: peak RSS %.1f MB < 100 MB (%.2f s wall, %d groups)'
              % (by, kb / 1024, wall, j['group_count']))
    kb1, wall1, _ = peak_rss_kb(['summary', dumps[-1]])
    print('     for scale: summary (full load) of the largest dump alone: peak RSS %.1f MB' % (kb1 / 1024))

    print('%d passed, %d failed' % (checklib.passed, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
