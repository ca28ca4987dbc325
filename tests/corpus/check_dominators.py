#!/usr/bin/env python3
"""Compare `heapscope dominators --json --full --no-class-edges` with the
reference checker's Cooper-Harvey-Kennedy dominators on one dump.

usage: check_dominators.py HEAPSCOPE REFERENCE_PY DUMP

The reference graph has no category nodes (the super-root points straight
at every ROOT reference) and no class edges; immediate dominators that are
root categories in heapscope are therefore the super-root there.  Checks
reachable and unreachable counts, every immediate dominator, and every
retained size and count.
"""
import json
import subprocess
import sys


def run_json(cmd):
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out.decode('utf-8', 'surrogateescape'))


def main():
    hs, ref, dump = sys.argv[1:4]
    ours = run_json([hs, 'dominators', '--json', '--full', '--no-class-edges', '--no-progress', dump])
    theirs = run_json([sys.executable, ref, 'dominators', dump, '--full'])
    fail = []
    if ours['reachable']['count'] != theirs['reachable']:
        fail.append('reachable %d != %d' % (ours['reachable']['count'], theirs['reachable']))
    if ours['unreachable']['count'] != theirs['unreachable']:
        fail.append('unreachable %d != %d' % (ours['unreachable']['count'], theirs['unreachable']))
    # heapscope's super-root is "(roots)", and a category "(root:NAME)"
    norm = {a: ('(super-root)' if d.startswith('(root:') or d == '(roots)' else d)
            for a, d in ours['idom'].items()}
    bad = [a for a, d in theirs['idom'].items() if norm.get(a) != d]
    if bad:
        fail.append('%d immediate dominators differ, e.g. %s: %s != %s' % (
            len(bad), bad[0], norm.get(bad[0]), theirs['idom'][bad[0]]))
    mine = {a: [r['memsize'], r['count']] for a, r in ours['retained'].items()}
    badr = [a for a, v in theirs['retained'].items() if mine.get(a) != v]
    if badr:
        fail.append('%d retained sizes differ, e.g. %s: %s != %s' % (
            len(badr), badr[0], mine.get(badr[0]), theirs['retained'][badr[0]]))
    print('%s: %s (%d reachable, %d unreachable, %d idoms compared)' % (
        dump, 'OK' if not fail else 'FAIL', theirs['reachable'], theirs['unreachable'],
        len(theirs['idom'])))
    for f in fail:
        print('  ' + f)
    return 1 if fail else 0


if __name__ == '__main__':
    sys.exit(main())
