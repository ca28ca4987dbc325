"""heapscope export --format heapsnapshot, tested by reading the snapshots
back: in Python against the dumps (structure), and by memlab, a real
consumer of the V8 format (memlab).

  check_heapsnapshot.py structure
      The snapshots of our leak workload (scale 1: heap_1..3.json; scale
      0.05, gzip) and of a small dump written here with the awkward cases
      (dangling and repeated references, a class not in the dump, an
      object without class, an IMEMO, a name that is not UTF-8, a memsize
      beyond 32 bits, a method named "class", a long root category name), each compared with an
      independent reading of the dump (tests/workloads/workloads.py Dump):
      the header's counts, every object a node in dump order (type, name,
      id from the address, self size, edge count, allocation site through
      the trace tree), every resolved reference an element edge in order,
      the class an internal edge "class", each ROOT category a synthetic
      node "(NAME)" under the root holding its resolved references, each
      string once; the command line (stdout or --out, the saved index,
      usage errors, no terminal, write errors).  No npm needed.

  check_heapsnapshot.py memlab
      memlab 2.0.5 (npm, pinned by package.json / package-lock.json here,
      installed into the cache like the ruby.wasm packages, see
      tests/versions/rubies.py) on the workload's snapshots:
      (a) memlab parses them: its node count is heapscope's object count
          plus the root and one node per ROOT category, its edge count the
          references plus class edges plus the root's edges;
      (b) the retained size memlab's dominator tree gives every object
          equals `heapscope retained --json --top 0`'s, to the byte
          (tolerance 0: both compute the dominators of the same graph,
          class edges included, with the same super-root and category
          nodes; memlab leaves out only weak and shortcut edges, which the
          export has none of; the few unreachable objects a dump may
          hold (garbage made while it was written) both give to the
          root, so the objects compared are the reachable ones), and the
          top 20 holders
          are the same objects;
      (c) memlab's leak detection (findLeaksBySnapshotFilePaths on the
          exports of heap_1, heap_2, heap_3 as baseline, target, final;
          leakFilter: every object but memlab's "hidden" system nodes, see
          memlab_run.js) finds the five planted leaks: each leak's holder
          (truth.json) is on one of memlab's retainer traces, and memlab's
          candidates (in target, not in baseline, still in final, by node
          id) include every planted object but those whose address an
          object of heap_1 had (ids come from the address; computed from
          the dumps, since slot reuse varies between runs).
      Exit 77 (skipped, with the reason) when Node, npm or the registry is
      missing.

  check_heapsnapshot.py devtools
      Chrome DevTools' own heap snapshot code (the worker module of the
      DevTools front end bundled in Debian's chromium, run in headless
      Chromium through puppeteer-core, a memlab dependency; devtools_run.js)
      loads heap_3's export as the Memory panel's "Load profile" does: its
      node count and total size are heapscope's, its retained size of every
      object equals heapscope retained's (tolerance 0), its Summary classes
      (String, Array, Hash, Desk::Ticket, "(system)" for the hidden nodes,
      "Function" for classes and modules) have the count and shallow size
      of the dump's objects, and traced objects show their method, file and
      line as their allocation stack.  Exit 77 without chromium or the npm
      packages.

  check_heapsnapshot.py install
      Install the pinned memlab packages into the cache (scripts/setup.sh).

Env: HEAPSCOPE (the CLI), HEAPSCOPE_WORK (workload sets, scratch).
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'workloads'))
sys.path.insert(0, os.path.join(HERE, '..', 'versions'))
import workloads  # noqa: E402
import rubies  # noqa: E402

PACKAGES = ['@memlab/api', '@memlab/core', '@memlab/heap-analysis']
NODE_FIELDS = 7
T_HIDDEN, T_OBJECT, T_CLOSURE, T_SYNTHETIC = 0, 3, 5, 9
E_ELEMENT, E_PROPERTY, E_INTERNAL = 1, 2, 3

check = workloads.Checks()


def heapscope():
    return os.environ['HEAPSCOPE']


def scratch():
    d = os.path.join(workloads.work_dir(), 'heapsnapshot')
    os.makedirs(d, exist_ok=True)
    return d


def export(dump, out):
    r = subprocess.run([heapscope(), 'export', '--format', 'heapsnapshot', '--out', out,
                        '--no-progress', dump], capture_output=True)
    if r.returncode != 0:
        raise SystemExit('heapscope export %s failed (exit %d): %s'
                         % (dump, r.returncode, r.stderr.decode(errors='replace')))
    return out


def hs_json(*args):
    r = subprocess.run([heapscope()] + list(args) + ['--no-progress'], stdout=subprocess.PIPE)
    if r.returncode != 0:
        raise SystemExit('heapscope %s failed (exit %d)' % (' '.join(args[:2]), r.returncode))
    return json.loads(r.stdout.decode('utf-8', 'surrogateescape'))


def node_id(address):
    """The id docs/HEAPSNAPSHOT.md gives an object."""
    i = ((int(address, 16) >> 2) & 0xFFFFFFFF) | 1
    return 0xFFFFFFFF if i == 1 else i


def load(path):
    with open(path, encoding='utf-8') as f:
        return json.load(f)


# ------------------------------------------------------------------ structure

def label(dump, r):
    if r.get('type') in ('CLASS', 'MODULE'):
        return r.get('name') or r.get('real_class_name') or '<anonymous>'
    return dump.class_label(r)


def node_type(r):
    t = r.get('type')
    if t in ('CLASS', 'MODULE'):
        return T_CLOSURE
    if t in ('ICLASS', 'IMEMO', 'NODE'):
        return T_HIDDEN
    return T_OBJECT


def class_target(dump, r):
    c = dump.objects.get(r.get('class')) if 'class' in r else None
    return r['class'] if c is not None and c.get('type') in ('CLASS', 'MODULE', 'ICLASS') else None


def text(s):
    """A dump's string as the snapshot has it: bytes that are not UTF-8 as
    U+FFFD (the dump is read with surrogateescape)."""
    return s.encode('utf-8', 'surrogateescape').decode('utf-8', 'replace')


def check_structure(name, dump, snap):
    """The snapshot against an independent reading of the dump."""
    meta = snap['snapshot']['meta']
    check(meta['node_fields'] == ['type', 'name', 'id', 'self_size', 'edge_count', 'trace_node_id',
                                  'detachedness']
          and meta['edge_fields'] == ['type', 'name_or_index', 'to_node'],
          '%s: V8 node and edge fields' % name)
    nodes, edges, strings = snap['nodes'], snap['edges'], snap['strings']
    objs = list(dump.objects.items())
    cats = list(dump.roots)
    nn = 1 + len(cats) + len(objs)
    check(snap['snapshot']['node_count'] == nn == len(nodes) // NODE_FIELDS
          and len(nodes) % NODE_FIELDS == 0,
          '%s: node_count %d = root + %d categories + %d objects' % (name, nn, len(cats), len(objs)))
    check(snap['snapshot']['edge_count'] == len(edges) // 3 and len(edges) % 3 == 0,
          '%s: edge_count %d is the edges array' % (name, snap['snapshot']['edge_count']))
    check(len(set(strings)) == len(strings), '%s: each of %d strings once' % (name, len(strings)))

    # walk the nodes with their edges (grouped by node, in node order)
    ecur = 0
    out = []  # per node: [(type, name_or_index, to_node_index)]
    for n in range(len(nodes) // NODE_FIELDS):
        k = nodes[n * NODE_FIELDS + 4]
        out.append([(edges[e], edges[e + 1], edges[e + 2] // NODE_FIELDS)
                    for e in range(ecur, ecur + 3 * k, 3)])
        ecur += 3 * k
    check(ecur == len(edges), '%s: the edge counts of the nodes add up to the edges' % name)
    node = [nodes[i:i + NODE_FIELDS] for i in range(0, len(nodes), NODE_FIELDS)]

    root = node[0]
    check(root[0] == T_SYNTHETIC and strings[root[1]] == '(roots)' and root[2] == 0,
          '%s: node 0 is the synthetic root "(roots)", id 0' % name)
    base = 1 + len(cats)
    index = {a: base + i for i, (a, _) in enumerate(objs)}
    got_cats = {}
    for t, nm, to in out[0]:
        c = node[to]
        got_cats[strings[nm]] = (t, c[0], strings[c[1]], c[2] % 2,
                                 [(et, ei, x) for et, ei, x in out[to]])
    want_cats = {}
    for c in cats:
        refs = [index[a] for a in dump.roots[c] if a in index]
        want_cats[c] = (E_PROPERTY, T_SYNTHETIC, '(%s)' % c, 0,
                        [(E_ELEMENT, k, x) for k, x in enumerate(refs)])
    check(got_cats == want_cats,
          '%s: root -> %d categories (%s), each -> its resolved references in order (%d edges)'
          % (name, len(cats), ', '.join(cats), sum(len(v[4]) for v in want_cats.values())))

    bad = []
    funcs = snap['trace_function_infos']
    ff = meta['trace_function_info_fields']
    fn = {}
    for i in range(0, len(funcs), len(ff)):
        row = dict(zip(ff, funcs[i:i + len(ff)]))
        fn[row['function_id']] = row
    tree = snap['trace_tree']
    tnode = {}  # trace node id -> function info index
    if tree:
        for i in range(0, len(tree[4]), 5):
            tnode[tree[4][i]] = tree[4][i + 1]
    ids = set()
    for i, (a, r) in enumerate(objs):
        n = node[base + i]
        refs = [index[x] for x in (r.get('references') or []) if x in index]
        want_edges = [(E_ELEMENT, k, x) for k, x in enumerate(refs)]
        ct = class_target(dump, r)
        if ct:
            want_edges.append((E_INTERNAL, strings.index('class'), index[ct]))
        mem = r.get('memsize', 0)
        want = [node_type(r), text(label(dump, r)), node_id(a), min(mem, 0xFFFFFFFF), len(want_edges)]
        got = [n[0], strings[n[1]], n[2], n[3], n[4]]
        if got != want or out[base + i] != want_edges:
            bad.append((a, got, want))
        ids.add(n[2])
        # the allocation site, through the trace tree
        if 'file' in r:
            f = fn.get(tnode.get(n[5]))
            ok = f is not None and strings[f['script_name']] == text(r['file']) and \
                f['line'] == r.get('line', 0) and \
                strings[f['name']] == (text(r['method']) if r.get('method') else '(no method)')
        else:
            ok = n[5] == 0
        if not ok:
            bad.append((a, 'site', n[5]))
    check(not bad, '%s: %d objects as nodes (type, label, id, self size, edges in order, site): %s'
          % (name, len(objs), bad[:3] or 'all as the dump says'))
    check(len(ids) == len(objs) and all(i % 2 == 1 for i in ids),
          '%s: object ids odd and distinct' % name)
    check(all(n[6] == 0 for n in node),
          '%s: detachedness 0 (unknown) on every node: Ruby has no detached DOM' % name)
    return node, out


def crafted_dump(path):
    """A small dump with the awkward cases; returns what a few nodes must be."""
    A = lambda k: '0x7f00000%05x' % (k * 40)  # noqa: E731
    recs = [
        {'type': 'ROOT', 'root': 'vm', 'references': [A(1), A(9), A(1)]},  # A(9) is not in the dump
        {'type': 'ROOT', 'root': 'machine_context', 'references': [A(4)]},
        {'type': 'ROOT', 'root': 'r' * 300, 'references': [A(2)]},  # a long category name
        {'address': A(1), 'type': 'CLASS', 'class': A(2), 'name': 'Foo', 'memsize': 500,
         'references': [A(3), A(2)]},
        {'address': A(2), 'type': 'CLASS', 'memsize': 300, 'references': []},  # anonymous, no class
        {'address': A(3), 'type': 'OBJECT', 'class': A(1), 'memsize': 40,
         'references': [A(4), A(4), A(8), A(5)], 'file': 'app.rb', 'line': 12, 'method': 'class'},
        {'address': A(4), 'type': 'STRING', 'class': A(7), 'memsize': 5000000000, 'bytesize': 3},
        {'address': A(5), 'type': 'IMEMO', 'imemo_type': 'env', 'memsize': 48, 'references': [A(6)],
         'file': 'app.rb', 'line': 13},
        {'address': A(6), 'type': 'OBJECT', 'class': A(10), 'memsize': 80},
        {'address': A(10), 'type': 'MODULE', 'name': 'Caf\udce9', 'memsize': 200},
        {'address': A(11), 'type': 'ARRAY', 'memsize': 40, 'length': 0},  # no class, unreachable
    ]
    with open(path, 'w', encoding='utf-8', errors='surrogateescape') as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False) + '\n')
    return {
        A(1): (T_CLOSURE, 'Foo', 500, 3),           # 2 references + class edge
        A(2): (T_CLOSURE, '<anonymous>', 300, 0),
        A(3): (T_OBJECT, 'Foo', 40, 4),             # A(8) dangles; A(4) twice; class
        A(4): (T_OBJECT, '<unknown>', 0xFFFFFFFF, 0),  # class not in the dump
        A(5): (T_HIDDEN, '<imemo:env>', 48, 1),
        A(6): (T_OBJECT, 'Caf\ufffd', 80, 1),
        A(10): (T_CLOSURE, 'Caf\ufffd', 200, 0),
        A(11): (T_OBJECT, '<hidden>', 40, 0),
    }


def run(*args, stdout=subprocess.PIPE):
    return subprocess.run([heapscope()] + list(args), stdout=stdout, stderr=subprocess.PIPE)


def check_cli(dump):
    """The command line: stdout = --out FILE, the saved index gives the same
    bytes, usage errors, no terminal, a write error."""
    out = scratch()
    f = os.path.join(out, 'cli.heapsnapshot')
    a = run('export', '--format', 'heapsnapshot', '--no-progress', '--out', f, dump)
    b = run('export', '--format', 'heapsnapshot', '--no-progress', dump)
    with open(f, 'rb') as fh:
        data = fh.read()
    check(a.returncode == 0 and b.returncode == 0 and b.stdout == data and not b.stderr,
          'cli: standard output = --out FILE (%d bytes), nothing on stderr' % len(data))
    copy = os.path.join(out, 'indexed.json')
    with open(dump, 'rb') as src, open(copy, 'wb') as dst:
        dst.write(src.read())
    ix = run('index', '--no-progress', copy)
    c = run('export', '--format', 'heapsnapshot', '--no-progress', '-v', copy)
    check(ix.returncode == 0 and c.returncode == 0 and c.stdout == data and b'index' in c.stderr,
          'cli: from the saved index (DUMP.hsx), the same bytes: %s'
          % c.stderr.decode(errors='replace').strip())
    for args, what in ((['--json'], '--json'), (['--first-id', '2'], '--first-id'),
                       (['--order', 'name'], '--order'), ([dump], 'one DUMP')):
        r = run('export', '--format', 'heapsnapshot', *args, dump)
        check(r.returncode == 2 and what.encode() in r.stderr and not r.stdout,
              'cli: usage error (exit 2) for %s: %s' % (what, r.stderr.decode(errors='replace').splitlines()[0]))
    import pty
    master, slave = pty.openpty()
    try:
        r = run('export', '--format', 'heapsnapshot', dump, stdout=slave)
    finally:
        os.close(slave)
        os.close(master)
    check(r.returncode == 2 and b'terminal' in r.stderr,
          'cli: a terminal on standard output is refused (exit 2): %s' % r.stderr.decode(errors='replace').strip())
    r = run('export', '--format', 'heapsnapshot', '--out', '/proc/version/x', dump)
    check(r.returncode == 1 and r.stderr, 'cli: an --out it cannot write: exit 1, said: %s'
          % r.stderr.decode(errors='replace').strip())
    if os.path.exists('/dev/full'):
        r = run('export', '--format', 'heapsnapshot', '--out', '/dev/full', dump)
        check(r.returncode == 1 and b'write error' in r.stderr,
              'cli: a full disk is an error (exit 1): %s' % r.stderr.decode(errors='replace').strip())


def structure():
    out = scratch()
    sets = [('leak_s1', ['heap_1.json', 'heap_2.json', 'heap_3.json']),
            ('leak_s005_gz', ['heap_3.json'])]
    for set_name, files in sets:
        d = workloads.ensure_set(set_name)
        for f in files:
            dump = workloads.dump_path(d, f)
            snap = load(export(dump, os.path.join(out, '%s-%s.heapsnapshot' % (set_name, f))))
            check_structure('%s/%s' % (set_name, os.path.basename(dump)), workloads.Dump(dump), snap)
    check_cli(workloads.dump_path(workloads.ensure_set('leak_s1'), 'heap_1.json'))
    path = os.path.join(out, 'crafted.json')
    want = crafted_dump(path)
    snap = load(export(path, os.path.join(out, 'crafted.heapsnapshot')))
    node, _ = check_structure('crafted', workloads.Dump(path), snap)
    strings = snap['strings']
    got = {}
    for n in node:
        for a in want:
            if n[2] == node_id(a):
                got[a] = (n[0], strings[n[1]], n[3], n[4])
    check(got == want, 'crafted: the hand-computed nodes: %s' % (
        'as expected' if got == want else {a: (got.get(a), want[a]) for a in want if got.get(a) != want[a]}))
    check(snap['snapshot']['edge_count'] == 3 + 4 + (3 + 4 + 1 + 1),
          'crafted: 16 edges (3 categories, 4 resolved root references, 9 of objects)')
    check('(%s)' % ('r' * 300) in strings, 'crafted: a 300-byte category name whole')
    check(strings.count('class') == 1, 'crafted: "class" (a method name and the edge name) once')


# ------------------------------------------------------------------ memlab

def memlab_modules():
    return rubies.npm_install(HERE, 'memlab', PACKAGES, quiet=True)


def modules_or_skip(what):
    """The npm packages' node_modules, or None after saying why the test is
    skipped (what: what is then not checked)."""
    try:
        return memlab_modules()
    except rubies.Unavailable as e:
        print('SKIP: the npm packages (memlab, puppeteer-core) cannot be installed here: %s. '
              'Not checked: %s (scripts/setup.sh installs Node, npm and the packages)' % (e, what))
        return None


def node_run(nm, script, name, *args):
    """node SCRIPT OUT ARGS... with the packages on NODE_PATH; OUT's JSON."""
    out = os.path.join(scratch(), '%s.json' % name)
    r = subprocess.run(['node', '--max-old-space-size=2048', os.path.join(HERE, script), out]
                       + [str(a) for a in args], env=dict(os.environ, NODE_PATH=nm),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=scratch())
    if r.returncode != 0:
        raise SystemExit('%s %s failed (exit %d): %s'
                         % (script, name, r.returncode, r.stderr.decode(errors='replace')[-2000:]))
    return load(out)


def memlab_run(nm, *args):
    return node_run(nm, 'memlab_run.js', 'memlab-' + args[0], *args)


def check_retained(who, path, objects, rows):
    """A consumer's retained size of every object (rows: [id, size, ...])
    against heapscope retained's; the latter by id."""
    # every object, Ruby's allocation tracer too (DevTools and memlab rank it)
    ret = hs_json('retained', '--json', '--top', '0', '--keep-tracer', path)
    mine = {node_id(o['address']): o['retained']['memsize'] for o in ret['objects']}
    theirs = {row[0]: row[1] for row in rows}
    diff = [(i, mine[i], theirs.get(i)) for i in mine if theirs.get(i) != mine[i]]
    # heapscope retained lists the reachable objects; a dump may also hold a
    # few unreachable ones (garbage made while Ruby wrote it), which both
    # consumers hang under their root instead
    unreachable = ret['unreachable']['count']
    check(len(mine) == ret['reachable']['count'] and len(mine) + unreachable == objects
          and not diff,
          '%s\'s retained size of each of the %d reachable objects (%d unreachable) = heapscope '
          'retained\'s (tolerance 0): %s'
          % (who, len(mine), unreachable,
             '%d differ, e.g. %s' % (len(diff), diff[:5]) if diff else 'all equal'))
    return ret, mine, theirs


def memlab():
    nm = modules_or_skip('memlab on heapscope\'s heap snapshots')
    if nm is None:
        return 77
    d = workloads.ensure_set('leak_s1')
    t = workloads.truth(d)
    dumps = [workloads.dump_path(d, s['file']) for s in t['snapshots']]
    snaps = [export(p, os.path.join(scratch(), 'memlab-heap_%d.heapsnapshot' % (i + 1)))
             for i, p in enumerate(dumps)]

    # (a) memlab parses the export; counts
    g = memlab_run(nm, 'graph', snaps[2])
    summ = hs_json('summary', '--json', dumps[2])
    ncat = len(summ['roots'])
    objects = summ['total']['count']
    dump = workloads.Dump(dumps[2])
    class_edges = sum(1 for r in dump.objects.values() if class_target(dump, r))
    root_refs = sum(len([a for a in refs if a in dump.objects]) for refs in dump.roots.values())
    check(g['nodes'] == objects + 1 + ncat,
          'memlab parses heap_3: %d nodes = %d objects + the root + %d categories'
          % (g['nodes'], objects, ncat))
    check(g['edges'] == summ['references'] + class_edges + ncat + root_refs,
          'memlab: %d edges = %d references + %d class edges + %d root edges + %d category edges'
          % (g['edges'], summ['references'], class_edges, root_refs, ncat))
    check(g['root']['id'] == 0 and g['root']['name'] == '(roots)'
          and g['root']['retained'] == summ['total']['memsize'],
          'memlab: the root retains the whole heap, %d bytes' % summ['total']['memsize'])

    # (b) retained sizes, every object, against heapscope retained
    ret, mine, theirs = check_retained('memlab', dumps[2], objects, g['retained'])
    top_mine = [node_id(o['address']) for o in ret['objects'][:20]]
    objs = sorted((row for row in g['retained'] if row[4] != 'synthetic'), key=lambda r: -r[1])
    top_theirs = [row[0] for row in objs[:20]]
    sizes = [mine[i] for i in top_mine]
    # ties in retained size may come in either order
    check(sorted(top_mine) == sorted(top_theirs) or
          [theirs[i] for i in top_theirs] == sizes,
          'memlab\'s top 20 holders are heapscope retained\'s top 20 (%s ... bytes)'
          % ', '.join(str(s) for s in sizes[:5]))

    # (c) leak detection on heap_1, heap_2, heap_3
    lk = memlab_run(nm, 'leaks', snaps[0], snaps[1], snaps[2], os.path.join(scratch(), 'memlab-work'))
    on_traces = set(i for p in lk['traces'] for i in p)
    cands = set(lk['candidates'])
    # memlab knows an object by its node id, which comes from the address
    # alone: a planted object at an address that another (since freed)
    # object had in the baseline dump looks old to it, and is no candidate.
    # How many depends on Ruby's reuse of slots in that run, so the expected
    # misses are computed from the dumps: exactly the planted objects whose
    # address is in heap_1 (heapscope's identity also uses the generation)
    base = workloads.Dump(dumps[0]).objects
    for leak, info in sorted(t['leaks'].items()):
        h = info['holder']
        check(node_id(h['address']) in on_traces,
              'memlab finds the leak %s: its holder %s (%s) is on one of its %d retainer traces'
              % (leak, h['address'], h['expr'], len(lk['traces'])))
        planted = [o[0] for o in info['objects']]
        missed = sorted(a for a in planted if node_id(a) not in cands)
        reused = sorted(a for a in planted if a in base)
        check(missed == reused,
              'memlab\'s candidates hold the %d planted objects of %s but the %d whose address '
              'an object of heap_1 had (%s)%s'
              % (len(planted), leak, len(reused), ', '.join(reused[:3]) or 'none',
                 '' if missed == reused else ': missed %s, expected %s' % (missed[:5], reused[:5])))
    ident = workloads.identity_diff(*[workloads.Dump(p) for p in dumps])
    print('     memlab: %d candidates (by id from the address), %d in the 3-dump identity diff '
          '(address and generation), %d traces, %d planted objects'
          % (len(cands), len(ident), len(lk['traces']), t['leaked']['count']))
    check(len(lk['traces']) >= len(t['leaks']), 'memlab: at least one trace per planted leak')
    return check.finish()


def chromium():
    return os.environ.get('CHROMIUM') or '/usr/bin/chromium'


def devtools():
    if not os.access(chromium(), os.X_OK):
        print('SKIP: no %s (scripts/setup.sh installs Debian\'s chromium). Not checked: Chrome '
              'DevTools\' heap snapshot loader on heapscope\'s export' % chromium())
        return 77
    nm = modules_or_skip('Chrome DevTools\' heap snapshot loader on heapscope\'s export')
    if nm is None:
        return 77
    d = workloads.ensure_set('leak_s1')
    path = workloads.dump_path(d, 'heap_3.json')
    snap_file = export(path, os.path.join(scratch(), 'devtools-heap_3.heapsnapshot'))
    dump = workloads.Dump(path)
    traced = [(a, r) for a, r in dump.objects.items() if r.get('file') and r.get('method')][:20]
    dt = node_run(nm, 'devtools_run.js', 'devtools', snap_file, *[node_id(a) for a, _ in traced])
    summ = hs_json('summary', '--json', path)
    check(not dt['page_errors'], 'DevTools: no error in the page: %s' % (dt['page_errors'] or 'none'))
    check(dt['nodes'] == summ['total']['count'] + 1 + len(summ['roots'])
          and dt['total'] == summ['total']['memsize'],
          'DevTools loads heap_3: %d nodes, total size %d = heapscope\'s %d bytes'
          % (dt['nodes'], dt['total'], summ['total']['memsize']))
    check_retained('DevTools', path, summ['total']['count'], dt['retained'])
    want = {}
    for r in dump.objects.values():
        t = node_type(r)
        k = {T_HIDDEN: '(system)', T_CLOSURE: 'Function'}.get(t) or text(label(dump, r))
        c = want.setdefault(k, [0, 0])
        c[0] += 1
        c[1] += min(r.get('memsize', 0), 0xFFFFFFFF)
    for k in ('String', 'Array', 'Hash', 'Desk::Ticket', '(system)', 'Function'):
        got = (dt['classes'].get(k) or [None, None])[:2]
        check(got == want.get(k), 'DevTools Summary: %s x%s, %s bytes shallow (the dump: %s)'
              % (k, got[0], got[1], want.get(k)))
    bad = []
    for a, r in traced:
        st = dt['stacks'].get(str(node_id(a)))
        top = st[0] if st else None
        if not top or (top['functionName'], top['scriptName'], top['line']) != \
                (text(r['method']), text(r['file']), r.get('line', 0)):
            bad.append((a, top))
    check(traced and not bad, 'DevTools: the allocation stack of %d traced objects is their method, '
          'file and line: %s' % (len(traced), bad[:3] or 'all'))
    return check.finish()


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ('structure', 'memlab', 'devtools', 'install'):
        raise SystemExit('usage: check_heapsnapshot.py structure|memlab|devtools|install')
    if sys.argv[1] == 'devtools':
        return devtools()
    if sys.argv[1] == 'install':
        try:
            print(memlab_modules())
        except rubies.Unavailable as e:
            print('memlab not installed: %s' % e, file=sys.stderr)
        return 0
    if sys.argv[1] == 'memlab':
        return memlab()
    structure()
    return check.finish()


if __name__ == '__main__':
    sys.exit(main())
