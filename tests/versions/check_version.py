#!/usr/bin/env python3
"""heapscope on real dumps of one Ruby version, against the workload's truth.

usage: check_version.py VERSION      (VERSION: native, 3.2, 3.3, 3.4, 4.0, head)

The dumps come from tests/versions/rubies.py: our leak workload
(leak_series.rb --variants: heap_1..3, plus heap_3_full, heap_3_no_shapes
on 3.2+ and heap_since, written in one window after heap_3) and our
timeline workload (timeline_series.rb --steps 6), run by Debian's Ruby
(native) or by CRuby for WASI under Node (the others).  Checked:

  * the leak series (tests/workloads/check_leaks.py): the truth against the
    dumps; summary and tally totals per type = ObjectSpace's counts plus the
    dumper's; diff finds every planted object and nothing outside the
    identity diff, per planted site exactly; suspects ranks every holder
    among the first N+1; root paths pass through the holders and are as
    short as a breadth-first search;
  * the variants: full: (objects as counted; free slots = NONE records, and
    objects + free slots = every slot), shapes: false (no SHAPE record),
    since: (exactly the objects of generation >= since, no ROOT; a diff
    against it still finds every planted object, with the partial-dump
    warning);
  * the dumps' addresses (32-bit on WASI) everywhere: show and root take
    them as the dump prints them and print them back unchanged, and a saved
    index (heapscope index) answers summary, show and root as the parse
    does;
  * the timeline: the planted site, and STRING, grow and nothing else does;
    the per-type count series equal the truth's;
  * every key, flag and type of the dump is one heapscope knows (summary
    reports no unknown field);
  * Ruby 4.0 and later: every IMEMO fields object belongs to the object in
    its "class" field, which references it; tally --fields-with-owner counts
    each with its owner; root paths of the class-level holders run owner ->
    fields -> holder; objects whose object_id was taken keep it: the diff
    says it used them, and still finds every planted object when those
    objects move to other addresses in the last dump.

Exit 77 (skipped) only when the version cannot run here: no Node or npm, or
the pinned npm packages cannot be installed (registry unreachable).
Env: HEAPSCOPE (the CLI), HEAPSCOPE_WORK (scratch), HEAPSCOPE_CACHE (see
rubies.py).
"""
import collections
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'workloads'))
import check_leaks  # noqa: E402
import rubies  # noqa: E402
import workloads  # noqa: E402

HEAPSCOPE = os.environ['HEAPSCOPE']
check = workloads.Checks()
check_leaks.check = check


def hs(*args, rc=0):
    r = subprocess.run([HEAPSCOPE] + list(args) + ['--no-progress'], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if r.returncode != rc:
        raise SystemExit('heapscope %s exited %d (expected %d): %s'
                         % (' '.join(args), r.returncode, rc, r.stderr.decode(errors='replace')))
    return json.loads(r.stdout.decode('utf-8', 'surrogateescape'))


def strip_load(j):
    """A summary without what depends on how it was loaded."""
    j = dict(j)
    for k in ('load', 'dumps'):
        j.pop(k, None)
    return j


def records(path):
    return list(workloads.records(path))


# ------------------------------------------------------------- variants

def check_variants(v, d, t):
    by_file = {r['file']: r for r in t['variants']}
    want_files = ['heap_3_full.json', 'heap_since.json'] + (
        ['heap_3_no_shapes.json'] if v != 'native' else [])
    check(sorted(by_file) == sorted(want_files), '%s: variants written: %s' % (v, ', '.join(sorted(by_file))))
    if 'heap_3_full.json' in by_file:
        snap = by_file['heap_3_full.json']
        path = os.path.join(d, snap['file'])
        want = workloads.expected_types(d, t, snap)
        s = hs('summary', '--json', path)
        got = {g['key']: [g['count'], g['memsize']] for g in s['by_type']['groups']}
        check(got == want, '%s full: summary: %d objects, per type = ObjectSpace + dumper'
              % (v, s['total']['count']))
        none = sum(1 for r in workloads.records(path) if r.get('type') == 'NONE')
        slots = snap['slots']
        check(s['free_slots'] == none > 0, '%s full: free slots %d = NONE records %d' % (v, s['free_slots'], none))
        if slots['total'] == slots['total_after']:
            check(s['free_slots'] + s['total']['count'] == slots['total'],
                  '%s full: objects + free slots = every slot of the heap (%d, count_objects TOTAL)'
                  % (v, slots['total']))
    if 'heap_3_no_shapes.json' in by_file:
        snap = by_file['heap_3_no_shapes.json']
        path = os.path.join(d, snap['file'])
        s = hs('summary', '--json', path)
        nshape = sum(1 for r in workloads.records(path) if r.get('type') == 'SHAPE')
        got = {g['key']: [g['count'], g['memsize']] for g in s['by_type']['groups']}
        check(s['shapes'] == 0 == nshape and got == workloads.expected_types(d, t, snap),
              '%s shapes: false: no SHAPE record; %d objects, per type = ObjectSpace + dumper'
              % (v, s['total']['count']))
    snap = by_file['heap_since.json']
    full = os.path.join(d, 'heap_3_full.json')
    path = os.path.join(d, snap['file'])
    since = snap['since']
    # the objects of generation >= since in the dump of the same window,
    # plus what the dumper allocated after it (same generation, its file)
    expect = {}
    for r in workloads.records(full):
        if r.get('type') not in workloads.NOT_OBJECTS and (r.get('generation') or -1) >= since:
            expect[r['address']] = r['type']
    got_recs = [r for r in workloads.records(path) if r.get('type') not in workloads.NOT_OBJECTS]
    for r in got_recs:
        if r['address'] not in expect and r.get('file') == t['dumper_file'] and r.get('generation') == snap['gc_count']:
            expect[r['address']] = r['type']
    s = hs('summary', '--json', path)
    per_type = collections.Counter(expect.values())
    check(s['total']['count'] == len(expect) and
          {g['key']: g['count'] for g in s['by_type']['groups']} == dict(per_type)
          and not s['roots'] and {r['address'] for r in got_recs} == set(expect),
          '%s since: %d: exactly the %d objects of generation >= %d, no ROOT record'
          % (v, since, s['total']['count'], since))
    planted = {row[0] for L in t['leaks'].values() for row in L['objects']}
    files = [workloads.dump_path(d, x['file']) for x in t['snapshots']]
    dd = hs('diff', '--json', '--addresses', '--top', '0', files[0], files[1], path)
    got = {a for g in dd['groups'] for a in g['addresses']}
    check(planted <= got and any(w['code'] == 'partial' for w in dd['warnings']),
          '%s since: diff heap_1 heap_2 heap_since finds the %d planted objects, and warns of the partial dump'
          % (v, len(planted)))


# ------------------------------------------------- addresses, saved index

def check_addresses(v, d, t, files):
    h3 = files[2]
    bits = t['pointer_bits']
    addrs = [r['address'] for r in workloads.records(h3) if 'address' in r and r.get('type') != 'SHAPE']
    wide = max(int(a, 16) for a in addrs)
    check((wide < 2 ** 32) == (bits == 32),
          '%s: %d-bit Ruby: the widest address is %s' % (v, bits, hex(wide)))
    holders = [L['holder'] for L in t['leaks'].values()]
    sh = hs('show', '--json', h3, *[h['address'] for h in holders])
    ok = [(o['address'], o['type'], o['class'], o['found']) for o in sh['objects']] == \
         [(h['address'], h['type'], h['class'], True) for h in holders]
    check(ok, '%s: show takes the holders\' addresses as the dump prints them and prints them back' % v)
    # the same questions from a saved index
    work = os.path.join(os.environ.get('HEAPSCOPE_WORK', '/tmp'), 'versions', v)
    os.makedirs(work, exist_ok=True)
    links = []
    for f in files:
        link = os.path.join(work, os.path.basename(f))
        for p in (link, link + '.hsx'):
            if os.path.lexists(p):
                os.unlink(p)
        os.symlink(f, link)
        links.append(link)
    subprocess.run([HEAPSCOPE, 'index', '--no-progress', links[2]], check=True, stdout=subprocess.DEVNULL)
    check(os.path.exists(links[2] + '.hsx'), '%s: heapscope index wrote a saved index' % v)
    a = hs('summary', '--json', '--no-index', h3)
    b = hs('summary', '--json', links[2])
    check(b['load']['from_index'] and not a['load']['from_index'] and strip_load(a) == strip_load(b),
          '%s: summary from the saved index = from the dump' % v)
    addrs = [h['address'] for h in holders]
    ra = hs('root', '--json', '--no-index', h3, *addrs)
    rb = hs('root', '--json', links[2], *addrs)
    check(ra['paths'] == rb['paths'] and all(p['path'] for p in ra['paths']),
          '%s: root from the saved index = from the dump' % v)
    sa = hs('show', '--json', '--no-index', h3, *addrs)
    sb = hs('show', '--json', links[2], *addrs)
    drop = lambda j: [{k: x for k, x in o.items() if k != 'record'} for o in j['objects']]  # noqa: E731
    check(drop(sa) == drop(sb) and all(o['record'] is None for o in sb['objects']),
          '%s: show from the saved index = from the dump (but the record, which it does not keep)' % v)


# ------------------------------------------------------------- timeline

def check_timeline(v, d, t):
    dumps = [os.path.join(d, s['file']) for s in t['snapshots']]
    G = t['growing']
    per = [workloads.expected_types(d, t, s) for s in t['snapshots']]

    def tl(*args):
        # the truth counts every object: the dumper's and Ruby's allocation
        # tracer (the workload traces allocations) too
        return hs('timeline', '--json', '--top', '0', '--keep-dumper', '--keep-tracer', *args, *dumps)
    jt = tl('--by', 'type', '--metric', 'count')
    first = jt['groups'][0]
    check(first['key'] == G['type'] and first['growing'] and sum(g['growing'] for g in jt['groups']) == 1,
          '%s timeline: by type, %s first and the only growing type' % (v, first['key']))
    series = {g['key']: g['count'] for g in jt['groups']}
    want = {k: [p.get(k, [0, 0])[0] for p in per] for k in set().union(*per)}
    check(series == want, '%s timeline: per-type count series = the truth\'s (ObjectSpace + dumper)' % v)
    # by default the tracer is left out of every dump: exactly its record
    tracer = [workloads.tracer_objects(p) for p in dumps]
    jd = hs('timeline', '--json', '--top', '0', '--keep-dumper', '--by', 'type', '--metric', 'count', *dumps)
    check([x['excluded_tracer'] for x in jd['dumps']] == [{'count': n, 'memsize': m} for n, m in tracer]
          and [x['total']['count'] for x in jd['dumps']]
          == [x['total']['count'] - n for x, (n, m) in zip(jt['dumps'], tracer)],
          '%s timeline: the allocation tracer (%s) left out of every dump and counted'
          % (v, [n for n, m in tracer]))
    jf = tl('--by', 'file:line', '--metric', 'count')
    first = jf['groups'][0]
    ys = first['count']
    check(first['key'] == G['site'] and first['growing'] and sum(g['growing'] for g in jf['groups']) == 1
          and [b - a for a, b in zip(ys, ys[1:])] == G['count_deltas'],
          '%s timeline: by file:line, the planted site %s is the only growing one, +%s per step'
          % (v, first['key'].rsplit('/', 1)[-1], sorted(set(G['count_deltas']))))


# ----------------------------------------------------- Ruby 4.0 and later

def fields_objects(dump):
    return {a: r for a, r in dump.objects.items() if r.get('type') == 'IMEMO' and r.get('imemo_type') == 'fields'}


def check_fields(v, d, t, dumps, files):
    h3 = dumps[2]
    fields = fields_objects(h3)
    check(len(fields) > 0, '%s: the dump has IMEMO fields objects (%d)' % (v, len(fields)))
    bad = [a for a, r in fields.items()
           if r.get('class') not in h3.objects or a not in (h3.objects[r['class']].get('references') or [])]
    check(not bad, '%s: each fields object\'s "class" is its owner, an object that references it%s'
          % (v, ' -- %s' % bad[:3] if bad else ''))
    sh = hs('show', '--json', files[2], *sorted(fields)[:20])
    check(all((o.get('owner') or {}).get('address') == fields[o['address']]['class'] for o in sh['objects']),
          '%s: show names the owner of a fields object' % v)
    # tally --fields-with-owner: each fields object counted in its owner's row
    plain = hs('tally', '--json', '--by', 'class', '--top', '0', '--keep-dumper', files[2])
    own = hs('tally', '--json', '--by', 'class', '--top', '0', '--keep-dumper', '--fields-with-owner', files[2])
    want = {r['key']: [r['count'], r['memsize']] for r in plain['groups']}
    moved = want.pop('<imemo:fields>', [0, 0])
    for a, r in fields.items():
        k = h3.class_label(h3.objects[r['class']])
        w = want.setdefault(k, [0, 0])
        w[0] += 1
        w[1] += r.get('memsize', 0)
    got = {r['key']: [r['count'], r['memsize']] for r in own['groups']}
    check(moved[0] == len(fields) and got == want,
          '%s: tally --by class --fields-with-owner: the %d fields objects counted with their owners'
          % (v, len(fields)))
    # the class-level holders: owner -> fields -> holder in root
    for name in ('memo', 'hooks'):
        L = t['leaks'][name]
        owner = L['root_path'][-2]['address']
        holder = L['holder']['address']
        p = [x['address'] for x in hs('root', '--json', files[2], holder)['paths'][0]['path']]
        i = p.index(owner) if owner in p else -1
        ok = i >= 0 and i + 2 < len(p) + 0 and p[i + 2] == holder and p[i + 1] in fields \
            and fields[p[i + 1]]['class'] == owner
        check(ok, '%s: root of %s (%s) runs %s -> <imemo:fields> -> holder' % (
            v, L['holder']['expr'], holder, L['root_path'][-2].get('name')))


def with_object_id(dump):
    return {a: r['flags']['object_id'] for a, r in dump.objects.items()
            if isinstance((r.get('flags') or {}).get('object_id'), int)}


def check_object_ids(v, d, t, dumps, files):
    ids = [with_object_id(x) for x in dumps]
    subs = t['leaks']['subscriptions']
    n_subs = sum(1 for row in subs['objects'] if row[2] == 'Desk::Subscription')
    check(len(ids[2]) >= n_subs > 0, '%s: heap_3 has %d objects with an object_id (the %d leaked '
          'Subscriptions among them)' % (v, len(ids[2]), n_subs))
    s = hs('summary', '--json', files[2])
    check(s.get('object_ids') == len(ids[2]), '%s: summary counts %s objects with an object_id'
          % (v, s.get('object_ids')))
    dd = hs('diff', '--json', '--addresses', '--top', '0', *files)
    check(any('object_id' in w for w in dd.get('notes', [])) and dd.get('object_id_matches', 0) > 0,
          '%s: diff notes that it matched %s objects by object_id' % (v, dd.get('object_id_matches')))
    # the streamed dumps A and B on the parallel parser carry the ids too
    d4 = hs('diff', '--json', '--addresses', '--top', '0', '--threads', '4', '--max-line', '65536', *files)
    strip = lambda j: {k: x for k, x in j.items() if k not in ('dumps', 'notes')}  # noqa: E731
    check(strip(d4) == strip(dd), '%s: diff on 4 parser threads = on one' % v)
    # move every object with an object_id in heap_3 to a new address: the
    # diff must still find the planted ones (by object_id), and an
    # address-only diff must lose them
    work = os.path.join(os.environ.get('HEAPSCOPE_WORK', '/tmp'), 'versions', v)
    os.makedirs(work, exist_ok=True)
    moved = os.path.join(work, 'heap_3_moved.json')
    top = max(int(a, 16) for a in dumps[2].objects) + 0x1000
    remap = {a: '0x%x' % (top + 0x40 * k) for k, a in enumerate(sorted(ids[2]))}
    pat = re.compile(r'"(0x[0-9a-f]+)"')
    with open(files[2], 'rb') as fin, open(moved, 'wb') as fout:
        for line in fin:
            fout.write(pat.sub(lambda m: '"%s"' % remap.get(m.group(1), m.group(1)),
                               line.decode('utf-8', 'surrogateescape')).encode('utf-8', 'surrogateescape'))
    planted = {row[0] for L in t['leaks'].values() for row in L['objects']}
    want = {remap.get(a, a) for a in planted}
    dm = hs('diff', '--json', '--addresses', '--top', '0', files[0], files[1], moved)
    got = {a for g in dm['groups'] for a in g['addresses']}
    before = hs('diff', '--json', '--addresses', '--top', '0', *files)
    before_n = before['leaked']['count']
    check(want <= got and dm['leaked']['count'] == before_n,
          '%s: with the %d objects that have an object_id moved, the diff still finds the %d planted '
          'objects and reports %d, as before' % (v, len(remap), len(want), dm['leaked']['count']))
    da = hs('diff', '--json', '--addresses', '--top', '0', '--address-only', files[0], files[1], moved)
    lost = want - {a for g in da['groups'] for a in g['addresses']}
    moved_planted = {remap[a] for a in planted if a in remap}
    check(moved_planted and moved_planted <= lost,
          '%s: an address-only diff loses the %d moved planted objects (identity by object_id matters)'
          % (v, len(moved_planted)))


# ------------------------------------------------------------------ main

def check_top_suspect(v, t, files):
    """Ruby 4.0 and later: the first suspect is an application holder of
    the truth (not one of the VM's own tables, e.g. the VM/concurrent_set
    of Ruby 4.0's fstring table, whose growth between dumps is Ruby's), and
    its allocation sites (suspects --json "sites": the lines that put the
    leaked objects in it) name the planted leak's file:line."""
    sus = hs('suspects', '--json', '--top', '3', *files)
    top = sus['suspects'][0] if sus['suspects'] else {}
    leak = [L for L in t['leaks'].values() if L['holder']['address'] == top.get('address')]
    check(top and not top.get('vm_table') and leak,
          '%s: the top suspect %s %s (%s) is a planted holder of the truth (%s), no VM table'
          % (v, top.get('type'), top.get('class'), top.get('address'),
             ', '.join('%s %s' % (L['holder']['address'], L['holder']['expr'])
                       for L in t['leaks'].values())))
    planted = {k.rsplit(':', 1)[0] for L in leak for k in L['planted_by_site']}
    named = ['%s:%s' % (x['file'], x['line']) for x in top.get('sites', []) if x['entries']]
    check(set(named) & planted,
          '%s: its sites name the planted file:line (%s among %s)'
          % (v, sorted(planted), named))


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in rubies.VERSIONS:
        raise SystemExit('usage: check_version.py {%s}' % ','.join(rubies.VERSIONS))
    v = sys.argv[1]
    try:
        d = rubies.ensure(v, 'leak')
        dt = rubies.ensure(v, 'timeline')
    except rubies.Unavailable as e:
        print('SKIP: Ruby %s cannot run here: %s. Not checked: heapscope on real dumps of Ruby %s '
              '(scripts/setup.sh installs Node and the packages)' % (v, e, v))
        return 77
    t = workloads.truth(d)
    tt = workloads.truth(dt)
    files = [workloads.dump_path(d, s['file']) for s in t['snapshots']]
    dumps = [workloads.Dump(f) for f in files]
    print('--- Ruby %s: %s\n    %s (%s objects; %d leaked in %d leaks)\n    %s' % (
        v, t['ruby'], d, ' / '.join(str(s['objects']) for s in t['snapshots']), t['leaked']['count'],
        len(t['leaks']), dt))
    check_leaks.check_truth(v, d, t, dumps)
    check_leaks.check_heapscope(v, d, t, dumps, files)
    check_variants(v, d, t)
    check_addresses(v, d, t, files)
    check_timeline(v, dt, tt)
    for f in files + [os.path.join(d, x['file']) for x in t['variants']]:
        s = hs('summary', '--json', f)
        check(s['unknown'] == [] and s['unknown_keys'] == 0 and s['unknown_types'] == 0,
              '%s %s: every key, flag and type is known (%s)' % (v, os.path.basename(f), s.get('unknown')))
    if any(fields_objects(x) for x in dumps) or v in ('4.0', 'head'):
        check_fields(v, d, t, dumps, files)
        check_object_ids(v, d, t, dumps, files)
    if v in ('4.0', 'head'):
        check_top_suspect(v, t, files)
    # the figures for the report
    sus = hs('suspects', '--json', '--top', '0', *files)
    ranked = [x['address'] for x in sus['suspects']]
    pos = {n: (ranked.index(L['holder']['address']) + 1 if L['holder']['address'] in ranked else None)
           for n, L in t['leaks'].items()}
    dd = hs('diff', '--json', '--addresses', '--top', '0', *files)
    got = {a for g in dd['groups'] for a in g['addresses']}
    planted = {row[0] for L in t['leaks'].values() for row in L['objects']}
    print('FIGURES %s' % json.dumps({
        'version': v, 'ruby': t['ruby'], 'objects': [s['objects'] for s in t['snapshots']],
        'leaked_found': len(planted & got), 'leaked_planted': len(planted), 'diff_reported': len(got),
        'holders_rank': pos, 'generation_s': [rubies.generation_seconds(d), rubies.generation_seconds(dt)]}))
    return check.finish()


if __name__ == '__main__':
    sys.exit(main())
