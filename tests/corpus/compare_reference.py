#!/usr/bin/env python3
"""Compare `heapscope summary --json` and `heapscope tally --json` with the
independent reference checker (shared/corpus/reference.py) on one dump.

usage: compare_reference.py HEAPSCOPE REFERENCE_PY DUMP [--json-out FILE]

Exits 0 when every compared figure agrees exactly, 1 otherwise (each
difference is printed).  Compared: lines, skipped (= reference bad_lines),
objects, total memsize, SHAPE and NONE counts, roots per category (records,
references, unique), distinct dangling addresses, count+memsize per type,
count per class label, and the whole file:line:class tally.
"""
import json
import subprocess
import sys


def run_json(cmd):
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out.decode('utf-8', 'surrogateescape'))


def main():
    hs, ref, dump = sys.argv[1:4]
    ours = run_json([hs, 'summary', '--json', '--no-progress', dump])
    # --keep-dumper: the reference counts every object, the dumper's too
    tally = run_json([hs, 'tally', '--json', '--no-progress', '--keep-dumper', '--by', 'file:line:class',
                      '--top', '0', dump])
    theirs = run_json([sys.executable, ref, 'stats', dump, '--dangling', '--top', '100000000'])
    diffs = []

    def eq(what, a, b):
        if a != b:
            diffs.append('%s: heapscope %r != reference %r' % (what, a, b))

    eq('lines', ours['lines'], theirs['lines'])
    eq('skipped lines', ours['skipped_lines'], theirs['bad_lines'])
    eq('objects', ours['objects'], theirs['objects'])
    eq('total_memsize', ours['total_memsize'], theirs['total_memsize'])
    eq('shapes', ours['shapes'], theirs['shapes']['count'])
    eq('free_slots', ours['free_slots'], theirs['free_slots'])
    eq('dangling_references', ours['dangling_references'], theirs['dangling_references'])
    eq('root categories', sorted(ours['roots']), sorted(theirs['roots']))
    for k, v in theirs['roots'].items():
        o = ours['roots'].get(k, {})
        for f in ('records', 'references', 'unique'):
            eq('roots.%s.%s' % (k, f), o.get(f), v[f])
    eq('types', sorted(ours['by_type']), sorted(theirs['by_type']))
    for t, v in theirs['by_type'].items():
        o = ours['by_type'].get(t, {})
        eq('by_type.%s.count' % t, o.get('count'), v['count'])
        eq('by_type.%s.memsize' % t, o.get('memsize'), v['memsize'])
    eq('class labels', sorted(ours['by_class']), sorted(theirs['by_class']))
    for c, n in theirs['by_class'].items():
        eq('by_class.%s' % c, ours['by_class'].get(c, {}).get('count'), n)
    eq('tally groups', tally['groups'], theirs['tally_distinct'])
    ours_tally = [[r['key'], r['count']] for r in tally['rows']]
    theirs_tally = [list(x) for x in theirs['tally_top']]
    if ours_tally != theirs_tally:
        for i, (a, b) in enumerate(zip(ours_tally, theirs_tally)):
            if a != b:
                diffs.append('tally row %d: heapscope %r != reference %r' % (i, a, b))
                break
        if len(ours_tally) != len(theirs_tally):
            diffs.append('tally rows: %d != %d' % (len(ours_tally), len(theirs_tally)))
    for d in diffs[:50]:
        print('DIFF %s: %s' % (dump, d))
    print('%s: %s (%d objects, %d types, %d classes, %d tally groups)' % (
        dump, 'OK' if not diffs else '%d differences' % len(diffs), theirs['objects'],
        len(theirs['by_type']), len(theirs['by_class']), theirs['tally_distinct']))
    return 1 if diffs else 0


if __name__ == '__main__':
    sys.exit(main())
