#!/usr/bin/env python3
"""Compare the SQL recipes of docs/TIMELINE.md, run on a loaded export, with
`heapscope timeline --json` on the same dumps.  Called by run_postgres.sh with
PGHOST/PGPORT/PGUSER set to a private server."""
import argparse
import csv
import glob
import io
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'workloads'))
import workloads  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import checklib  # noqa: E402
from checklib import check, failures  # noqa: E402,F401
checklib.show_ok = True


def doc_queries(path):
    text = open(path, encoding='utf-8').read()
    out = {}
    for m in re.finditer(r'<!-- sql:(\w+) -->\s*```sql\n(.*?)```', text, re.S):
        out[m.group(1)] = m.group(2)
    return out


def psql(exe, db, sql, variables=None):
    cmd = [exe, '-X', '-q', '--csv', '-v', 'ON_ERROR_STOP=1', '-d', db]
    for k, v in (variables or {}).items():
        cmd += ['-v', '%s=%s' % (k, v)]
    r = subprocess.run(cmd, input=sql, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit('psql failed (%d): %s\n%s' % (r.returncode, r.stderr, sql))
    return list(csv.DictReader(io.StringIO(r.stdout)))


def timeline(exe, dumps, by, metric):
    # --keep-dumper --keep-tracer: the exported tables hold every object,
    # the dumper's and Ruby's allocation tracer too
    r = subprocess.run([exe, 'timeline', '--json', '--top', '0', '--keep-dumper', '--keep-tracer',
                        '--by', by, '--metric', metric] + dumps, capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def close(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--heapscope', required=True)
    ap.add_argument('--psql', required=True)
    ap.add_argument('--doc', required=True)
    ap.add_argument('--dumps', required=True)
    ap.add_argument('--databases', nargs='+', required=True)
    a = ap.parse_args()

    q = doc_queries(a.doc)
    check(set(q) >= {'memory_by_type', 'growth_by_file', 'holders_of_site'},
          'docs/TIMELINE.md has the three SQL recipes (%s)' % ', '.join(sorted(q)))
    truth = workloads.truth(a.dumps)
    # per dump and type, the objects the workload counted with ObjectSpace,
    # plus the dumper's own (tests/workloads/workloads.py)
    expect = [workloads.expected_types(a.dumps, truth, s) for s in truth['snapshots']]
    dumps = sorted(glob.glob(os.path.join(a.dumps, 'step_*.json')))
    # given in reverse: timeline must order them itself
    by_type = timeline(a.heapscope, dumps[::-1], 'type', 'memsize')
    by_file = timeline(a.heapscope, dumps[::-1], 'file', 'memsize')
    check([d['path'] for d in by_type['dumps']] == dumps,
          'timeline ordered the dumps by name (%s)' % by_type['order_source'])

    for db in a.databases:
        tag = '[%s] ' % db
        drows = psql(a.psql, db, 'SELECT dump_id, seq, path, objects FROM dumps ORDER BY seq;')
        check([r['path'] for r in drows] == dumps, tag + 'dumps table: same order as timeline')
        for r, e in zip(drows, expect):
            want = sum(v[0] for v in e.values())
            check(int(r['objects']) == want,
                  tag + 'dump %s objects %s = truth %s' % (r['seq'], r['objects'], want))

        # memory by type over time
        rows = psql(a.psql, db, q['memory_by_type'])
        sql = {}
        for r in rows:
            sql.setdefault(r['type'], {})[int(r['seq'])] = (int(r['objects']), int(r['memsize']))
        n = len(dumps)
        tl = {g['key']: g for g in by_type['groups']}
        check(set(sql) == set(tl), tag + 'memory_by_type: same types as timeline (%d)' % len(tl))
        bad = []
        for t, g in tl.items():
            for k in range(n):
                got = sql.get(t, {}).get(k + 1, (0, 0))
                if got != (g['count'][k], g['memsize'][k]):
                    bad.append((t, k + 1, got, (g['count'][k], g['memsize'][k])))
        check(not bad, tag + 'memory_by_type: every (type, dump) count and memsize equals timeline'
              + (' -- %s' % bad[:5] if bad else ''))
        bad = []
        for t, ys in ((t, [expect[k].get(t, [0, 0])[0] for k in range(n)]) for t in expect[0]):
            got = [sql.get(t, {}).get(k + 1, (0, 0))[0] for k in range(n)]
            if got != ys:
                bad.append(t)
        check(not bad, tag + 'memory_by_type: per-type counts equal the truth\'s')

        # growth by file
        rows = psql(a.psql, db, q['growth_by_file'])
        tf = {g['key']: g for g in by_file['groups']}
        check(len(rows) == min(20, len(tf)), tag + 'growth_by_file: %d rows' % len(rows))
        bad = []
        for r in rows:
            g = tf.get(r['file'])
            if g is None:
                bad.append((r['file'], 'not in timeline'))
                continue
            if not close(float(r['memsize_per_step']), g['slope_per_step'], 1e-3):
                bad.append((r['file'], r['memsize_per_step'], g['slope_per_step']))
            if int(r['first_memsize']) != g['memsize'][0] or int(r['last_memsize']) != g['memsize'][-1]:
                bad.append((r['file'], 'first/last'))
            ys = g['memsize']
            if len(set(ys)) > 1 and r['r2'] and not close(float(r['r2']), g['r2'], 1e-3):
                bad.append((r['file'], 'r2', r['r2'], g['r2']))
        check(not bad, tag + 'growth_by_file: slopes, R2, first and last equal timeline --by file'
              + (' -- %s' % bad[:5] if bad else ''))
        top_growing = [g['key'] for g in by_file['groups'] if g['growing']]
        check(bool(top_growing) and rows[0]['file'] == top_growing[0] == truth['growing']['file'],
              tag + 'growth_by_file: steepest file %s = timeline\'s first growing = truth'
              % rows[0]['file'])

        # holders of the growing site
        rows = psql(a.psql, db, q['holders_of_site'],
                    {'file': truth['growing']['file'], 'line': truth['growing']['line']})
        holder = truth['growing']['holder']['address']
        check(bool(rows) and rows[0]['address'] == holder and rows[0]['type'] == truth['growing']['holder']['type']
              and int(rows[0]['references_to_site']) >= truth['growing']['count_at_step'][-1],
              tag + 'holders_of_site: first holder %s is the truth holder %s (%s references)'
              % (rows[0]['address'] if rows else None, holder,
                 rows[0]['references_to_site'] if rows else 0))

        # no string values anywhere
        n_strings = psql(a.psql, db, "SELECT count(*) AS n FROM objects WHERE type = 'STRING';")
        check(int(n_strings[0]['n']) > 0, tag + 'strings exported as rows (%s)' % n_strings[0]['n'])

    print('%d passed, %d failed' % (checklib.passed, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
