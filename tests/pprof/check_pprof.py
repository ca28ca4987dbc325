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
    records in Python, and per location, (method, file:line), too (the
    name pprof shows is the method, operators like `<=>` included); every
    located sample has labels class, type, gem, and a generation that
    objects of its file:line and type have;
  * with `-lines -top`, a row is a (method, file:line): the rows are the
    top 12 of a Python count by (method, file:line) over the dump, with
    the same bytes (a line that allocates in two methods is two rows);
  * `-diff_base heap_1 heap_3`: every (method, file:line) changes by the
    difference of the Python counts of the two dumps (an object is
    attributed to its own method, whatever the dump's site order), each
    planted leak's site (the workload's truth) grows by that difference,
    and the most growing (method, file:line) is Python's most growing one.

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
            # a function without a system name: 's=0()'
            m = re.match(r'^\s+(\d+): 0x0 M=1 (.*) s=0(?:\(\))?$', line)
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


def row_key(desc):
    """A `-lines` row or location: 'method file:line' -> (method, 'file:line');
    a location without a method is named 'file:line' -> ('', 'file:line');
    '(no allocation info)' -> ('', '(none):0')."""
    if desc.startswith('(no allocation info)'):
        return ('', '(none):0')
    name, _, where = desc.rpartition(' ')
    where = where if re.search(r':\d+$', where) else where + ':0'
    return ('' if name == where else name, where)


def python_counts(path):
    """Independent reading: {(file:line, type): [count, memsize, {generations}]} of
    the app's objects (dumper's sites and Ruby's allocation tracer left out),
    the dumper's memsize, the tracer's [count, memsize], and
    {(method, file:line): [count, memsize]} of the same objects (method ''
    when the dump has none)."""
    out = collections.defaultdict(lambda: [0, 0, set()])
    by_method = collections.defaultdict(lambda: [0, 0])
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
        mc = by_method[((r.get('method') or '') if f else '', key)]
        mc[0] += 1
        mc[1] += r.get('memsize', 0)
    return out, dumper_mem, tracer, dict(by_method)


def by_site(counts):
    s = collections.defaultdict(lambda: [0, 0])
    for (k, _), (n, m, _) in counts.items():
        s[k][0] += n
        s[k][1] += m
    return s


def top_rows(text, unit):
    """`-top` rows (flat value, (method, file:line)); flat in `unit` (B or '')."""
    rows = []
    for line in text.splitlines():
        m = re.match(r'^\s+(-?\d+)%s\s+\S+\s+\S+\s+-?\d+%s\s+\S+\s+(.*)$' % (unit, unit), line)
        if m:
            rows.append((int(m.group(1)), row_key(m.group(2))))
    return rows


def check_one(env, d, name, prof, truth_time):
    dump = workloads.dump_path(d, name)
    tm, samples, locs = parse_raw(pprof(env, '-raw', prof))
    check(len(samples) > 0 and len(locs) > 0, '%s: go tool pprof -raw reads %d samples, %d locations'
          % (name, len(samples), len(locs)))
    check(tm is not None and tm.startswith(truth_time),
          '%s: the profile\'s time %r is %s' % (name, tm, truth_time))
    summ = hs_json('summary', '--json', dump)
    tally = hs_json('tally', '--by', 'file:line', '--sort', 'memsize', '--top', '0', '--json', dump)
    counts, dumper_mem, tracer, by_method = python_counts(dump)
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
    got_m = collections.defaultdict(lambda: [0, 0])
    for cnt, byt, lids, _ in samples:
        got_m[row_key(locs[lids[0]])][0] += cnt
        got_m[row_key(locs[lids[0]])][1] += byt
    diff_m = sorted(set((k, tuple(v)) for k, v in got_m.items()) ^ set((k, tuple(v)) for k, v in by_method.items()))
    check(not diff_m, '%s: count and bytes per location (method, file:line) = Python\'s count over the dump '
          '(%d)%s' % (name, len(by_method), ' -- differ: %s' % diff_m[:4] if diff_m else ''))
    check(not bad_labels, '%s: every sample has one location, labels class, type, gem (located) and a '
          'generation its objects have%s' % (name, ' -- %s' % bad_labels[:3] if bad_labels else ''))
    # -top reads it; -lines -top: the top (method, file:line) of Python's count
    top = pprof(env, '-top', prof)
    check('Type: inuse_space' in top, '%s: -top reads it, default sample type inuse_space' % name)
    rows = top_rows(pprof(env, '-lines', '-top', '-nodecount=12', '-nodefraction=0', '-unit=B', prof), 'B')
    tops = sorted((v[1] for v in by_method.values()), reverse=True)[:12]
    wrong = [(k, v, by_method.get(k, [0, 0])[1]) for v, k in rows if by_method.get(k, [0, 0])[1] != v]
    check(len(rows) == 12 and [v for v, _ in rows] == tops and not wrong,
          '%s: -lines -top rows = the top 12 (method, file:line) of Python\'s count, same bytes %s%s'
          % (name, rows[:3], ' -- differ: rows %s, Python %s, %s' % ([v for v, _ in rows], tops, wrong[:4])
             if len(rows) != 12 or [v for v, _ in rows] != tops or wrong else ''))
    return counts, by_method


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
        c1, m1 = check_one(env, d, 'heap_1.json', p1, '2024-05-01 12:00:00 +0000 UTC')
        c3, m3 = check_one(env, d, 'heap_3.json', p3, time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(mt)))
        diff = pprof(env, '-lines', '-top', '-nodecount=10000', '-nodefraction=0', '-sample_index=inuse_objects',
                     '-diff_base', p1, p3)
        delta = {}
        for v, k in top_rows(diff, ''):
            delta[k] = delta.get(k, 0) + v
        # Python's difference per (method, file:line); every one the diff shows
        # (it may also list unchanged ones) has it, and every change is shown
        pdelta = {k: m3.get(k, [0, 0])[0] - m1.get(k, [0, 0])[0] for k in set(m1) | set(m3)}
        wrong = sorted((k, v, pdelta.get(k, 0)) for k, v in delta.items() if v != pdelta.get(k, 0))
        missing = sorted(k for k, v in pdelta.items() if v and k not in delta)
        check(delta and not wrong and not missing,
              '-diff_base heap_1 heap_3: every (method, file:line) (%d) changes by the Python difference'
              '%s%s' % (len(delta), ' -- differ (key, pprof, Python): %s' % wrong[:4] if wrong else '',
                        ' -- missing: %s' % missing[:4] if missing else ''))
        sdelta = collections.Counter()
        for (_, site), v in delta.items():
            sdelta[site] += v
        s1, s3 = by_site(c1), by_site(c3)
        planted = collections.Counter()
        for leak in t['leaks'].values():
            for key, n in leak['planted_by_site'].items():
                planted[re.match(r'^(.*?:\d+):', key).group(1)] += n
        for site in sorted(planted):
            want = s3[site][0] - s1[site][0]
            check(sdelta.get(site) == want and want > 0,
                  '-diff_base heap_1 heap_3: planted site %s grows by %s (Python: %d)'
                  % (site, sdelta.get(site), want))
        grow = max(delta.items(), key=lambda kv: kv[1])
        most = max(pdelta.values())
        check(pdelta.get(grow[0]) == most and grow[1] == most,
              '-diff_base: the most growing (method, file:line) %s is Python\'s most growing, by %d (%s)'
              % (grow, most, sorted(k for k, v in pdelta.items() if v == most)))
    return check.finish()


if __name__ == '__main__':
    sys.exit(main())
