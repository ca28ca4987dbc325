#!/usr/bin/env python3
"""Check `heapscope suspects` and `heapscope root` on a gen_leak.rb scenario.

usage: check_suspects.py HEAPSCOPE REFERENCE_PY DIR

  * every planted leak's holder (truth.json) is among the first N+1
    suspects, N = number of planted leaks;
  * `heapscope root --json` finds, for every planted leaked object, a path
    from a root that passes through its holder, and the path to each holder
    has the length reference.py's BFS finds.
"""
import glob
import json
import os
import subprocess
import sys


def run_json(cmd):
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out.decode('utf-8', 'surrogateescape'))


def main():
    hs, ref, d = sys.argv[1:4]
    dumps = [sorted(glob.glob(os.path.join(d, 'heap_%d.json*' % i)))[0] for i in (1, 2, 3)]
    truth = json.load(open(os.path.join(d, 'truth.json')))
    leaks = truth['leaks']
    sus = run_json([hs, 'suspects', '--json', '--top', '0', '--no-progress'] + dumps)
    ranked = [s['address'] for s in sus['suspects']]
    fail = []
    n = len(leaks)
    for name, L in leaks.items():
        h = L['holder']['address']
        if h not in ranked[:n + 1]:
            pos = ranked.index(h) + 1 if h in ranked else None
            fail.append('leak %s: holder %s is suspect #%s, not in the first %d' % (name, h, pos, n + 1))
    # root paths through the holder
    targets = []
    holder_of = {}
    for name, L in leaks.items():
        for row in L['objects']:
            targets.append(row[0])
            holder_of[row[0]] = L['holder']['address']
    paths = run_json([hs, 'root', '--json', '--no-progress', dumps[2]] + targets)
    by_target = {p['target']: p for p in paths['paths']}
    steps = lambda a: [s['address'] for s in by_target.get(a, {}).get('path', [])]
    bad = [a for a in targets if holder_of[a] not in steps(a)]
    if bad:
        fail.append('%d leaked objects have no root path through their holder, e.g. %s' % (len(bad), bad[0]))
    holders = [L['holder']['address'] for L in leaks.values()]
    hp = run_json([hs, 'root', '--json', '--no-class-edges', '--no-progress', dumps[2]] + holders)
    rp = run_json([sys.executable, ref, 'rootpath', dumps[2]] + holders)
    for p in hp['paths']:
        want = rp.get(p['target'])
        if want is None or len(want) - 1 != len(p['path']):
            fail.append('holder %s: path length %d, reference BFS %s' % (
                p['target'], len(p['path']), None if want is None else len(want) - 1))
    print('%s: %s (holders ranked %s of %d suspects; %d leaked objects traced to their holder)' % (
        d, 'OK' if not fail else 'FAIL',
        sorted(ranked.index(L['holder']['address']) + 1 for L in leaks.values() if L['holder']['address'] in ranked),
        len(ranked), len(targets) - len(bad)))
    for f in fail:
        print('  ' + f)
    return 1 if fail else 0


if __name__ == '__main__':
    sys.exit(main())
