"""Our own workloads (examples/workloads) for the tests, and an independent
reading of the dumps they write.

  ensure(name, kind, args)  generate a set once into $HEAPSCOPE_WORK/workloads/NAME
                            (kind 'leak' = leak_series.rb, 'timeline' =
                            timeline_series.rb); regenerated when the
                            arguments or the workload sources change;
                            concurrent tests wait for one another
  records(path)             the JSON records of a dump (plain or gzip)
  Dump(path)                objects, roots and references of a small dump
  tracer_objects(path)      Ruby's allocation tracer in a dump: [count, memsize]
  dumper_objects(...)       what ObjectSpace.dump_all itself allocated and
                            met while it walked the heap: the truth's counts
                            (taken from ObjectSpace just before the dump)
                            plus these are the dump's objects

Python 3 standard library only.  Nothing here calls heapscope: these are the
expectations heapscope is compared with.
"""
import collections
import fcntl
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKLOADS = os.path.join(REPO, 'examples', 'workloads')
SCRIPTS = {'leak': 'leak_series.rb', 'timeline': 'timeline_series.rb'}
NOT_OBJECTS = ('ROOT', 'SHAPE', 'NONE')


def work_dir():
    return os.environ.get('HEAPSCOPE_WORK') or os.path.join(tempfile.gettempdir(), 'heapscope-work')


def sources_digest():
    h = hashlib.sha256()
    for top, dirs, files in sorted(os.walk(WORKLOADS)):
        dirs.sort()
        for f in sorted(files):
            if f.endswith('.rb'):
                p = os.path.join(top, f)
                h.update(os.path.relpath(p, WORKLOADS).encode() + b'\0')
                with open(p, 'rb') as fh:
                    h.update(fh.read())
    return h.hexdigest()


def ensure(name, kind, args, ruby_flags=('--disable-gems',), work=None):
    """The directory of workload set NAME (under WORK/workloads, WORK
    defaulting to $HEAPSCOPE_WORK), generated if needed."""
    base = os.path.join(work or work_dir(), 'workloads')
    os.makedirs(base, exist_ok=True)
    d = os.path.join(base, name)
    key = json.dumps([kind, list(args), list(ruby_flags), sources_digest()])
    stamp = os.path.join(d, '.generated')
    with open(os.path.join(base, name + '.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(stamp) as f:
                if f.read() == key:
                    return d
        except OSError:
            pass
        shutil.rmtree(d, ignore_errors=True)
        cmd = ['ruby'] + list(ruby_flags) + [os.path.join(WORKLOADS, SCRIPTS[kind]), '--out', d] + list(args)
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print('generated %s: %s' % (name, r.stdout.strip()), file=sys.stderr)
        if r.returncode != 0:
            raise SystemExit('workload failed (exit %d): %s' % (r.returncode, ' '.join(cmd)))
        with open(stamp, 'w') as f:
            f.write(key)
    return d


def truth(d):
    with open(os.path.join(d, 'truth.json'), encoding='utf-8') as f:
        return json.load(f)


def dump_path(d, name):
    """DIR/name or DIR/name.gz, whichever the set has."""
    p = os.path.join(d, name)
    return p if os.path.exists(p) else p + '.gz'


def records(path):
    """Every record of a dump, in order (lines that are not JSON raise)."""
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rb') as f:
        for line in f:
            yield json.loads(line.decode('utf-8', 'surrogateescape'))


def type_counts(path):
    """{type: [count, memsize]} over the dump's objects."""
    out = collections.defaultdict(lambda: [0, 0])
    for r in records(path):
        if r.get('type') not in NOT_OBJECTS:
            c = out[r['type']]
            c[0] += 1
            c[1] += r.get('memsize', 0)
    return dict(out)


def dumper_objects(path, dumper_file, gc_count):
    """{type: [count, memsize]} of the objects the dumper allocated during
    this dump (its file, the dump's generation) that are in it."""
    out = collections.defaultdict(lambda: [0, 0])
    for r in records(path):
        if (r.get('type') not in NOT_OBJECTS and r.get('file') == dumper_file
                and r.get('generation') == gc_count):
            c = out[r['type']]
            c[0] += 1
            c[1] += r.get('memsize', 0)
    return dict(out)


def dumper_site_objects(path):
    """{type: [count, memsize]} of the objects whose allocation site is the
    dumper's by heapscope's documented rule (man page, "The dumper's
    objects"): method dump_all, or a file objspace.rb, or the heapscope
    gem's snapshot code.  They include what earlier dumps allocated."""
    own = ('/heapscope/snapshot.rb', '/heapscope/fork.rb', '/heapscope/auto.rb')
    out = collections.defaultdict(lambda: [0, 0])
    for r in records(path):
        if r.get('type') in NOT_OBJECTS:
            continue
        f = r.get('file') or ''
        if (r.get('method') == 'dump_all' or os.path.basename(f) == 'objspace.rb'
                or f.endswith(own)):
            c = out[r['type']]
            c[0] += 1
            c[1] += r.get('memsize', 0)
    return dict(out)


def tracer_objects(path):
    """[count, memsize] of Ruby's allocation tracer in a dump: the DATA
    records of struct ObjectTracing/allocation_info_tracer (where
    ObjectSpace.trace_object_allocations keeps its table).  heapscope
    leaves it out by default; the workloads always trace."""
    n = [0, 0]
    for r in records(path):
        if r.get('type') == 'DATA' and r.get('struct') == 'ObjectTracing/allocation_info_tracer':
            n[0] += 1
            n[1] += r.get('memsize', 0)
    return n


def expected_types(d, t, snap):
    """What the dump of snapshot `snap` must hold per type, {type: [count,
    memsize]}: the truth's ObjectSpace counts plus the dumper's objects."""
    path = dump_path(d, snap['file'])
    exp = {k: [v, snap['memsize_by_type'].get(k, 0)] for k, v in snap['by_type'].items()}
    for k, (n, m) in dumper_objects(path, t['dumper_file'], snap['gc_count']).items():
        e = exp.setdefault(k, [0, 0])
        e[0] += n
        e[1] += m
    return exp


class Dump:
    """Objects (address -> record), root categories and references of a dump."""

    def __init__(self, path):
        self.path = path
        self.objects = {}
        self.roots = {}
        for r in records(path):
            if r.get('type') == 'ROOT':
                self.roots.setdefault(r['root'], []).extend(r.get('references') or [])
            elif r.get('type') not in NOT_OBJECTS and 'address' in r:
                self.objects[r['address']] = r

    def identities(self):
        return {(a, r.get('generation')) for a, r in self.objects.items()}

    def class_label(self, r):
        """The class label of docs/DESIGN.md "Class label"."""
        if r.get('type') == 'IMEMO':
            return '<imemo:%s>' % r.get('imemo_type')
        if r.get('type') == 'DATA' and r.get('struct') == 'ObjectTracing/allocation_info_tracer':
            return '<allocation tracer>'
        if 'class' not in r:
            return '<hidden>'
        c = self.objects.get(r['class'])
        if c is None or c.get('type') not in ('CLASS', 'MODULE', 'ICLASS'):
            return '<unknown>'
        return c.get('name') or c.get('real_class_name') or '<anonymous>'

    def step_ok(self, frm, step):
        """Does `frm` (an address, or a list of root references) reach the
        truth's root-path step `step` as the truth says?  Directly (one
        reference), or, for a step the workload found indirect ("direct":
        false: Ruby gave the object in between no handle), through one
        internal object: a hidden one (no class, e.g. the VM's pinned-object
        list on 3.4+) or an IMEMO; an IMEMO fields object (4.0+) must belong
        to `frm` (its "class" is its owner)."""
        refs = frm if isinstance(frm, list) else (self.objects.get(frm) or {}).get('references') or []
        if step.get('direct', True):
            return step['address'] in refs
        for x in refs:
            r = self.objects.get(x)
            if r is None or step['address'] not in (r.get('references') or []):
                continue
            if r.get('imemo_type') == 'fields':
                if not isinstance(frm, list) and r.get('class') == frm:
                    return True
            elif r.get('type') == 'IMEMO' or 'class' not in r:
                return True
        return False

    def path_lengths(self, targets):
        """Length (objects after the root) of a shortest path from a ROOT
        to each target, over `references` only (no object -> class edges):
        from the precise roots first, from machine_context (conservative)
        only for what they do not reach, as heapscope's paths do."""
        want = set(targets)
        depth = {}
        for conservative in (False, True):
            frontier = []
            for cat, refs in self.roots.items():
                if (cat == 'machine_context') != conservative:
                    continue
                for a in refs:
                    if a in self.objects and a not in depth:
                        depth[a] = 1
                        frontier.append(a)
            while frontier and not want <= depth.keys():
                nxt = []
                for a in frontier:
                    for b in self.objects[a].get('references') or []:
                        if b in self.objects and b not in depth:
                            depth[b] = depth[a] + 1
                            nxt.append(b)
                frontier = nxt
        return {a: depth.get(a) for a in targets}


class Checks:
    """check(cond, what) prints ok/FAIL and counts; finish() -> exit status."""

    def __init__(self):
        self.failed = []
        self.passed = 0

    def __call__(self, cond, what):
        print(('ok   ' if cond else 'FAIL ') + what)
        if cond:
            self.passed += 1
        else:
            self.failed.append(what)
        return cond

    def finish(self):
        print('%d passed, %d failed' % (self.passed, len(self.failed)))
        for f in self.failed:
            print('  failed: ' + f)
        return 1 if self.failed else 0


def path_length(root_path):
    """Objects on a truth root path after the root, counting one internal
    object for each indirect step (Dump.step_ok)."""
    return sum(1 + (not e.get('direct', True)) for e in root_path[1:])


def identity_diff(d1, d2, d3):
    """Addresses of the objects of d3 that d2 holds with the same
    generation and d1 does not: the leak of a 3-dump diff by identity."""
    i1, i2 = d1.identities(), d2.identities()
    return {a for a, r in d3.objects.items()
            if (a, r.get('generation')) in i2 and (a, r.get('generation')) not in i1}


# The tests' standard sets: name -> (kind, arguments, ruby flags).  The
# scale-3 leak set runs with rubygems loaded (files under
# /usr/lib/ruby/vendor_ruby, <internal:...>), the others without.
SETS = {
    'leak_s1': ('leak', ['--scale', '1', '--seed', '42'], ['--disable-gems']),
    'leak_s005_gz': ('leak', ['--scale', '0.05', '--seed', '43', '--gzip'], ['--disable-gems']),
    'leak_s3_gz': ('leak', ['--scale', '3', '--seed', '44', '--gzip'], []),
    'tl_s1': ('timeline', ['--steps', '10', '--scale', '1'], ['--disable-gems']),
}


def ensure_set(name, work=None):
    kind, args, flags = SETS[name]
    return ensure(name, kind, args, flags, work)


if __name__ == '__main__':
    # workloads.py NAME...: generate the standard sets, print their directories
    for n in sys.argv[1:]:
        if n not in SETS:
            raise SystemExit('usage: workloads.py {%s}...' % ','.join(SETS))
        d = ensure_set(n)
        print(d)
