#!/usr/bin/env python3
"""heapscope on our own leak workload (examples/workloads/leak_series.rb),
checked against the truth the workload computed in its own process.

Three sets: scale 1 (plain), scale 0.05 (gzip), scale 3 (gzip, with
rubygems loaded).  For each:

  the truth against the dumps (an independent reading in Python, no
  heapscope): the workload reported no problem; every snapshot holds exactly
  the objects ObjectSpace counted per type (count and memsize), plus those
  the dumper allocated and met; every planted object is in heap_2 and heap_3
  with the truth's type, class, file, line, generation and memsize and not
  in heap_1; every holder is in heap_3 and every edge of its root path is a
  reference of the dump (a step the truth marks indirect passes through one
  internal object: Dump.step_ok);

  heapscope against the truth:
  * summary and tally --by type --keep-dumper: objects, count and memsize per
    type, as above; tally --by type without it: the same less the objects of
    the dumper's allocation sites (found here by the man page's rule);
  * diff: every planted object reported; nothing outside the identity diff
    (computed here); per planted site (file:line:class) exactly the truth's
    count and memsize; by-type groups add up; the 2-dump diff contains the
    3-dump one;
  * suspects: every holder among the first N+1 (N planted leaks), keeping
    alive at least the objects of its planted sites, naming a planted site
    among its first sites (JSON and text), no VM table before it;
  * root: every object of a planted site has a path through its holder;
    each holder's path is as short as the breadth-first search here (from
    the precise roots first, then machine_context, as heapscope's paths).

Env: HEAPSCOPE (the CLI), HEAPSCOPE_WORK (where the sets are cached).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402

HEAPSCOPE = os.environ['HEAPSCOPE']
SETS = ['leak_s1', 'leak_s005_gz', 'leak_s3_gz']

check = workloads.Checks()


def hs(*args):
    r = subprocess.run([HEAPSCOPE] + list(args) + ['--no-progress'], stdout=subprocess.PIPE)
    if r.returncode != 0:
        raise SystemExit('heapscope %s failed (exit %d)' % (' '.join(args[:2]), r.returncode))
    return json.loads(r.stdout.decode('utf-8', 'surrogateescape'))


def site_key(row):
    return '%s:%s:%s' % (row[3] or '(none)', row[4] or 0, row[2])


def check_truth(name, d, t, dumps):
    """The truth against the dumps, without heapscope."""
    check(t['problems'] == [], '%s: the workload checked itself: %s' % (name, t['problems'] or 'no problem'))
    for snap in t['snapshots']:
        path = workloads.dump_path(d, snap['file'])
        got = workloads.type_counts(path)
        want = workloads.expected_types(d, t, snap)
        bad = {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
        check(not bad, '%s %s: per type, the dump holds the objects ObjectSpace counted (%d) plus the '
              "dumper's (count and memsize)%s" % (name, snap['file'], snap['objects'], ' -- %s' % bad if bad else ''))
    h1, h2, h3 = dumps
    bad = []
    n = 0
    ident1 = h1.identities()
    for lname, leak in t['leaks'].items():
        for row in leak['objects']:
            n += 1
            addr, typ, cls, file, line, gen, mem = row
            for dump in (h2, h3):
                r = dump.objects.get(addr)
                if r is None or (r['type'], dump.class_label(r), r.get('file'), r.get('line'),
                                 r.get('generation'), r.get('memsize', 0)) != (typ, cls, file, line, gen, mem):
                    bad.append((lname, os.path.basename(dump.path), row, r and {k: r.get(k) for k in (
                        'type', 'file', 'line', 'generation', 'memsize')}))
            if (addr, gen) in ident1:
                bad.append((lname, 'in heap_1', row))
    check(not bad, '%s: the %d planted objects are in heap_2 and heap_3 as the truth says, not in heap_1%s'
          % (name, n, ' -- %s' % bad[:3] if bad else ''))
    bad = []
    for lname, leak in t['leaks'].items():
        h = leak['holder']
        r = h3.objects.get(h['address'])
        if r is None or r['type'] != h['type'] or h3.class_label(r) != h['class']:
            bad.append((lname, 'holder', h['address']))
            continue
        path = leak['root_path']
        roots = h3.roots.get(path[0]['root'], [])
        for a, b in zip(path, path[1:]):
            if not h3.step_ok(roots if 'root' in a else a['address'], b):
                bad.append((lname, '%s does not reference %s' % (a, b)))
        if path[-1]['address'] != h['address']:
            bad.append((lname, 'the root path does not end at the holder'))
    check(not bad, '%s: the %d holders are in heap_3; every edge of their root paths is in the dump%s'
          % (name, len(t['leaks']), ' -- %s' % bad[:3] if bad else ''))


def check_heapscope(name, d, t, dumps, files):
    h1, h2, h3 = dumps
    # --------------------------------------------------- summary and tally
    for snap, f in zip(t['snapshots'], files):
        want = workloads.expected_types(d, t, snap)
        s = hs('summary', '--json', f)
        got = {g['key']: [g['count'], g['memsize']] for g in s['by_type']['groups']}
        check(s['total']['count'] == sum(v[0] for v in want.values()) and got == want,
              '%s %s: summary: %d objects, count and memsize per type = ObjectSpace + dumper'
              % (name, snap['file'], s['total']['count']))
        tt = hs('tally', '--json', '--by', 'type', '--top', '0', '--keep-dumper', '--keep-tracer', f)
        check({r['key']: [r['count'], r['memsize']] for r in tt['groups']} == want,
              '%s %s: tally --by type --keep-dumper --keep-tracer = ObjectSpace + dumper'
              % (name, snap['file']))
        # by default, what the dumper's sites allocated (in this dump or an
        # earlier one) is left out and counted, and so is Ruby's
        # allocation tracer (the workloads trace allocations)
        out = workloads.dumper_site_objects(f)
        tracer = workloads.tracer_objects(f)
        out_t = {k: list(v) for k, v in out.items()}
        d_t = out_t.setdefault('DATA', [0, 0])
        d_t[0] += tracer[0]
        d_t[1] += tracer[1]
        rest = {k: [v[0] - out_t.get(k, [0, 0])[0], v[1] - out_t.get(k, [0, 0])[1]]
                for k, v in want.items()}
        rest = {k: v for k, v in rest.items() if v[0]}
        td = hs('tally', '--json', '--by', 'type', '--top', '0', f)
        n_out = sum(v[0] for v in out.values())
        check({r['key']: [r['count'], r['memsize']] for r in td['groups']} == rest
              and td['excluded_dumper_objects'] == n_out,
              '%s %s: tally --by type leaves out the %d objects of the dumper\'s sites'
              % (name, snap['file'], n_out))
        check(tracer[0] == 1 and td['excluded_tracer'] == {'count': tracer[0], 'memsize': tracer[1]},
              '%s %s: tally leaves out the allocation tracer (%d object, %d bytes) and says so'
              % (name, snap['file'], tracer[0], tracer[1]))
        # histogram --by class: the tracer is no "Object" row, and kept it
        # is a row of its own under its label
        hc = hs('histogram', '--json', '--by', 'class', '--top', '0', f)
        hk = hs('histogram', '--json', '--by', 'class', '--top', '0', '--keep-tracer', f)
        obj = lambda doc: [g for g in doc['groups'] if g['key'] == 'Object']
        trc = [g for g in hk['groups'] if g['key'] == '<allocation tracer>']
        check(hc['excluded_tracer'] == td['excluded_tracer'] and obj(hc) == obj(hk)
              and not [g for g in hc['groups'] if g['key'] == '<allocation tracer>']
              and trc == [{'key': '<allocation tracer>', 'count': 1, 'memsize': tracer[1]}],
              '%s %s: histogram --by class: the tracer is left out, or kept as '
              '<allocation tracer>, never counted as Object' % (name, snap['file']))
        # retained: not the first object, said on the last line
        rt = hs('retained', '--json', '--top', '5', f)
        check(all(o['class'] != '<allocation tracer>' for o in rt['objects'])
              and rt['excluded_tracer']['memsize'] >= tracer[1],
              '%s %s: retained leaves the tracer out of its ranking and counts what it retains'
              % (name, snap['file']))

    # ---------------------------------------------------------------- diff
    ours = hs('diff', '--json', '--addresses', '--top', '0', *files)
    got = {a for g in ours['groups'] for a in g['addresses']}
    check(len(got) == ours['leaked']['count'], '%s: diff lists %d addresses = its count' % (name, len(got)))
    planted = {row[0] for leak in t['leaks'].values() for row in leak['objects']}
    miss = planted - got
    check(not miss, '%s: diff reports every planted object (%d; %d missing%s)'
          % (name, len(planted), len(miss), ', e.g. %s' % sorted(miss)[:3] if miss else ''))
    ident = workloads.identity_diff(h1, h2, h3)
    extra = got - ident
    check(not extra, '%s: diff reports nothing outside the identity diff (%d reported, %d in it)%s'
          % (name, len(got), len(ident), ' -- e.g. %s' % sorted(extra)[:3] if extra else ''))
    by_site = hs('diff', '--json', '--by', 'file:line:class', '--top', '0', *files)
    rows = {g['key']: (g['count'], g['memsize']) for g in by_site['groups']}
    want = {}
    for leak in t['leaks'].values():
        for row in leak['objects']:
            k = site_key(row)
            if k in leak['planted_by_site']:
                c = want.setdefault(k, [0, 0])
                c[0] += 1
                c[1] += row[6]
    bad = {k: (rows.get(k), tuple(v)) for k, v in want.items() if rows.get(k) != tuple(v)}
    check(want and not bad, '%s: diff --by file:line:class: each of the %d planted sites has the truth\'s '
          'count and memsize%s' % (name, len(want), ' -- %s' % bad if bad else ''))
    by_type = hs('diff', '--json', '--by', 'type', '--top', '0', *files)
    check(sum(g['count'] for g in by_type['groups']) == ours['leaked']['count'],
          '%s: diff --by type: groups add up to %d' % (name, ours['leaked']['count']))
    two = hs('diff', '--json', '--addresses', '--top', '0', *files[:2])
    two_set = {a for g in two['groups'] for a in g['addresses']}
    check(got <= two_set, '%s: the 2-dump diff contains the 3-dump diff (%d of %d)'
          % (name, len(got & two_set), len(got)))

    # ------------------------------------------------------ suspects, root
    leaks = t['leaks']
    sus = hs('suspects', '--json', '--top', '0', *files)
    ranked = [s['address'] for s in sus['suspects']]
    pos = {n: (ranked.index(L['holder']['address']) + 1 if L['holder']['address'] in ranked else None)
           for n, L in leaks.items()}
    check(all(p is not None and p <= len(leaks) + 1 for p in pos.values()),
          '%s: suspects: every holder among the first %d: %s' % (name, len(leaks) + 1, pos))
    targets = {}
    for L in leaks.values():
        for row in L['objects']:
            if site_key(row) in L['planted_by_site']:
                targets[row[0]] = L['holder']['address']
    # nothing but its holder keeps a planted-site object alive
    kept = {s['address']: s['leaked']['count'] for s in sus['suspects']}
    low = {n: (kept.get(L['holder']['address']), sum(L['planted_by_site'].values())) for n, L in leaks.items()
           if kept.get(L['holder']['address'], 0) < sum(L['planted_by_site'].values())}
    check(not low, '%s: suspects: each holder keeps alive at least its planted-site objects%s'
          % (name, ' -- %s' % low if low else ''))
    # each planted holder names the line that put its leaked objects there:
    # one of its first sites (those that put objects in it first) is a
    # planted one; no VM table comes first
    by_addr = {s['address']: s for s in sus['suspects']}
    key = lambda x: '%s:%s:%s' % (x['file'], x['line'], x['class'])
    named = {n: [key(x) for x in by_addr.get(L['holder']['address'], {}).get('sites', []) if x['entries']]
             for n, L in leaks.items()}
    miss = {n: k for n, k in named.items() if not set(k) & set(leaks[n]['planted_by_site'])}
    check(not miss, '%s: suspects --json: each holder\'s first sites name a planted site%s'
          % (name, ' -- %s' % miss if miss else ''))
    vm_first = [s['rank'] for s in sus['suspects'] if s.get('vm_table')]
    app_last = max([s['rank'] for s in sus['suspects'] if not s.get('vm_table')] or [0])
    check(all(r > app_last for r in vm_first),
          '%s: suspects: the Ruby VM\'s tables (ranks %s) after every application holder'
          % (name, vm_first or 'none'))
    text = subprocess.run([HEAPSCOPE, 'suspects', '--top', '0', '--no-progress'] + files,
                          stdout=subprocess.PIPE).stdout.decode('utf-8', 'surrogateescape')
    blocks = {}
    for b in text.split('\n\n'):
        first = b.split('\n', 1)[0]
        for L in leaks.values():
            if (' %s ' % L['holder']['address']) in first:
                blocks[L['holder']['address']] = b
    gone = [n for n, L in leaks.items()
            if not any(('     %s ' % k) in blocks.get(L['holder']['address'], '') or
                       ('     %s:' % k) in blocks.get(L['holder']['address'], '')
                       for k in L['planted_by_site'])]
    check(not gone, '%s: suspects (text): under each holder, a planted site%s'
          % (name, ' -- missing for %s' % gone if gone else ''))
    paths = hs('root', '--json', files[2], *sorted(targets))
    by_target = {p['target']: p for p in paths['paths']}
    steps = lambda a: [s['address'] for s in by_target.get(a, {}).get('path', [])]
    bad = [a for a, h in targets.items() if h not in steps(a)]
    check(not bad, '%s: root: each of the %d planted-site objects has a path through its holder%s'
          % (name, len(targets), ' -- e.g. %s' % bad[:3] if bad else ''))
    holders = [L['holder']['address'] for L in leaks.values()]
    hp = hs('root', '--json', '--no-class-edges', files[2], *holders)
    bfs = h3.path_lengths(holders)
    got_len = {p['target']: len(p['path']) for p in hp['paths']}
    check(got_len == bfs and all(bfs.values()),
          '%s: root --no-class-edges: holder path lengths %s = breadth-first search %s'
          % (name, [got_len.get(h) for h in holders], [bfs[h] for h in holders]))
    known = [workloads.path_length(L['root_path']) for L in leaks.values()]
    check(all(got_len.get(h, 99) <= k for h, k in zip(holders, known)),
          '%s: no holder path is longer than the truth\'s root path %s' % (name, known))


def main():
    only = sys.argv[1:]
    for name in SETS:
        if only and name not in only:
            continue
        d = workloads.ensure_set(name)
        t = workloads.truth(d)
        files = [workloads.dump_path(d, s['file']) for s in t['snapshots']]
        dumps = [workloads.Dump(f) for f in files]
        print('--- %s: %s (%s objects; %d leaked in %d leaks; Ruby %s)' % (
            name, d, ' / '.join(str(s['objects']) for s in t['snapshots']), t['leaked']['count'],
            len(t['leaks']), t['ruby_version']))
        check_truth(name, d, t, dumps)
        check_heapscope(name, d, t, dumps, files)
    return check.finish()


if __name__ == '__main__':
    sys.exit(main())
