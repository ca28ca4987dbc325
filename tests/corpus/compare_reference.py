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


TRACER = '<allocation tracer>'


def run_json(cmd):
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out.decode('utf-8', 'surrogateescape'))


def main():
    hs, ref, dump = sys.argv[1:4]
    ours = run_json([hs, 'summary', '--json', '--no-progress', dump])
    # --keep-dumper --keep-tracer: the reference counts every object, the
    # dumper's and the allocation tracer too
    tally = run_json([hs, 'tally', '--json', '--no-progress', '--keep-dumper', '--keep-tracer',
                      '--by', 'file:line:class', '--top', '0', dump])
    theirs = run_json([sys.executable, ref, 'stats', dump, '--dangling', '--top', '100000000'])
    diffs = []

    def eq(what, a, b):
        if a != b:
            diffs.append('%s: heapscope %r != reference %r' % (what, a, b))

    eq('lines', ours['dumps'][0]['lines'], theirs['lines'])
    eq('skipped lines', ours['skipped_lines'], theirs['bad_lines'])
    eq('objects', ours['total']['count'], theirs['objects'])
    eq('objects (dumps)', ours['dumps'][0]['objects'], theirs['objects'])
    eq('total memsize', ours['total']['memsize'], theirs['total_memsize'])
    eq('shapes', ours['shapes'], theirs['shapes']['count'])
    eq('free_slots', ours['free_slots'], theirs['free_slots'])
    # the reference's dangling_references are distinct missing addresses
    eq('dangling addresses', ours['dangling']['addresses'], theirs['dangling_references'])
    roots = {r['root']: r for r in ours['roots']}
    eq('root categories', sorted(roots), sorted(theirs['roots']))
    eq('root categories listed once', len(roots), len(ours['roots']))
    for k, v in theirs['roots'].items():
        o = roots.get(k, {})
        for f in ('records', 'references', 'unique'):
            eq('roots.%s.%s' % (k, f), o.get(f), v[f])
    by_type = {g['key']: g for g in ours['by_type']['groups']}
    by_class = {g['key']: g for g in ours['by_class']['groups']}
    # heapscope labels Ruby's allocation tracer (a DATA object without a
    # class) <allocation tracer> (docs/DESIGN.md); the reference gives it
    # the label of any object without a class, Object
    tracer = by_class.pop(TRACER, None)
    if tracer:
        o = by_class.setdefault('Object', {'key': 'Object', 'count': 0, 'memsize': 0})
        o['count'] += tracer['count']
        o['memsize'] += tracer['memsize']
        merged = {}
        for r in tally['groups']:
            k = r['key']
            if k.endswith(':' + TRACER):
                k = k[:-len(TRACER)] + 'Object'
            merged[k] = merged.get(k, 0) + r['count']
        tally['groups'] = [{'key': k, 'count': n}
                           for k, n in sorted(merged.items(), key=lambda kv: (-kv[1], kv[0]))]
        tally['group_count'] = len(merged)
    eq('by_type group_count', ours['by_type']['group_count'], len(theirs['by_type']))
    # (less the groups merged into Object above)
    eq('by_class group_count', ours['by_class']['group_count'] -
       (len(ours['by_class']['groups']) - len(by_class)), len(theirs['by_class']))
    eq('types', sorted(by_type), sorted(theirs['by_type']))
    for t, v in theirs['by_type'].items():
        o = by_type.get(t, {})
        eq('by_type.%s.count' % t, o.get('count'), v['count'])
        eq('by_type.%s.memsize' % t, o.get('memsize'), v['memsize'])
    eq('class labels', sorted(by_class), sorted(theirs['by_class']))
    for c, n in theirs['by_class'].items():
        eq('by_class.%s' % c, by_class.get(c, {}).get('count'), n)
    eq('tally groups', tally['group_count'], theirs['tally_distinct'])
    ours_tally = [[r['key'], r['count']] for r in tally['groups']]
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
