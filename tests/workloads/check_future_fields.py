#!/usr/bin/env python3
"""A dump of a future Ruby: fields and types no Ruby writes today.

Takes heap_3.json of our workload (set leak_s1) and writes a copy in which
records carry invented keys (a number, a nested object, an escaped key
name), invented GC flags (true and non-true values) and invented object
types, plus an invented ROOT category and imemo_type (open vocabularies,
which are not "unknown").  Then, against counts made here while writing
the copy:

  * the copy loads whole: every object, no skipped line;
  * summary lists each unknown field by kind and name with its count
    (keys and flags per record, types per object), in JSON and on the
    "fields this version does not know" line; the totals are the
    unknown_keys / unknown_types statistics;
  * nothing else changes: per type the same objects (the invented types'
    objects under their own names), the same classes, references, roots;
  * the same list from 1, 2 and 8 parser threads, from a saved index, and
    a streamed tally (--stream) sees the same objects.

Env: HEAPSCOPE, HEAPSCOPE_WORK.
"""
import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402

HEAPSCOPE = os.environ['HEAPSCOPE']
check = workloads.Checks()


def hs(*args):
    r = subprocess.run([HEAPSCOPE] + list(args) + ['--no-progress'], capture_output=True)
    if r.returncode != 0:
        raise SystemExit('heapscope %s failed (exit %d): %s' % (' '.join(args), r.returncode, r.stderr))
    return r.stdout.decode('utf-8', 'surrogateescape')


def future_copy(src, dst):
    """Write the invented fields into a copy of src; return what was put in."""
    want = collections.Counter()          # (kind, name) -> count
    retyped = collections.Counter()
    n = 0
    with open(src, encoding='utf-8', errors='surrogateescape') as fin, \
            open(dst, 'w', encoding='utf-8', errors='surrogateescape') as fout:
        for line in fin:
            r = json.loads(line)
            t = r.get('type')
            if t == 'ROOT' and r['root'] == 'global_tbl':
                fout.write(line)
                # a category no Ruby has: an open vocabulary, not unknown
                fout.write(json.dumps({'type': 'ROOT', 'root': 'ractor_local',
                                       'references': r['references'][:1]}) + '\n')
                continue
            if t in ('ROOT', 'SHAPE') or 'address' not in r:
                fout.write(line)
                continue
            n += 1
            out = {}
            for k, v in r.items():
                if k == 'memsize' and t == 'STRING':
                    out['utf8_cache'] = n % 7
                    want[('key', 'utf8_cache')] += 1
                if k == 'flags' and n % 10 == 0:
                    v = dict(v)
                    v['pinned_forever'] = True
                    v['weight'] = 1.5
                    want[('flag', 'pinned_forever')] += 1
                    want[('flag', 'weight')] += 1
                out[k] = v
            if n % 50 == 0:
                out['shape_info'] = {'id': n, 'edges': [1, 2, {'deep': None}]}
                want[('key', 'shape_info')] += 1
            text = json.dumps(out, ensure_ascii=False)
            if n % 97 == 0:
                # an escaped key name: "x\u0041" is "xA"
                text = text[:-1] + ', "x\\u0041": [true, false, null]}'
                want[('key', 'xA')] += 1
            if t == 'IMEMO' and n % 5 == 0:
                text = text.replace('"imemo_type": "%s"' % r['imemo_type'], '"imemo_type": "warp"')
            if t == 'DATA' and retyped['FIBER'] < 5:
                text = text.replace('"type": "DATA"', '"type": "FIBER"', 1)
                retyped['FIBER'] += 1
            elif t == 'STRUCT' and retyped['SLAB'] < 3:
                text = text.replace('"type": "STRUCT"', '"type": "SLAB"', 1)
                retyped['SLAB'] += 1
            fout.write(text + '\n')
    for k, c in retyped.items():
        want[('type', k)] = c
    return want, retyped


def unknown_of(summary):
    return collections.Counter({(u['kind'], u['name']): u['count'] for u in summary['unknown']})


def main():
    d = workloads.ensure_set('leak_s1')
    src = os.path.join(d, 'heap_3.json')
    work = os.path.join(os.environ.get('HEAPSCOPE_WORK', '/tmp'), 'future')
    os.makedirs(work, exist_ok=True)
    dst = os.path.join(work, 'future.json')
    for p in (dst, dst + '.hsx'):
        if os.path.exists(p):
            os.unlink(p)
    want, retyped = future_copy(src, dst)
    print('invented: %s' % dict(want))
    a = json.loads(hs('summary', '--json', '--no-index', src))
    b = json.loads(hs('summary', '--json', '--no-index', dst))
    check(b['total']['count'] == a['total']['count'] and b['skipped_lines'] == 0
          and b['dumps'][0]['lines'] == a['dumps'][0]['lines'] + 1,
          'the copy loads whole: %d objects, no skipped line' % b['total']['count'])
    check(unknown_of(b) == want, 'summary --json lists every invented field with its count: %s'
          % sorted(unknown_of(b).items()))
    check(b['unknown_keys'] == sum(c for (k, _), c in want.items() if k in ('key', 'flag'))
          and b['unknown_types'] == sum(retyped.values()),
          'unknown_keys %d and unknown_types %d are their totals' % (b['unknown_keys'], b['unknown_types']))
    check(not a['unknown'] and a['unknown_keys'] == 0, 'the original has no unknown field')
    by_a = {g['key']: g['count'] for g in a['by_type']['groups']}
    by_b = {g['key']: g['count'] for g in b['by_type']['groups']}
    exp = dict(by_a)
    exp['DATA'] -= retyped['FIBER']
    exp['STRUCT'] -= retyped['SLAB']
    exp.update(retyped)
    check(by_b == exp, 'per type the same objects, the invented types under their own names')
    cls = lambda j: {g['key']: g['count'] for g in j['by_class']['groups']  # noqa: E731
                     if not g['key'].startswith('<imemo:')}
    check(cls(b) == cls(a), 'the same classes (but the renamed imemo_type)')
    check(b['references'] == a['references'] and b['dangling'] == a['dangling'],
          'the same references (%d)' % b['references'])
    check({r['root'] for r in b['roots']} == {r['root'] for r in a['roots']} | {'ractor_local'},
          'the invented root category is a category like any other')
    text = hs('summary', '--no-index', dst)
    line = [ln for ln in text.splitlines() if 'fields this version does not know' in ln]
    check(len(line) == 1 and all('%s %s (%s)' % (k, n, format(c, ',')) in line[0] for (k, n), c in want.items()),
          'the text summary says so: %s' % (line[0].strip() if line else None))
    for t in ('1', '2', '8'):
        c = json.loads(hs('summary', '--json', '--no-index', '--threads', t, '--max-line', '65536', dst))
        check(unknown_of(c) == want and c['unknown_keys'] == b['unknown_keys'],
              '--threads %s: the same list' % t)
    hs('index', dst)
    c = json.loads(hs('summary', '--json', dst))
    check(c['load']['from_index'] and unknown_of(c) == want, 'from a saved index: the same list')
    s = json.loads(hs('tally', '--json', '--stream', '--by', 'type', '--top', '0', '--keep-dumper',
                      '--keep-tracer', '--threads', '4', dst))
    check({r['key']: r['count'] for r in s['groups']} == exp, 'tally --stream: the same objects per type')
    return check.finish()


if __name__ == '__main__':
    sys.exit(main())
