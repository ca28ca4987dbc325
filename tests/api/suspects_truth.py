#!/usr/bin/env python3
"""suspects_truth.py PROGRAM [SET...]: our leak workload's planted holders
against the library's suspects (PROGRAM: tests/api/test_suspects.c).

For each set (tests/workloads/workloads.py; leak_s1 and leak_s005_gz by
default), the truth (truth.json, computed by the workload from ObjectSpace
in the same process) gives each planted leak's holder address and its
planted allocation sites (file:line:class keys of the objects allocated at
the lines marked @leak-site); PROGRAM gets the three dumps and, per holder,
ADDRESS=SITE,SITE... and checks through the public API that the holder is
an application suspect one of whose first five sites that put objects in it
is a planted one.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'workloads'))
import workloads  # noqa: E402


def main():
    prog = sys.argv[1]
    sets = sys.argv[2:] or ['leak_s1', 'leak_s005_gz']
    bad = 0
    for name in sets:
        d = workloads.ensure_set(name)
        t = workloads.truth(d)
        files = [workloads.dump_path(d, s['file']) for s in t['snapshots']]
        args = []
        for leak in t['leaks'].values():
            planted = sorted(leak['planted_by_site'])
            if not planted:
                raise SystemExit('%s: a leak without planted objects' % name)
            args.append('%s=%s' % (leak['holder']['address'], ','.join(planted)))
        print('--- %s: %d planted holders' % (name, len(args)), flush=True)
        r = subprocess.run([prog] + files + args)
        bad += r.returncode != 0
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
