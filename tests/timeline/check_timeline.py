#!/usr/bin/env python3
"""heapscope timeline / histogram / export on a real series of dumps.

usage: check_timeline.py [--source ours|corpus]

  ours    examples/workloads/timeline_series.rb --steps 10 --scale 1: its
          truth, computed in the Ruby process, counts the objects per type
          with ObjectSpace (the dumper's own objects, found in the dump, are
          added: tests/workloads/workloads.py)
  corpus  ../shared/corpus/gen_timeline.rb --steps 10 --scale 1, its
          truth.json, and reference.py `timeline` (skipped, 77, without the
          corpus)

  * the planted growing group ranks first (and is the only growing one) for
    --by type, class and file:line (truth growing.type/class/site);
  * no flat group is ever marked growing; other types are exactly flat;
  * the per-type count and memsize series equal the truth (and, for the
    corpus, reference.py `timeline`);
  * ordering rules (epoch, epoch-ms, datetime, sequence, mtime, given);
  * CSV = JSON; text output; thread-count independence;
  * SVGs parse as XML and render with rsvg-convert (librsvg2-bin);
  * histogram = tally; export row counts, valid UTF-8, no string values;
  * usage errors and bad input; the shared options (--no-index, -v,
    --threads) accepted by timeline, histogram and export;
  * every --json output (timeline, diff --grew, histogram, export, the JSON
    lines rows) valid against its schema in docs/schema/ (python3-jsonschema);
  * diff --grew = a timeline of the dumps in the order given;
  * long keys cut in the middle, keeping the file name, line and class.

Env (meson): HEAPSCOPE, HEAPSCOPE_CORPUS, HEAPSCOPE_WORK.
"""
import csv
import errno
import glob
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import warnings
import xml.etree.ElementTree as ET

import jsonschema

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'workloads'))
import workloads  # noqa: E402

HEAPSCOPE = os.environ['HEAPSCOPE']
CORPUS = os.environ.get('HEAPSCOPE_CORPUS', '')
# Each source has its own work directory (set in main), so the two tests
# can run at the same time.
WORK = os.path.join(os.environ.get('HEAPSCOPE_WORK', '/tmp'), 'timeline')
SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'docs', 'schema')
SCHEMA_BASE = 'https://heapscope.invalid/schema/'

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import checklib  # noqa: E402
from checklib import check, failures  # noqa: E402,F401
checklib.show_ok = True


def run(args, rc=0, text=True):
    r = subprocess.run([HEAPSCOPE] + args, capture_output=True, text=text,
                       encoding='utf-8' if text else None,
                       errors='surrogateescape' if text else None)
    if rc is not None and r.returncode != rc:
        print('command %s exited %d, expected %d\nstderr: %s' % (args, r.returncode, rc, r.stderr))
    return r


def tl_json(args):
    # --keep-dumper --keep-tracer: the optional reference corpus's truth and
    # checker (README, "Tests") count every object, the dumper's and Ruby's
    # allocation tracer too
    r = run(['timeline', '--json', '--top', '0', '--keep-dumper', '--keep-tracer'] + args)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout)


_schemas = {}


def schema_ok(doc, name, ref=None):
    """doc is valid against docs/schema/NAME.json (or its #/$defs/REF)."""
    if not _schemas:
        for f in glob.glob(os.path.join(SCHEMAS, '*.json')):
            _schemas[os.path.basename(f)[:-5]] = json.load(open(f))
    target = {'$ref': SCHEMA_BASE + name + '.json' + ('#/$defs/' + ref if ref else '')}
    try:
        from referencing import Registry, Resource  # jsonschema >= 4.18
        reg = Registry().with_resources((SCHEMA_BASE + k + '.json', Resource.from_contents(v))
                                        for k, v in _schemas.items())
        v = jsonschema.Draft202012Validator(target, registry=reg)
    except ImportError:  # Debian 12's python3-jsonschema (4.10)
        store = {SCHEMA_BASE + k + '.json': v for k, v in _schemas.items()}
        v = jsonschema.Draft202012Validator(target, resolver=jsonschema.RefResolver('', target,
                                                                                     store=store))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', DeprecationWarning)
            v.validate(doc)
        return True
    except jsonschema.ValidationError as e:
        print('     schema %s%s: %s at %s' % (name, '#' + ref if ref else '', e.message,
                                             list(e.absolute_path)))
        return False


def flat(ys):
    return len(set(ys)) == 1


def paths_of(j):
    # the JSON vocabulary (docs/JSON.md): dumps are {"path", "objects", ...}
    return [d['path'] for d in j['dumps']]


def times_of(j):
    return [d['time'] for d in j['dumps']]


def fit(ys):
    """Least-squares slope and R^2 of ys against 0, 1, 2, ... (R^2 0 when flat)."""
    n = len(ys)
    mx, my = (n - 1) / 2.0, sum(ys) / float(n)
    sxx = sum((i - mx) ** 2 for i in range(n))
    sxy = sum((i - mx) * (y - my) for i, y in enumerate(ys))
    syy = sum((y - my) ** 2 for y in ys)
    slope = sxy / sxx if sxx else 0.0
    r2 = sxy * sxy / (sxx * syy) if sxx and syy else 0.0
    return slope, r2, my


def series_grows(ys, floor):
    n = len(ys)
    slope, r2, mean = fit(ys)
    return (n >= 3 and slope > 0 and r2 >= 0.8 - 1e-9 and ys[-1] > ys[0]
            and slope * (n - 1) >= max(floor, 0.02 * mean) - 1e-6)


def rule_ok(g, metric, ndumps):
    """The documented rule (docs/TIMELINE.md): the count or the memsize
    series rises steadily, whatever the metric ranked by."""
    return ndumps >= 3 and (series_grows(g['count'], 10) or series_grows(g['memsize'], 4096))


def invariants(j, what):
    n = len(j['dumps'])
    bad_flat = [g['key'] for g in j['groups']
                if g['growing'] and flat(g['count']) and flat(g['memsize'])]
    check(not bad_flat, '%s: no flat group is growing' % what)
    bad_rule = [g['key'] for g in j['groups'] if g['growing'] != rule_ok(g, j['metric'], n)]
    check(not bad_rule, '%s: growing exactly where the rule holds (%s)' % (what, bad_rule[:3]))
    seen_nongrowing = False
    order_ok = True
    for g in j['groups']:
        if not g['growing']:
            seen_nongrowing = True
        elif seen_nongrowing:
            order_ok = False
    check(order_ok, '%s: growing groups come first' % what)
    sums_ok = all(len(g['count']) == n and len(g['memsize']) == n for g in j['groups'])
    check(sums_ok, '%s: count and memsize arrays, one value per dump' % what)
    tot_ok = all(sum(g['count'][k] for g in j['groups']) == d['total']['count'] and
                 sum(g['memsize'][k] for g in j['groups']) == d['total']['memsize']
                 for k, d in enumerate(j['dumps'])) if j['group_count'] == len(j['groups']) else True
    check(tot_ok, '%s: the groups of each dump add up to its total' % what)


def series_ours():
    """Our timeline workload: (dumps dir, dumps, expectations)."""
    data = workloads.ensure_set('tl_s1')
    truth = workloads.truth(data)
    G = truth['growing']
    per = [workloads.expected_types(data, truth, s) for s in truth['snapshots']]
    return data, {
        'type': G['type'], 'class': G['class'], 'site': G['site'], 'file': G['file'], 'line': G['line'],
        'count_deltas': G['count_deltas'], 'count_at_step': G['count_at_step'],
        'by_type': [{k: v[0] for k, v in p.items()} for p in per],
        'memsize_by_type': [{k: v[1] for k, v in p.items() if v[1]} for p in per],
        'other_change': truth['other_types_max_count_change'],
        # customers' e-mail addresses and the text of their comments
        'secrets': rb'"value":"([a-z]+\.[a-z]+\d+@mail\.example|(?:[a-z]+ ){5,}[a-z]+)"',
    }


def series_corpus():
    """gen_timeline.rb of the shared corpus: (dumps dir, expectations)."""
    data = os.path.join(WORK, 'tl_s1')
    shutil.rmtree(data, ignore_errors=True)
    r = subprocess.run(['ruby', os.path.join(CORPUS, 'gen_timeline.rb'), '--steps', '10',
                        '--scale', '1', '--out', data], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit('gen_timeline.rb failed')
    truth = json.load(open(os.path.join(data, 'truth.json')))
    G = truth['growing']
    return data, {
        'type': G['type'], 'class': G['class'], 'site': G['site'], 'file': G['file'], 'line': G['line'],
        'count_deltas': G['observed_count_deltas'], 'count_at_step': G['count_at_step'],
        'by_type': [s['by_type'] for s in truth['snapshots']],
        'memsize_by_type': [s['memsize_by_type'] for s in truth['snapshots']],
        'other_change': truth['other_types_max_count_change'],
        'secrets': rb'"value":"((?:u\d+@example\.org)|(?:User \d+ [0-9a-z]+))"',
    }


def reference_timeline(data, tb):
    """reference.py timeline (the corpus's independent checker) = heapscope's per-type series."""
    r = subprocess.run([sys.executable, os.path.join(CORPUS, 'reference.py'), 'timeline', data],
                       capture_output=True, text=True)
    check(r.returncode == 0, 'reference.py timeline runs')
    ref = json.loads(r.stdout)
    check(set(ref['per_type']) == set(tb), 'reference.py: same types (%d)' % len(tb))
    bad = [t for t, v in ref['per_type'].items()
           if t not in tb or v['counts'] != tb[t]['count'] or v['memsize'] != tb[t]['memsize']]
    check(not bad, 'reference.py: every per-type count and memsize series is equal' +
          (' -- %s' % bad if bad else ''))
    bad = [t for t, v in ref['per_type'].items()
           if t in tb and abs(v['slope_count'] - tb[t]['slope_per_step']) > 1e-3]
    check(not bad, 'reference.py: per-type count slopes are equal')


TRACER = '<allocation tracer>'


def tracer_checks(dumps, three):
    """Ruby's allocation tracer (the workloads trace allocations: one DATA
    object whose table grows with every traced allocation) is left out of
    every dump of timeline and diff --grew by default, and counted; the
    dump's own records (workloads.tracer_objects) are the expectation;
    --keep-tracer brings it back as the group <allocation tracer>."""
    tracer = [workloads.tracer_objects(d) for d in dumps]
    check(all(t[0] == 1 and t[1] > 0 for t in tracer),
          'tracer: every dump of the series holds the allocation tracer (%s bytes in the last)'
          % tracer[-1][1])
    for metric in ('memsize', 'count'):
        dflt = json.loads(run(['timeline', '--json', '--top', '0', '--keep-dumper', '--by', 'class',
                               '--metric', metric] + dumps).stdout)
        kept = tl_json(['--by', 'class', '--metric', metric] + dumps)
        check(all(d['excluded_tracer'] == {'count': t[0], 'memsize': t[1]}
                  and k['excluded_tracer'] == {'count': 0, 'memsize': 0}
                  and d['total'] == {'count': k['total']['count'] - t[0],
                                     'memsize': k['total']['memsize'] - t[1]}
                  for d, k, t in zip(dflt['dumps'], kept['dumps'], tracer)),
              "timeline --metric %s: each dump's total leaves out exactly the tracer's object "
              "and bytes, and says them (excluded_tracer); --keep-tracer keeps them" % metric)
        check(dflt['excluded_tracer'] == {'count': sum(t[0] for t in tracer),
                                          'memsize': sum(t[1] for t in tracer)}
              and kept['excluded_tracer'] == {'count': 0, 'memsize': 0},
              'timeline --metric %s: top-level excluded_tracer, all dumps together' % metric)
        kg = {g['key']: g for g in kept['groups']}
        dg = {g['key']: g for g in dflt['groups']}
        check(TRACER not in dg and kg.get(TRACER, {}).get('count') == [t[0] for t in tracer]
              and kg.get(TRACER, {}).get('memsize') == [t[1] for t in tracer]
              and {k: (g['count'], g['memsize']) for k, g in kg.items() if k != TRACER}
              == {k: (g['count'], g['memsize']) for k, g in dg.items()},
              'timeline --metric %s: no %s group by default; with --keep-tracer its series is the '
              "dump's (growing: %s), every other group the same" % (metric, TRACER, kg.get(TRACER, {}).get('growing')))
        check(schema_ok(dflt, 'timeline') and schema_ok(kept, 'timeline'),
              'schema: timeline --json with and without --keep-tracer')
    txt = run(['timeline', '--by', 'class'] + dumps).stdout
    check('left out: the allocation tracer (trace_object_allocations), 1 object' in txt
          and TRACER not in txt, 'timeline text: says the tracer was left out, shows no row of it')
    txt = run(['timeline', '--by', 'class', '--keep-tracer'] + dumps).stdout
    check('left out: the allocation tracer' not in txt and TRACER in txt,
          'timeline --keep-tracer text: a row of it, nothing said left out')
    t3 = [tracer[dumps.index(p)] for p in three]
    g = json.loads(run(['diff', '--grew', '--json', '--top', '0', '--by', 'class'] + three).stdout)
    gk = json.loads(run(['diff', '--grew', '--json', '--top', '0', '--by', 'class', '--keep-tracer']
                        + three).stdout)
    check(schema_ok(g, 'grew') and TRACER not in [x['key'] for x in g['groups']]
          and [x for x in gk['groups'] if x['key'] == TRACER][0]['memsize'] == [t[1] for t in t3]
          and g['excluded_tracer'] == {'count': 3, 'memsize': sum(t[1] for t in t3)}
          and all(d['total']['memsize'] + t[1] == k['total']['memsize']
                  for d, k, t in zip(g['dumps'], gk['dumps'], t3)),
          'diff --grew: the tracer left out of every dump and counted; --keep-tracer keeps it')


def main():
    source = 'ours'
    if sys.argv[1:2] == ['--source'] and len(sys.argv) == 3 and sys.argv[2] in ('ours', 'corpus'):
        source = sys.argv[2]
    elif sys.argv[1:]:
        raise SystemExit('usage: check_timeline.py [--source ours|corpus]')
    if source == 'corpus' and not os.path.exists(os.path.join(CORPUS, 'gen_timeline.rb')):
        print('SKIP: no corpus at %r (../shared/corpus, or -Dcorpus_dir): not checked: timeline, '
              'histogram and export on gen_timeline.rb\'s series against its truth.json and against '
              'reference.py timeline (the same checks run on our own workload: test timeline)' % CORPUS)
        sys.exit(77)
    global WORK
    if source == 'corpus':
        WORK += '-corpus'
    os.makedirs(WORK, exist_ok=True)
    data, E = series_corpus() if source == 'corpus' else series_ours()
    print('series: %s (%s)' % (data, source))
    dumps = sorted(glob.glob(os.path.join(data, 'step_*.json')))
    check(len(dumps) == 10, '10 dumps generated')
    shuffled = dumps[:]
    random.Random(7).shuffle(shuffled)

    # ---------------------------------------------------------------- by type
    jt = tl_json(['--by', 'type', '--metric', 'count'] + shuffled)
    check(jt is not None, 'timeline --by type --metric count runs')
    check(jt['order'] == 'name-time' and jt['order_source'] == 'sequence' and paths_of(jt) == dumps,
          'shuffled step_NN.json ordered by name sequence (order %s/%s)'
          % (jt['order'], jt['order_source']))
    first = jt['groups'][0]
    check(first['key'] == E['type'] and first['growing'],
          'by type: %s ranks first and is growing' % first['key'])
    others = [g for g in jt['groups'] if g['key'] != E['type']]
    check(all(not g['growing'] for g in others), 'by type: no other type is growing')
    check(all(flat(g['count']) for g in others),
          'by type: every other type is exactly flat (truth: other types change by at most %s)'
          % E['other_change'])
    tb = {g['key']: g for g in jt['groups']}
    truth_ok = all(tb.get(t, {'count': [0] * 10})['count'][k] == E['by_type'][k].get(t, 0)
                   for k in range(10) for t in set(tb) | set(E['by_type'][k]))
    check(truth_ok, 'by type: count series equal the truth\'s counts per type')
    invariants(jt, 'by type/count')

    if source == 'corpus':
        reference_timeline(data, tb)

    jm = tl_json(['--by', 'type'] + dumps)
    check(jm['metric'] == 'memsize' and jm['groups'][0]['key'] == E['type'] and jm['groups'][0]['growing'],
          'by type, memsize (default metric): %s first and growing' % jm['groups'][0]['key'])
    mem_ok = all(tm == {g['key']: g['memsize'][k] for g in jm['groups'] if g['memsize'][k]}
                 for k, tm in enumerate(E['memsize_by_type']))
    check(mem_ok, 'by type: memsize series equal the truth\'s memsize per type')
    invariants(jm, 'by type/memsize')
    hold = [g for g in jm['groups'] if g['key'] == 'HASH'][0]
    print('     (HASH memsize, which grows in steps as the holder resizes: slope %.0f/step, R2 %.2f, '
          'growing %s)' % (hold['slope_per_step'], hold['r2'], hold['growing']))

    # --------------------------------------------------------------- by class
    for metric in ('count', 'memsize'):
        jc = tl_json(['--by', 'class', '--metric', metric] + dumps)
        check(jc['groups'][0]['key'] == E['class'] and jc['groups'][0]['growing'],
              'by class/%s: %s ranks first and is growing' % (metric, jc['groups'][0]['key']))
        invariants(jc, 'by class/%s' % metric)

    # ----------------------------------------------------------- by file:line
    for metric in ('count', 'memsize'):
        jf = tl_json(['--by', 'file:line', '--metric', metric] + dumps)
        check(jf['groups'][0]['key'] == E['site'] and jf['groups'][0]['growing'],
              'by file:line/%s: %s ranks first and is growing' % (metric, jf['groups'][0]['key']))
        check(sum(g['growing'] for g in jf['groups']) == 1,
              'by file:line/%s: it is the only growing site (of %d)' % (metric, jf['group_count']))
        invariants(jf, 'by file:line/%s' % metric)
        if metric == 'count':
            ys = jf['groups'][0]['count']
            deltas = [b - a for a, b in zip(ys, ys[1:])]
            check(deltas == E['count_deltas'],
                  'by file:line: the site grows by %s per step, as the truth' % sorted(set(deltas)))
    for key in ('file:line:class', 'file', 'gem', 'method', 'generation'):
        j = tl_json(['--by', key, '--metric', 'count'] + dumps)
        check(j is not None and j['group_count'] > 0, 'by %s: runs (%d groups)' % (key, j['group_count']))
        invariants(j, 'by %s/count' % key)
    jflc = tl_json(['--by', 'file:line:class', '--metric', 'count'] + dumps)
    check(jflc['groups'][0]['key'] == '%s:%s' % (E['site'], E['class']),
          'by file:line:class: %s first' % jflc['groups'][0]['key'])

    # ----------------------------------------------------- threads, CSV, text
    j1 = run(['timeline', '--json', '--top', '0', '--threads', '1', '--by', 'class'] + dumps).stdout
    j3 = run(['timeline', '--json', '--top', '0', '--threads', '3', '--by', 'class'] + dumps).stdout
    check(j1 == j3, '--threads 1 and --threads 3 give identical JSON')
    csvout = run(['timeline', '--csv', '--top', '0', '--keep-dumper', '--keep-tracer', '--by',
                  'type', '--metric', 'count'] + dumps).stdout
    rows = list(csv.DictReader(io.StringIO(csvout)))
    check(list(rows[0].keys()) == ['rank', 'key', 'step', 'dump', 'time', 'count', 'memsize', 'growing'],
          'CSV header')
    check(len(rows) == len(jt['groups']) * 10, 'CSV: one row per group and dump (%d)' % len(rows))
    csv_ok = all(int(r['count']) == jt['groups'][int(r['rank']) - 1]['count'][int(r['step']) - 1]
                 and int(r['memsize']) == jt['groups'][int(r['rank']) - 1]['memsize'][int(r['step']) - 1]
                 and r['key'] == jt['groups'][int(r['rank']) - 1]['key']
                 and r['dump'] == dumps[int(r['step']) - 1]
                 and (r['growing'] == 'true') == jt['groups'][int(r['rank']) - 1]['growing']
                 for r in rows)
    check(csv_ok, 'CSV values equal the JSON')
    txt = run(['timeline', '--by', 'type'] + dumps)
    lines = txt.stdout.splitlines()
    hdr = [i for i, l in enumerate(lines) if l.strip().startswith('key')]
    check(txt.returncode == 0 and hdr and E['type'] in lines[hdr[0] + 1] and 'growing' in lines[hdr[0] + 1],
          'text: the first row is %s, marked growing' % E['type'])
    check('order name-time' in txt.stdout, 'text: says which order was used')
    top3 = tl_json(['--by', 'class'] + dumps)  # --top 0 given by tl_json; now explicit top
    t3 = json.loads(run(['timeline', '--json', '--top', '3', '--keep-dumper', '--keep-tracer',
                         '--by', 'class'] + dumps).stdout)
    check(len(t3['groups']) == 3 and t3['group_count'] == top3['group_count']
          and t3['groups'] == top3['groups'][:3], '--top 3: the first three groups, group_count total')

    # gzip input gives the same series
    gz = []
    for d in dumps[:3]:
        p = os.path.join(WORK, os.path.basename(d) + '.gz')
        subprocess.run(['gzip', '-6', '-n', '-c', d], stdout=open(p, 'wb'), check=True)
        gz.append(p)
    jg = tl_json(['--by', 'type', '--metric', 'count'] + gz)
    check(paths_of(jg) == gz and all(g['count'] == tb[g['key']]['count'][:3] for g in jg['groups']),
          'gzip dumps (step_NN.json.gz): same order and series as plain')

    # ------------------------------------------------------------- ordering
    od = os.path.join(WORK, 'order')
    shutil.rmtree(od, ignore_errors=True)
    os.makedirs(od)
    four = dumps[:4]

    def names(fmt, values):
        out = []
        for src, v in zip(four, values):
            p = os.path.join(od, fmt % v)
            os.symlink(src, p)
            out.append(p)
        return out

    cases = [
        ('epoch', 'ruby-heap-%d.dump', [1700000000 + 3600 * k for k in range(4)], 'name-time', 'epoch', 1.0),
        ('epoch-ms', 'hs_%d.json', [1700000000000 + 1800000 * k for k in range(4)], 'name-time', 'epoch-ms', 2.0),
        ('datetime', 'heap-2024-05-01T%02d:00:00.json', [10 + 2 * k for k in range(4)], 'name-time',
         'datetime', 0.5),
        ('compact datetime', 'heap-20240501-%02d3000.json.gz', [1 + k for k in range(4)], 'name-time',
         'datetime', 1.0),
        ('sequence', 'heapscope.4242.%d.json', [3, 10, 200, 1000], 'name-time', 'sequence', None),
        ('epoch, equal, then sequence', 'heap-1700000000-%d.json', [2, 5, 9, 11], 'name-time', 'sequence', None),
    ]
    for what, fmt, vals, order, source, per_hour_factor in cases:
        paths = names(fmt, vals)
        j = tl_json(['--by', 'type', '--metric', 'count'] + paths[::-1])
        g = j['groups'][0]
        ok = (j['order'] == order and j['order_source'] == source and paths_of(j) == paths
              and g['count'] == tb[g['key']]['count'][:4])
        if per_hour_factor is None:
            ok = ok and g['slope_per_hour'] is None and times_of(j) == [None] * 4
        else:
            ok = ok and abs(g['slope_per_hour'] - g['slope_per_step'] * per_hour_factor) < 1e-2 * abs(g['slope_per_step'])
        check(ok, 'order: %s names -> %s/%s%s' % (what, j['order'], j['order_source'],
                                                   '' if per_hour_factor is None else
                                                   ', slope/hour %.1f' % g['slope_per_hour']))
    # mtime: names without numbers, copied with distinct modification times
    mt = []
    for k, (src, name) in enumerate(zip(four, ['delta.json', 'alpha.json', 'charlie.json', 'bravo.json'])):
        p = os.path.join(od, name)
        shutil.copyfile(src, p)
        os.utime(p, ns=(1717000000 * 10**9 + k * 600 * 10**9,) * 2)
        mt.append(p)
    j = tl_json(['--by', 'type', '--metric', 'count'] + sorted(mt))
    check(j['order'] == 'mtime' and paths_of(j) == mt and None not in times_of(j)
          and abs(j['groups'][0]['slope_per_hour'] - 6 * j['groups'][0]['slope_per_step']) < 1e-2 * j['groups'][0]['slope_per_step'],
          'order: names without numbers -> mtime (10 minutes apart: slope/hour = 6 x slope/step)')
    for p in mt:
        os.utime(p, ns=(1717000000 * 10**9,) * 2)
    given = [mt[2], mt[0], mt[3], mt[1]]
    j = tl_json(['--by', 'type', '--metric', 'count'] + given)
    check(j['order'] == 'given' and paths_of(j) == given and times_of(j) == [None] * 4,
          'order: equal mtimes -> given (command-line order)')
    j = tl_json(['--order', 'given'] + four[::-1])
    check(j['order'] == 'given' and paths_of(j) == four[::-1], '--order given keeps the command line')
    r = run(['timeline', '--order', 'name'] + mt, rc=2)
    check(r.returncode == 2 and 'order' in r.stderr, '--order name without numbers in names: usage error')
    j = tl_json(['--order', 'mtime'] + four)
    check(j is not None and j['order'] in ('mtime', 'given'), '--order mtime accepted (%s)' % (j or {}).get('order'))
    j = tl_json([dumps[0]])
    check(j['groups'][0]['slope_per_step'] is None and not any(g['growing'] for g in j['groups']),
          'one dump: slope null, nothing growing')
    j = tl_json(dumps[:2])
    check(not any(g['growing'] for g in j['groups']), 'two dumps: nothing growing (3 needed)')

    # ------------------------------------------------------------------ SVG
    have_rsvg = shutil.which('rsvg-convert') is not None
    check(have_rsvg, 'rsvg-convert is installed (Debian package librsvg2-bin)')
    svgs = []
    for name, args in [('type_memsize', ['--by', 'type'] + dumps),
                       ('site_count', ['--by', 'file:line', '--metric', 'count'] + dumps),
                       ('class_epoch', ['--by', 'class'] + names('t-%d.json', [1700000000 + 3600 * k for k in range(4)])),
                       ('one_dump', [dumps[0]])]:
        p = os.path.join(WORK, 'timeline_%s.svg' % name)
        r = run(['timeline', '--svg', p] + args)
        svgs.append((p, r.returncode == 0))
    hp = os.path.join(WORK, 'histogram_class.svg')
    svgs.append((hp, run(['histogram', '--by', 'class', '--svg', hp, dumps[-1]]).returncode == 0))
    hp2 = os.path.join(WORK, 'histogram_type.svg')
    svgs.append((hp2, run(['histogram', '--svg', hp2, '--top', '0', dumps[-1]]).returncode == 0))

    # hostile text: '<', '&', quotes and invalid UTF-8 in class and file names
    wd = os.path.join(WORK, 'weird')
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(wd)
    weird = []
    for k in range(4):
        ls = [b'{"type":"ROOT", "root":"vm", "references":["0x7f0000000001"]}',
              b'{"address":"0x7f0000000001", "type":"CLASS", "class":"0x7f0000000009", '
              b'"name":"Weird<&>\\"\'\xe2\x80\xa6\\u0001", "references":[], "memsize":100}']
        for i in range(10 + 40 * k):
            ls.append(b'{"address":"0x7f00000%05x", "type":"STRING", "class":"0x7f0000000001", '
                      b'"bytesize":9, "value":"s3cr3t-%03d", "file":"<x&y>\xff\xfe]]>.rb", "line":7, '
                      b'"method":"m", "generation":1, "memsize":160}' % (0x1000 + i, i))
        p = os.path.join(wd, 'weird_%d.json' % (k + 1))
        open(p, 'wb').write(b'\n'.join(ls) + b'\n')
        weird.append(p)
    for key in ('class', 'file:line'):
        p = os.path.join(WORK, 'timeline_weird_%s.svg' % key.replace(':', '_'))
        r = run(['timeline', '--by', key, '--svg', p] + weird)
        svgs.append((p, r.returncode == 0))
    jw = tl_json(['--by', 'class', '--metric', 'count'] + weird)
    check(jw['groups'][0]['growing'] and jw['groups'][0]['key'].startswith('Weird<&>'),
          'hostile names: the growing class is found')
    for p, ok in svgs:
        try:
            root = ET.parse(p).getroot()
            xml_ok = root.tag == '{http://www.w3.org/2000/svg}svg'
        except (ET.ParseError, OSError) as e:
            print('     %s: %s' % (p, e))
            xml_ok = False
        png = p[:-4] + '.png'
        rendered = False
        if have_rsvg and xml_ok:
            rr = subprocess.run(['rsvg-convert', '-o', png, p], capture_output=True, text=True)
            rendered = rr.returncode == 0 and os.path.getsize(png) > 5000
            if not rendered:
                print('     rsvg-convert: %s' % rr.stderr)
        check(ok and xml_ok and rendered, 'SVG %s: written, valid XML, rendered to PNG (%s)'
              % (os.path.basename(p), '%d bytes' % os.path.getsize(png) if rendered else 'no'))
    svg_text = open(os.path.join(WORK, 'timeline_type_memsize.svg'), encoding='utf-8').read()
    check('GROWING' in svg_text and '>%s<' % E['type'] in svg_text and '#d62728' in svg_text,
          'SVG: legend names the growing group, drawn in colour')
    check('<script' not in svg_text and 'href' not in svg_text, 'SVG: self-contained (no scripts, no links)')

    # ------------------------------------------------------------ histogram
    # histogram --json is the tally document (docs/JSON.md)
    h = json.loads(run(['histogram', '--json', '--top', '0', '--by', 'class', dumps[-1]]).stdout)
    t = json.loads(run(['tally', '--json', '--top', '0', '--sort', 'memsize', '--by', 'class', dumps[-1]]).stdout)
    check(h['kind'] == 'tally' and [(r['key'], r['count'], r['memsize']) for r in h['groups']]
          == [(r['key'], r['count'], r['memsize']) for r in t['groups']],
          'histogram --by class = tally --by class --sort memsize (%d rows)' % len(h['groups']))
    # the truth counts every object: the dumper's and Ruby's allocation
    # tracer (the timeline workload traces allocations) too
    hk = json.loads(run(['histogram', '--json', '--top', '0', '--keep-dumper', '--keep-tracer',
                         '--by', 'class', dumps[-1]]).stdout)
    check(hk['total']['count'] == sum(E['by_type'][-1].values())
          and hk['total']['memsize'] == sum(E['memsize_by_type'][-1].values())
          and hk['excluded_dumper_objects'] == 0
          and hk['dumps'][0]['objects'] == hk['total']['count'],
          'histogram --keep-dumper --keep-tracer totals = truth (%d objects)' % hk['total']['count'])
    check(h['excluded_dumper_objects'] > 0
          and h['total']['count'] + h['excluded_dumper_objects'] + h['excluded_tracer']['count']
          == hk['total']['count'],
          'histogram leaves the dumper\'s %d objects out of its totals' % h['excluded_dumper_objects'])
    h = json.loads(run(['histogram', '--json', '--sort', 'count', '--top', '5', dumps[-1]]).stdout)
    counts = [r['count'] for r in h['groups']]
    check(len(counts) == 5 and counts == sorted(counts, reverse=True) and h['groups'][0]['key'] == 'STRING',
          'histogram --sort count --top 5: largest count first')
    ht = run(['histogram', dumps[-1]])
    check(ht.returncode == 0 and '#' in ht.stdout and 'DATA' in ht.stdout, 'histogram: text with bars')

    # --------------------------------------------------------------- export
    secrets = set()
    for line in open(dumps[0], 'rb'):
        m = re.search(E['secrets'], line)
        if m:
            secrets.add(m.group(1))
    check(len(secrets) > 100, 'dump holds %d identifiable string values (e-mail addresses, names, user text)' % len(secrets))
    summ = [json.loads(run(['summary', '--json', d]).stdout) for d in dumps[:3]]
    for fmt in ('csv', 'jsonl'):
        out = os.path.join(WORK, 'export_' + fmt)
        shutil.rmtree(out, ignore_errors=True)
        r = run(['export', '--format', fmt, '--out', out] + dumps[:3][::-1])
        check(r.returncode == 0, 'export %s: exit 0' % fmt)
        files = sorted(os.listdir(out))
        check(files == sorted(['dumps.' + fmt, 'objects.' + fmt, 'refs.' + fmt, 'roots.' + fmt,
                               'schema.sql', 'schema.duckdb.sql']), 'export %s: files %s' % (fmt, files))

        def table(name):
            raw = open(os.path.join(out, name + '.' + fmt), 'rb').read()
            txt = raw.decode('utf-8')  # raises if not UTF-8
            if fmt == 'csv':
                return raw, list(csv.DictReader(io.StringIO(txt)))
            return raw, [json.loads(l) for l in txt.splitlines()]
        _, dt = table('dumps')
        check([d['path'] for d in dt] == dumps[:3] and [int(d['dump_id']) for d in dt] == [1, 2, 3],
              'export %s: dumps in time order with ids 1..3' % fmt)
        oraw, ot = table('objects')
        rraw, rt = table('refs')
        per = [sum(1 for o in ot if int(o['dump_id']) == k + 1) for k in range(3)]
        check(per == [s['total']['count'] for s in summ], 'export %s: objects per dump = summary %s' % (fmt, per))
        per = [sum(1 for e in rt if int(e['dump_id']) == k + 1) for k in range(3)]
        check(per == [s['references'] for s in summ], 'export %s: refs per dump = summary %s' % (fmt, per))
        mem = [sum(int(o['memsize']) for o in ot if int(o['dump_id']) == k + 1) for k in range(3)]
        check(mem == [s['total']['memsize'] for s in summ], 'export %s: memsize per dump = summary' % fmt)
        cols = list(ot[0].keys())
        check(cols == ['dump_id', 'address', 'type', 'class', 'class_address', 'memsize', 'size',
                       'file', 'line', 'method', 'generation', 'flags', 'detail'],
              'export %s: objects columns' % fmt)
        leaked = [s for s in secrets if s in oraw or s in rraw]
        check(not leaked, 'export %s: no string value in any table (%d checked)' % (fmt, len(secrets)))
        check(not any('value' in k for k in cols), 'export %s: no value column' % fmt)
        site_rows = [o for o in ot if o['file'] == E['file'] and str(o['line']) == str(E['line'])
                     and o['type'] == 'STRING']
        check(len(site_rows) == sum(E['count_at_step'][:3]),
              'export %s: %d leak-site Strings, as the truth' % (fmt, len(site_rows)))
    out = os.path.join(WORK, 'export_first_id')
    shutil.rmtree(out, ignore_errors=True)
    r = run(['export', '--format', 'csv', '--first-id', '101', '--out', out] + dumps[3:5])
    ids = [row['dump_id'] for row in csv.DictReader(open(os.path.join(out, 'dumps.csv')))]
    oids = {row['dump_id'] for row in csv.DictReader(open(os.path.join(out, 'objects.csv')))}
    check(r.returncode == 0 and ids == ['101', '102'] and oids == {'101', '102'},
          'export --first-id 101: dump ids 101, 102 in every table')
    # hostile names exported as valid UTF-8, still no values
    out = os.path.join(WORK, 'export_weird')
    shutil.rmtree(out, ignore_errors=True)
    r = run(['export', '--format', 'csv', '--out', out] + weird)
    raw = open(os.path.join(out, 'objects.csv'), 'rb').read()
    try:
        txt = raw.decode('utf-8')
        utf8 = True
    except UnicodeDecodeError:
        utf8 = False
    check(r.returncode == 0 and utf8 and '\ufffd' in txt and b's3cr3t' not in raw,
          'export: invalid UTF-8 in names replaced by U+FFFD; values absent')

    # ------------------------------------------------------- JSON schemas
    one = tl_json(['--by', 'type', dumps[0]])
    for what, doc in (('timeline --by type --metric count', jt), ('timeline --by type', jm),
                      ('timeline --by file:line:class', jflc), ('timeline --top 3', t3),
                      ('timeline of one dump', one), ('timeline, hostile names', jw),
                      ('timeline, epoch names', tl_json(['--by', 'class'] + names(
                          'e-%d.json', [1700000000 + 60 * k for k in range(4)])))):
        check(schema_ok(doc, 'timeline'), 'schema: %s --json is valid (docs/schema/timeline.json)' % what)
    for what, args in (('histogram --by class', ['--by', 'class', '--top', '0']),
                       ('histogram', []), ('histogram --keep-dumper', ['--keep-dumper'])):
        doc = json.loads(run(['histogram', '--json'] + args + [dumps[-1]]).stdout)
        check(schema_ok(doc, 'tally'), 'schema: %s --json is valid (docs/schema/tally.json)' % what)
    for fmt in ('csv', 'jsonl'):
        out = os.path.join(WORK, 'export_json_' + fmt)
        shutil.rmtree(out, ignore_errors=True)
        r = run(['export', '--json', '--format', fmt, '--out', out] + dumps[:2])
        doc = json.loads(r.stdout) if r.returncode == 0 else {}
        check(schema_ok(doc, 'export') and [d['path'] for d in doc['dumps']] == dumps[:2]
              and [d['dump_id'] for d in doc['dumps']] == [1, 2]
              and doc['objects'] == sum(d['objects'] for d in doc['dumps'])
              and sorted(doc['files']) == sorted(os.listdir(out)) and r.stderr == '',
              'schema: export --json --format %s is valid and names the files written' % fmt)
    out = os.path.join(WORK, 'export_jsonl')
    bad = []
    for table in ('dumps', 'objects', 'refs', 'roots'):
        rows = [json.loads(l) for l in open(os.path.join(out, table + '.jsonl'), encoding='utf-8')]
        # every row of the small tables, every 7th of the large ones
        step = 1 if len(rows) < 3000 else 7
        bad += [(table, k) for k in range(0, len(rows), step)
                if not schema_ok(rows[k], 'export', table)][:3]
    check(not bad, 'schema: export --format jsonl rows are valid (docs/schema/export.json $defs)')

    # ------------------------------------------------------------ diff --grew
    three = [dumps[0], dumps[4], dumps[9]]
    r = run(['diff', '--grew', '--metric', 'count', '--keep-dumper', '--keep-tracer', '--json', '--top', '0',
             '--by', 'file:line'] + three)
    gj = json.loads(r.stdout) if r.returncode == 0 else {}
    check(r.returncode == 0 and schema_ok(gj, 'grew'), 'schema: diff --grew --json is valid (kind grew)')
    ref = tl_json(['--by', 'file:line', '--order', 'given', '--metric', 'count'] + three)
    ref = {g['key']: g for g in ref['groups']}
    check(all(g['count'] == ref[g['key']]['count'] and g['memsize'] == ref[g['key']]['memsize']
              and g['change'] == g['count'][-1] - g['count'][0]
              and g['deltas'] == [b - a for a, b in zip(g['count'], g['count'][1:])]
              for g in gj['groups']) and len(gj['groups']) == len(ref) and 'counts' not in gj['groups'][0],
          'diff --grew: per-dump "count" and "memsize" = timeline --order given; change and deltas')
    ch = [g['change'] for g in gj['groups']]
    check(ch == sorted(ch, reverse=True) and gj['groups'][0]['key'] == E['site'],
          'diff --grew: largest growth first (%s, +%d)' % (gj['groups'][0]['key'], ch[0]))
    rj = json.loads(run(['diff', '--grew', '--metric', 'count', '--keep-dumper', '--keep-tracer', '--json', '--top',
                         '0', '--by', 'file:line'] + three[::-1]).stdout)
    back = {g['key']: g for g in rj['groups']}[E['site']]
    check(paths_of(rj) == three[::-1] and back['count'] == ref[E['site']]['count'][::-1]
          and back['change'] < 0 and rj['groups'][0]['key'] != E['site'],
          'diff --grew keeps the order given (reversed: the site shrinks by %d)' % -back['change'])

    tracer_checks(dumps, three)

    # -------------------------------------- shared options: --no-index -v --threads
    base = run(['timeline', '--json', '--by', 'class'] + dumps[:3]).stdout
    r = run(['timeline', '--json', '--by', 'class', '--no-index', '-v', '--threads', '2'] + dumps[:3])
    check(r.returncode == 0 and r.stdout == base, 'timeline accepts --no-index, -v and --threads (same JSON)')
    base = run(['histogram', '--json', dumps[0]]).stdout
    r = run(['histogram', '--json', '--no-index', '--verbose', '--threads', '1', dumps[0]])
    check(r.returncode == 0 and r.stdout == base, 'histogram accepts --no-index, -v and --threads (same JSON)')
    # the objects and references tables are written on two threads by
    # default and on one with --threads 1: the same bytes
    outs = [os.path.join(WORK, 'export_opts%d' % k) for k in range(2)]
    nobj = run(['summary', '--json', dumps[0]]).stdout
    check(json.loads(nobj)['total']['count'] >= 1 << 12,
          'the dump has the 4096 objects that make export use two threads')
    for fmt in ('csv', 'jsonl'):
        rcs = []
        for k, extra in enumerate(([], ['--no-index', '-v', '--threads', '1'])):
            shutil.rmtree(outs[k], ignore_errors=True)
            rcs.append(run(['export', '--format', fmt] + extra + ['--out', outs[k], dumps[0]],
                           rc=None).returncode)
        same = all(open(os.path.join(outs[0], t + '.' + fmt), 'rb').read() ==
                   open(os.path.join(outs[1], t + '.' + fmt), 'rb').read()
                   for t in ('dumps', 'objects', 'refs', 'roots'))
        check(rcs == [0, 0] and same,
              'export --format %s accepts --no-index, -v and --threads (the same tables)' % fmt)
    # a table that cannot be written (the file size limit, 64 KiB, hit by
    # both big tables at once when written on two threads): exit 1, the
    # file and the cause named
    def fsize_limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, 1 << 16))
    for fmt, extra in (('csv', []), ('csv', ['--threads', '1']), ('jsonl', [])):
        shutil.rmtree(outs[1], ignore_errors=True)
        r = subprocess.run([HEAPSCOPE, 'export', '--format', fmt] + extra + ['--out', outs[1], dumps[0]],
                           capture_output=True, text=True, preexec_fn=fsize_limit)
        want = 'heapscope: cannot write %s/objects.%s: %s' % (outs[1], fmt, os.strerror(errno.EFBIG))
        check(r.returncode == 1 and r.stderr.strip() == want,
              'export %s %s past the file size limit: exit 1, %r (%d, %r)'
              % (fmt, ' '.join(extra), want, r.returncode, r.stderr.strip()))
    for cmd in (['histogram', '--threads', '65', dumps[0]],
                ['export', '--threads', '0', '--format', 'csv', '--out', outs[1], dumps[0]]):
        r = run(cmd, rc=None)
        check(r.returncode == 2 and '--threads' in r.stderr, 'usage error: %s --threads %s' % (cmd[0], cmd[2]))

    # ------------------------------------------ long keys: cut in the middle
    ld = os.path.join(WORK, 'longkeys')
    shutil.rmtree(ld, ignore_errors=True)
    os.makedirs(ld)
    deep = '/srv/' + '/'.join('dir%02d' % k for k in range(30)) + '/leaky_file.rb'
    longs = []
    for k in range(3):
        ls = [b'{"type":"ROOT", "root":"vm", "references":["0x7f0000000001"]}',
              b'{"address":"0x7f0000000001", "type":"CLASS", "name":"String", "references":[], "memsize":100}']
        for i in range(100 + 200 * k):
            ls.append(b'{"address":"0x7f00000%05x", "type":"STRING", "class":"0x7f0000000001", '
                      b'"file":"%s", "line":42, "generation":1, "memsize":40}' % (0x1000 + i, deep.encode()))
        p = os.path.join(ld, 'long_%d.json' % (k + 1))
        open(p, 'wb').write(b'\n'.join(ls) + b'\n')
        longs.append(p)
    key = deep + ':42:String'
    for what, args in (('timeline', ['timeline', '--by', 'file:line:class'] + longs),
                       ('histogram', ['histogram', '--by', 'file:line:class', longs[-1]]),
                       ('diff --grew', ['diff', '--grew'] + longs)):
        r = run(args)
        rows = [l for l in r.stdout.splitlines() if 'leaky_file.rb:42:String' in l]
        check(r.returncode == 0 and len(rows) == 1 and key not in rows[0] and '/srv/' in rows[0]
              and ('...' in rows[0] or '\u2026' in rows[0]) and len(rows[0]) <= 100,
              '%s: a %d-character key is cut in the middle, keeping its end, within 100 columns (%r)'
              % (what, len(key), rows[0] if rows else None))

    # ------------------------------- a steady small leak: one rule, one default
    # 18, 36, 54 Strings of 40 bytes (a rise of 36 objects, 1,440 bytes: under
    # the 4 KB floor) and a HASH going up and down: the leak is growing in the
    # default (memsize) view, in the count view and in the report; the noise is
    # not; timeline, diff --grew and report share the default metric
    sd = os.path.join(WORK, 'smallleak')
    shutil.rmtree(sd, ignore_errors=True)
    os.makedirs(sd)
    small = []
    for k, (ns, nh) in enumerate(((18, 40), (36, 10), (54, 50))):
        ls = [b'{"type":"ROOT", "root":"vm", "references":["0x7f0000000001"]}']
        a = 0x7f0000001000
        for i in range(ns):
            ls.append(b'{"address":"0x%x", "type":"STRING", "memsize":40}' % a)
            a += 0x28
        for i in range(nh):
            ls.append(b'{"address":"0x%x", "type":"HASH", "memsize":200}' % a)
            a += 0x28
        p = os.path.join(sd, 'small_%d.json' % (k + 1))
        open(p, 'wb').write(b'\n'.join(ls) + b'\n')
        small.append(p)
    for metric in ([], ['--metric', 'memsize'], ['--metric', 'count']):
        j = tl_json(['--by', 'type'] + metric + small) or {'groups': [], 'metric': None}
        grow = {g['key']: g['growing'] for g in j['groups']}
        check(grow.get('STRING') is True and grow.get('HASH') is False
              and j['metric'] == (metric[1] if metric else 'memsize'),
              'timeline %s: 18 -> 36 -> 54 objects is growing, the noisy HASH is not (%s)'
              % (' '.join(metric) or '(default)', grow))
    gj = json.loads(run(['diff', '--grew', '--json', '--by', 'type'] + small).stdout)
    gs = {g['key']: g['change'] for g in gj['groups']}
    check(gj['metric'] == 'memsize' and gs.get('STRING') == 36 * 40 and gs.get('HASH') == 10 * 200,
          'diff --grew: the same default metric as timeline (memsize): STRING +1440 B')
    gc = json.loads(run(['diff', '--grew', '--metric', 'count', '--json', '--by', 'type'] + small).stdout)
    check(gc['metric'] == 'count' and gc['groups'][0]['key'] == 'STRING' and gc['groups'][0]['change'] == 36,
          'diff --grew --metric count: STRING +36 objects')
    r = run(['diff', '--metric', 'count'] + small[:2], rc=2)
    check(r.returncode == 2 and '--grew' in r.stderr, 'diff --metric without --grew: usage error')
    txt = run(['timeline', '--by', 'type'] + small).stdout
    row = [l for l in txt.splitlines() if 'STRING' in l]
    check(row and 'growing' in row[0], 'timeline text marks the small leak growing (%r)' % row)

    # --------------------------------------------------------------- errors
    for cmd in (['timeline'], ['timeline', '--by', 'nope', dumps[0]], ['timeline', '--metric', 'bytes', dumps[0]],
                ['timeline', '--json', '--csv', dumps[0]], ['timeline', '--threads', '0', dumps[0]],
                ['timeline', '--bogus', dumps[0]], ['timeline', '--top'],
                ['histogram'], ['histogram', dumps[0], dumps[1]], ['histogram', '--sort', 'size', dumps[0]],
                ['export', '--out', WORK + '/x', dumps[0]], ['export', '--format', 'xml', '--out', WORK + '/x', dumps[0]],
                ['export', '--format', 'csv', dumps[0]]):
        r = run(cmd, rc=None)
        check(r.returncode == 2 and 'usage: heapscope' in r.stderr, 'usage error, exit 2: %s' % ' '.join(
            os.path.basename(c) for c in cmd[:4]))
    for cmd in ('timeline', 'histogram', 'export'):
        r = run([cmd, '--help'], rc=None)
        check(r.returncode == 0 and r.stdout.startswith('usage: heapscope ' + cmd), '%s --help: exit 0' % cmd)
    missing = os.path.join(WORK, 'no-such-dump.json')
    notdump = os.path.join(WORK, 'not-a-dump.txt')
    open(notdump, 'w').write('hello\nworld\n')
    for cmd in (['timeline', dumps[0], missing], ['timeline', notdump, dumps[1], dumps[2]],
                ['histogram', missing], ['export', '--format', 'csv', '--out', WORK + '/x', missing]):
        r = run(cmd, rc=None)
        bad = missing if missing in cmd else notdump
        check(r.returncode == 1 and bad in r.stderr and r.stdout == '',
              'bad input, exit 1, names the file: %s %s' % (cmd[0], os.path.basename(bad)))

    print('%d passed, %d failed' % (checklib.passed, len(failures)))
    for f in failures:
        print('  failed: ' + f)
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
