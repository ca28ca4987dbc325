#!/usr/bin/env python3
"""Check `heapscope diff` on a gen_leak.rb scenario directory.

usage: check_diff.py HEAPSCOPE REFERENCE_PY DIR

DIR holds heap_1/2/3.json[.gz] and truth.json (generated with verification,
so that it lists every planted leaked object).  Asserts:
  * every planted leaked object of truth.json is reported (including those
    whose address was reused from heap_1: truth lists them);
  * no reported object lies outside reference.py's identity diff;
  * grouping by type agrees with the counts of the reported addresses;
  * the 2-snapshot form (heap_1 vs heap_2) contains the 3-snapshot result.
Exit 0 if all hold.
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
    dumps = []
    for i in (1, 2, 3):
        c = sorted(glob.glob(os.path.join(d, 'heap_%d.json*' % i)))
        dumps.append(c[0])
    truth = json.load(open(os.path.join(d, 'truth.json')))
    ours = run_json([hs, 'diff', '--json', '--addresses', '--top', '0', '--no-progress'] + dumps)
    ours_t = run_json([hs, 'diff', '--json', '--by', 'type', '--top', '0', '--no-progress'] + dumps)
    two = run_json([hs, 'diff', '--json', '--addresses', '--top', '0', '--no-progress'] + dumps[:2])
    refd = run_json([sys.executable, ref, 'diff'] + dumps + ['--addresses'])
    got = set(a for g in ours['groups'] for a in g['addresses'])
    ident = set(refd['identity']['addresses'])
    planted = {}
    reused = set()
    for name, leak in truth['leaks'].items():
        objs = leak['objects']
        if isinstance(objs, dict):  # columnar form
            addrs = objs['address']
        else:
            addrs = [o['address'] if isinstance(o, dict) else o[0] for o in objs]
        planted[name] = set(addrs)
        reused |= set(leak.get('addresses_in_heap1', []))
    fail = []
    if len(got) != ours['leaked']['count']:
        fail.append('addresses listed (%d) != count (%d)' % (len(got), ours['leaked']['count']))
    for name, s in planted.items():
        miss = s - got
        if miss:
            fail.append('leak %s: %d of %d planted objects missing, e.g. %s' % (
                name, len(miss), len(s), sorted(miss)[:3]))
    extra = got - ident
    if extra:
        fail.append('%d reported objects are not in the reference identity diff, e.g. %s' % (
            len(extra), sorted(extra)[:3]))
    if sum(g['count'] for g in ours_t['groups']) != ours['leaked']['count']:
        fail.append('by-type counts do not add up to the total')
    two_set = set(a for g in two['groups'] for a in g['addresses'])
    if not got <= two_set:
        fail.append('2-snapshot diff misses %d objects of the 3-snapshot diff' % len(got - two_set))
    n_planted = sum(len(s) for s in planted.values())
    print('%s: %s: reported %d, planted %d (reused from heap_1: %d), reference identity %d, '
          'reference address-only %d, dumper objects left out %d' % (
              d, 'OK' if not fail else 'FAIL', len(got), n_planted, len(reused & got), len(ident),
              refd['address_only']['count'], ours['excluded_dumper_objects']))
    for f in fail:
        print('  ' + f)
    return 1 if fail else 0


if __name__ == '__main__':
    sys.exit(main())
