#!/usr/bin/env python3
"""heapscope export --format pprof, read by Go's own pprof (`go tool pprof`,
Debian golang-go), on our leak workload (examples/workloads, set leak_s1).

  * `-raw` and `-top` read the profiles; the profile's time is --time, or
    the dump file's mtime without it;
  * totals of both sample types: the count equals `summary --json`'s
    objects less the dumper's (tally's excluded_dumper_objects), the bytes
    equal summary's memsize less the memsize of the dumper's sites counted
    here in Python (the man page's rule), and both equal `tally`'s total;
  * per file:line and type, count and bytes equal a count over the dump's
    records in Python; every located sample has labels class, type, gem,
    and a generation that objects of its file:line and type have;
  * with `-lines -top`, the rows are `tally --by file:line`'s top sites
    with the same bytes;
  * `-diff_base heap_1 heap_3`: each planted leak's site (the workload's
    truth) grows, by the difference of the Python counts of the two dumps,
    and the largest leak's site grows most.

Offline: HOME and GOCACHE in a temporary directory, GOTOOLCHAIN=local,
GOPROXY=off.  Exit 77 (skipped) when `go` is missing.
Env: HEAPSCOPE (the CLI), HEAPSCOPE_WORK (workload cache).
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'workloads'))
import workloads  # noqa: E402

HEAPSCOPE = os.environ['HEAPSCOPE']
check = workloads.Checks()
DUMPER_OWN = ('/heapscope/snapshot.rb', '/heapscope/fork.rb', '/heapscope/auto.rb')


TRACER_STRUCT = 'ObjectTracing/allocation_info_tracer'

def go_env(tmp):
    env = dict(os.environ)
    env.update(HOME=os.path.join(tmp, 'home'), GOCACHE=os.path.join(tmp, 'gocache'),
               GOPATH=os.path.join(tmp, 'gopath'), GOTOOLCHAIN='local', GOPROXY='off',
               GOFLAGS='', PPROF_TMPDIR=os.path.join(tmp, 'pprof'))
    for k in ('HOME', 'GOCACHE', 'GOPATH', 'PPROF_TMPDIR'):
        os.makedirs(env[k], exist_ok=True)
    return env


def pprof(env, *args):
    r = subprocess.run(['go', 'tool', 'pprof'] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env)
    if r.returncode != 0:
        raise SystemExit('go tool pprof %s failed (exit %d): %s'
                         % (' '.join(args), r.returncode, r.stderr.decode(errors='replace')))
    return r.stdout.decode('utf-8', 'surrogateescape')


def hs_json(*args):
    r = subprocess.run([HEAPSCOPE] + list(args) + ['--no-progress'], stdout=subprocess.PIPE)
    if r.returncode != 0:
        raise SystemExit('heapscope %s failed (exit %d)' % (' '.join(args), r.returncode))
    return json.loads(r.stdout.decode('utf-8', 'surrogateescape'))


def export(dump, out, *extra):
    r = subprocess.run([HEAPSCOPE, 'export', '--format', 'pprof', '--out', out, '--no-progress']
                       + list(extra) + [dump], stderr=subprocess.PIPE)
    check(r.returncode == 0, 'export --format pprof %s: exit %d %s'
          % (os.path.basename(dump), r.returncode, r.stderr.decode(errors='replace')))


def parse_raw(text):
    """-raw: (time line, [(count, bytes, [loc ids], {label: value})], {loc: (name, file:line)})."""
    samples, locs, tm = [], {}, None
    section = None
    for line in text.splitlines():
        if line.startswith('Time: '):
            tm = line[6:]
        if line in ('Samples:', 'Locations', 'Mappings'):
            section = line
            continue
        if section == 'Samples:':
            m = re.match(r'^\s+(-?\d+)\s+(-?\d+): ([\d ]+)$', line)
            if m:
                samples.append((int(m.group(1)), int(m.group(2)),
                                [int(x) for x in m.group(3).split()], {}))
            elif samples and line.strip() and ':[' in line:
                for k, v in re.findall(r'(\w+):\[([^\]]*)\]', line):
                    samples[-1][3][k] = v
        elif section == 'Locations':
            m = re.match(r'^\s+(\d+): 0x0 M=1 (.*) s=0$', line)
            if m:
                locs[int(m.group(1))] = m.group(2)
    return tm, samples, locs


def loc_key(desc):
    """'(no allocation info) :0' -> '(none):0'; 'method file:line' -> 'file:line'."""
    if desc.startswith('(no allocation info)'):
        return '(none):0'
    where = desc.split(' ', 1)[1] if ' ' in desc else desc
    # pprof leaves out a line 0 (C code: "file.so:0 file.so")
    return where if re.search(r':\d+$', where) else where + ':0'


def python_counts(path):
    """Independent reading: {(file:line, type): [count, memsize, {generations}]} of
    the app's objects (dumper's sites and Ruby's allocation tracer left out),
    the dumper's memsize, and the tracer's [count, memsize]."""
    out = collections.defaultdict(lambda: [0, 0, set()])
    dumper_mem = 0
    tracer = [0, 0]
    for r in workloads.records(path):
        if r.get('type') in workloads.NOT_OBJECTS:
            continue
        f = r.get('file') or ''
        if r.get('method') == 'dump_all' or os.path.basename(f) == 'objspace.rb' or f.endswith(DUMPER_OWN):
            dumper_mem += r.get('memsize', 0)
            continue
        if r.get('type') == 'DATA' and r.get('struct') == TRACER_STRUCT:
            tracer[0] += 1              # Ruby's allocation tracer: left out too
            tracer[1] += r.get('memsize', 0)
            continue
        key = '%s:%d' % (f, r.get('line') or 0) if f else '(none):0'
        c = out[(key, r['type'])]
        c[0] += 1
        c[1] += r.get('memsize', 0)
        if 'generation' in r:
            c[2].add(r['generation'])
    return out, dumper_mem, tracer


def by_site(counts):
    s = collections.defaultdict(lambda: [0, 0])
    for (k, _), (n, m, _) in counts.items():
        s[k][0] += n
        s[k][1] += m
    return s


def check_one(env, d, name, prof, truth_time):
    dump = workloads.dump_path(d, name)
    tm, samples, locs = parse_raw(pprof(env, '-raw', prof))
    check(len(samples) > 0 and len(locs) > 0, '%s: go tool pprof -raw reads %d samples, %d locations'
          % (name, len(samples), len(locs)))
    check(tm is not None and tm.startswith(truth_time),
          '%s: the profile\'s time %r is %s' % (name, tm, truth_time))
    summ = hs_json('summary', '--json', dump)
    tally = hs_json('tally', '--by', 'file:line', '--sort', 'memsize', '--top', '0', '--json', dump)
    counts, dumper_mem, tracer = python_counts(dump)
    n = sum(s[0] for s in samples)
    b = sum(s[1] for s in samples)
    want_n = summ['total']['count'] - tally['excluded_dumper_objects'] - tracer[0]
    want_b = summ['total']['memsize'] - dumper_mem - tracer[1]
    check((n, b) == (want_n, want_b), '%s: totals (inuse_objects, inuse_space) %s = summary less the '
          "dumper's %s" % (name, (n, b), (want_n, want_b)))
    check((n, b) == (tally['total']['count'], tally['total']['memsize']),
          '%s: totals = tally\'s %s' % (name, tally['total']))
    got = collections.defaultdict(lambda: [0, 0])
    bad_labels = []
    for cnt, byt, lids, labels in samples:
        key = loc_key(locs[lids[0]])
        got[(key, labels.get('type'))][0] += cnt
        got[(key, labels.get('type'))][1] += byt
        need = ('class', 'type', 'gem') if key != '(none):0' else ('class', 'type')
        gens = counts.get((key, labels.get('type')), [0, 0, set()])[2]
        if (len(lids) != 1 or any(k not in labels for k in need)
                or ('generation' in labels and int(labels['generation']) not in gens)
                or (gens and 'generation' not in labels)):
            bad_labels.append((key, labels))
    want = {k: v[:2] for k, v in counts.items()}
    check(dict(got) == want, '%s: count and bytes per file:line and type = Python\'s count over the dump '
          '(%d groups)%s' % (name, len(want), '' if dict(got) == want else
                             ' -- differ: %s' % sorted(set(got.items()) ^ set((k, v) for k, v in want.items()))[:4]))
    check(not bad_labels, '%s: every sample has one location, labels class, type, gem (located) and a '
          'generation its objects have%s' % (name, ' -- %s' % bad_labels[:3] if bad_labels else ''))
    # -top reads it; -lines -top: tally --by file:line's top sites
    top = pprof(env, '-top', prof)
    check('Type: inuse_space' in top, '%s: -top reads it, default sample type inuse_space' % name)
    lines = pprof(env, '-lines', '-top', '-nodecount=12', '-nodefraction=0', '-unit=B', prof)
    rows = []
    for line in lines.splitlines():
        m = re.match(r'^\s+(\d+)B\s+\S+\s+\S+\s+\d+B\s+\S+\s+(.*)$', line)
        if m:
            rows.append((loc_key(m.group(2)) if m.group(2) != '(no allocation info)' else '(none):0',
                         int(m.group(1))))
    tk = {g['key']: g['memsize'] for g in tally['groups']}
    tops = [g['memsize'] for g in tally['groups'][:len(rows)]]
    check(len(rows) == 12 and [v for _, v in rows] == tops and all(tk.get(k) == v for k, v in rows),
          '%s: -lines -top rows = tally --by file:line\'s top 12 sites %s %s' % (name, rows[:3] if len(rows) == 12 and [v for _, v in rows] == tops else (rows, tops), [(k, v, tk.get(k)) for k, v in rows if tk.get(k) != v]))
    return counts


def main():
    if not shutil.which('go'):
        print('SKIP: go (Debian golang-go) is not installed')
        return 77
    d = workloads.ensure_set('leak_s1')
    t = workloads.truth(d)
    with tempfile.TemporaryDirectory(prefix='hs-pprof-') as tmp:
        env = go_env(tmp)
        p1, p3 = os.path.join(tmp, 'heap_1.pb.gz'), os.path.join(tmp, 'heap_3.pb.gz')
        export(workloads.dump_path(d, 'heap_1.json'), p1, '--time', '2024-05-01T12:00:00Z')
        export(workloads.dump_path(d, 'heap_3.json'), p3)
        mt = os.stat(workloads.dump_path(d, 'heap_3.json')).st_mtime
        c1 = check_one(env, d, 'heap_1.json', p1, '2024-05-01 12:00:00 +0000 UTC')
        c3 = check_one(env, d, 'heap_3.json', p3, time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(mt)))
        s1, s3 = by_site(c1), by_site(c3)
        diff = pprof(env, '-lines', '-top', '-nodecount=10000', '-nodefraction=0', '-sample_index=inuse_objects',
                     '-diff_base', p1, p3)
        delta = {}
        for line in diff.splitlines():
            m = re.match(r'^\s+(-?\d+)\s+\S+\s+\S+\s+-?\d+\s+\S+\s+(.*)$', line)
            if m:
                delta[loc_key(m.group(2))] = int(m.group(1))
        planted = collections.Counter()
        for leak in t['leaks'].values():
            for key, n in leak['planted_by_site'].items():
                planted[re.match(r'^(.*?:\d+):', key).group(1)] += n
        for site in sorted(planted):
            want = s3[site][0] - s1[site][0]
            check(delta.get(site) == want and want > 0,
                  '-diff_base heap_1 heap_3: planted site %s grows by %s (Python: %d)'
                  % (site, delta.get(site), want))
        biggest = max(planted, key=lambda s: planted[s])
        grow = max(delta.items(), key=lambda kv: kv[1])
        check(grow[0] == biggest, '-diff_base: the most growing site %s is the largest leak\'s %s'
              % (grow, biggest))
    return check.finish()


if __name__ == '__main__':
    sys.exit(main())
