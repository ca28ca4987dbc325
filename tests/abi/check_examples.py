#!/usr/bin/env python3
"""Run a libheapscope consumer on real dumps and assert its output against
the heapscope CLI (`tally --json`, `diff --json`, `summary --json`).

usage:
  check_examples.py python   --lib SO --example examples/ffi/python_ctypes.py
  check_examples.py ruby     --lib SO --example examples/ffi/ruby_ffi.rb
  check_examples.py consumer --build-root DIR --example tests/abi/consumer/consumer.c
                             [--meson PATH]
  check_examples.py c-report --example BUILD/examples/write_report

The FFI examples are also run with --json: the library's JSON documents,
written through a write callback (hscope_tally_write, hscope_diff_write),
must be byte for byte what `heapscope tally --json --keep-dumper --keep-tracer` and
`heapscope diff --json` print for the same dumps and options.  Both FFI
examples (ctypes and ruby-ffi) are also run with --timeline on a series with one planted growing
site (timeline_series.rb): its JSON, written by hscope_timeline_write
through the sink, must be the bytes of `heapscope timeline --json`, and
say that site is growing, with the counts the workload measured.  c-html
runs examples/c/html_report.c: the page it writes through its sink is
`heapscope report`'s (but for the time it was generated) and its JSON tally
`heapscope tally --json`'s, on one dump and on three.  c-report
runs examples/c/write_report.c, whose sink writes the JSON tally and the
text summary: the same bytes as `heapscope tally --json` and `heapscope
summary` (but for the summary's load figures, measured at each load).

Common: --cli PATH (default $HEAPSCOPE), --work DIR ($HEAPSCOPE_WORK, where
generated dumps are cached), --corpus DIR ($HEAPSCOPE_CORPUS, optional).

The dumps: our leak workload (examples/workloads/leak_series.rb --scale 1
--seed 42); with the shared corpus also its external dump of another Ruby
(heapy_my_dump_1.json).

`consumer` installs the build into a temporary DESTDIR (`meson install
--destdir`), compiles the program out of tree with `pkg-config --cflags
--libs heapscope` (-std=c11 -Wall -Wextra -Wpedantic -Werror) and runs it
against the installed library, checking that the binary asks for the
versioned symbols (HEAPSCOPE_x.y) and that the loader picks the installed
copy.

All three consumers print the same format:
  libheapscope VERSION ...
  tally of PATH by KEY: N objects, M bytes in G groups
       count       memsize  key
  ...rows...
  <blank>
  [columns: ... equal to the tally]            (FFI examples, KEY = type)
  [diff PATHS by KEY: N leaked objects, M bytes in G groups; E dumper
   objects left out, R reused addresses; snapshots S1 S2 [S3]]
  [warning: ...]                                  (one line per warning)
  [rows, blank]
"""
import argparse
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'workloads'))
import workloads  # noqa: E402

ROW = re.compile(r'^\s*(\d+)\s+(\d+)  (.*)$')
TALLY = re.compile(r'^tally of (.*) by (\S+): (\d+) objects, (\d+) bytes in (\d+) groups$')
DIFF = re.compile(r'^diff (.*) by (\S+): (\d+) leaked objects, (\d+) bytes in (\d+) groups; '
                  r'(\d+) dumper objects left out, (\d+) reused addresses; snapshots ([\d ]+)$')


class Failure(Exception):
    pass


def run(cmd, env=None, check=True):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if check and p.returncode != 0:
        raise Failure('command failed (exit %d): %s\n%s%s' % (
            p.returncode, ' '.join(shlex.quote(c) for c in cmd),
            p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')))
    return p


def cli_json(cli, args):
    out = run([cli] + args + ['--json', '--no-progress']).stdout
    return json.loads(out.decode('utf-8', 'surrogateescape'))


def ensure_dumps(work):
    """heap_{1,2,3}.json of our leak workload at scale 1, seed 42 (cached)."""
    d = workloads.ensure_set('leak_s1', work)
    return [os.path.join(d, 'heap_%d.json' % i) for i in (1, 2, 3)]


def parse(out):
    """{'version', 'tally': {...}, 'columns': str|None, 'diff': {...}|None}."""
    lines = out.decode('utf-8', 'surrogateescape').split('\n')
    res = {'version': None, 'tally': None, 'columns': None, 'diff': None}
    i = 0

    def rows_from(i):
        if i >= len(lines) or lines[i].split() != ['count', 'memsize', 'key']:
            raise Failure('expected the "count memsize key" header at line %d: %r'
                          % (i + 1, lines[i] if i < len(lines) else None))
        i += 1
        rows = []
        while i < len(lines) and lines[i] != '':
            m = ROW.match(lines[i])
            if not m:
                raise Failure('bad row at line %d: %r' % (i + 1, lines[i]))
            rows.append({'key': m.group(3), 'count': int(m.group(1)),
                         'memsize': int(m.group(2))})
            i += 1
        return rows, i + 1

    while i < len(lines):
        line = lines[i]
        m = TALLY.match(line)
        d = DIFF.match(line)
        if line.startswith('libheapscope '):
            res['version'] = line.split()[1]
            i += 1
        elif m:
            rows, i = rows_from(i + 1)
            res['tally'] = {'path': m.group(1), 'by': m.group(2), 'objects': int(m.group(3)),
                            'memsize': int(m.group(4)), 'groups': int(m.group(5)),
                            'rows': rows}
        elif d:
            i += 1
            warnings = []
            while i < len(lines) and lines[i].startswith('warning: '):
                warnings.append(lines[i][len('warning: '):])
                i += 1
            rows, i = rows_from(i)
            res['diff'] = {'by': d.group(2), 'count': int(d.group(3)),
                           'memsize': int(d.group(4)), 'groups': int(d.group(5)),
                           'excluded': int(d.group(6)), 'reused': int(d.group(7)),
                           'snapshots': [int(x) for x in d.group(8).split()],
                           'warnings': warnings, 'rows': rows}
        elif line.startswith('columns: '):
            res['columns'] = line
            i += 1
        elif line == '':
            i += 1
        else:
            raise Failure('unexpected output line %d: %r' % (i + 1, line))
    return res


def expect(cond, msg, problems):
    if not cond:
        problems.append(msg)


def compare_tally(cli, dump, key, top, got, problems):
    # the examples tally every object (the library's default); the CLI
    # leaves the dumper's own and the allocation tracer out unless --keep-dumper --keep-tracer
    want = cli_json(cli, ['tally', '--keep-dumper', '--keep-tracer', '--by', key, '--top', str(top), dump])
    summ = cli_json(cli, ['summary', dump])
    expect(got is not None, 'no tally printed', problems)
    if got is None:
        return
    expect(got['by'] == key, 'tally key %r, wanted %r' % (got['by'], key), problems)
    expect(got['groups'] == want['group_count'],
           'tally groups %d, CLI says %d' % (got['groups'], want['group_count']), problems)
    total = summ['total']
    expect((got['objects'], got['memsize']) == (total['count'], total['memsize']),
           'tally totals %d objects %d bytes, CLI summary says %d / %d'
           % (got['objects'], got['memsize'], total['count'], total['memsize']),
           problems)
    expect(got['rows'] == want['groups'],
           'tally rows differ from `heapscope tally --json`:\n  got  %s\n  want %s'
           % (got['rows'][:5], want['groups'][:5]), problems)
    return summ


def compare_diff(cli, dumps, key, top, got, problems):
    want = cli_json(cli, ['diff', '--by', key, '--top', str(top)] + dumps)
    expect(got is not None, 'no diff printed', problems)
    if got is None:
        return
    lk = want['leaked']
    pairs = [('count', lk['count']), ('memsize', lk['memsize']),
             ('groups', want['group_count']), ('excluded', want['excluded_dumper_objects']),
             ('reused', want['reused_addresses']),
             ('snapshots', [d['objects'] for d in want['dumps']]),
             ('rows', want['groups']), ('by', key),
             ('warnings', [w['message'] for w in want['warnings']])]
    for name, w in pairs:
        expect(got[name] == w, 'diff %s: got %r, `heapscope diff --json` says %r'
               % (name, got[name], w), problems)
    # nothing leaked means no group and no row, whatever the CLI says
    expect(got['count'] > 0 or (got['groups'] == 0 and got['rows'] == []),
           'diff of %d leaked objects printed %d groups, %d rows'
           % (got['count'], got['groups'], len(got['rows'])), problems)


def check_case(name, tool, env, cli, args, dumps, key, diff_key, top, need_columns):
    cmd = tool + args + dumps
    p = run(cmd, env=env, check=False)
    problems = []
    if p.returncode != 0:
        raise Failure('%s exited %d\n%s%s' % (' '.join(cmd), p.returncode,
                                              p.stdout.decode(errors='replace'),
                                              p.stderr.decode(errors='replace')))
    res = parse(p.stdout)
    summ = compare_tally(cli, dumps[-1], key, top, res['tally'], problems)
    if summ:
        expect(res['version'] == summ['heapscope_version'],
               'library version %r, CLI %r' % (res['version'], summ['heapscope_version']),
               problems)
    if need_columns:
        expect(res['columns'] is not None and 'equal to the tally' in res['columns'],
               'no successful bulk-column check line: %r' % res['columns'], problems)
    if len(dumps) > 1:
        compare_diff(cli, dumps, diff_key, top, res['diff'], problems)
    else:
        expect(res['diff'] is None, 'a diff printed for one dump', problems)
    label = '%s %s' % (name, ' '.join(args + [os.path.basename(d) for d in dumps]))
    if problems:
        raise Failure('%s:\n  %s' % (label, '\n  '.join(problems)))
    t = res['tally']
    extra = ''
    if res['diff']:
        extra = '; diff %d leaked in %d groups' % (res['diff']['count'], res['diff']['groups'])
    print('ok: %s: tally %d rows%s' % (label, len(t['rows']), extra))
    return res


def cli_bytes(cli, args):
    """stdout of the CLI, 100 columns wide, no saved index, no progress."""
    env = dict(os.environ, COLUMNS='100')
    return run([cli, args[0], '--no-progress', '--no-index'] + args[1:], env=env).stdout


def check_json(name, tool, env, cli, dumps, key, diff_key, top):
    """--json: the library's documents through the sink = the CLI's bytes."""
    p = run(tool + ['--json', '--by', key, '--diff-by', diff_key, '--top', str(top)] + dumps,
            env=env, check=False)
    if p.returncode != 0:
        raise Failure('%s --json exited %d\n%s' % (name, p.returncode,
                                                   p.stderr.decode(errors='replace')))
    docs = p.stdout.split(b'\n')
    if docs[-1] != b'':
        raise Failure('%s --json: output does not end with a newline' % name)
    want = [cli_bytes(cli, ['tally', '--json', '--keep-dumper', '--keep-tracer', '--by', key, '--top', str(top),
                            dumps[-1]])]
    if len(dumps) > 1:
        want.append(cli_bytes(cli, ['diff', '--json', '--by', diff_key, '--top', str(top)] + dumps))
    got = [d + b'\n' for d in docs[:-1]]
    label = '%s --json %s' % (name, ' '.join(os.path.basename(d) for d in dumps))
    if len(got) != len(want):
        raise Failure('%s: %d documents, wanted %d' % (label, len(got), len(want)))
    for g, w, what in zip(got, want, ['tally', 'diff']):
        if g != w:
            raise Failure('%s: the %s document differs from `heapscope %s --json`:\n  got  %s\n'
                          '  want %s' % (label, what, what, g[:300], w[:300]))
        json.loads(g.decode('utf-8', 'surrogateescape'))
    print('ok: %s: %s equal to the CLI\'s bytes (%d bytes)'
          % (label, ' and '.join(['tally', 'diff'][:len(got)]), sum(len(g) for g in got)))


def check_timeline(name, tool, env, cli, work):
    """--timeline: the library's timeline JSON through the sink = the CLI's
    bytes; the planted site growing with the workload's counts."""
    d = workloads.ensure_set('tl_s1', work)
    truth = workloads.truth(d)
    steps = sorted(glob.glob(os.path.join(d, 'step_*.json')))
    site = '%s:String' % truth['growing']['site']
    for args, cli_args in ((['--top', '0'], ['--top', '0']),
                           ([], []),
                           (['--by', 'type', '--top', '5'], ['--by', 'type', '--top', '5'])):
        # reversed: the library puts them in time order
        p = run(tool + ['--timeline'] + args + steps[::-1], env=env, check=False)
        if p.returncode != 0:
            raise Failure('%s --timeline exited %d\n%s' % (name, p.returncode,
                                                          p.stderr.decode(errors='replace')))
        want = cli_bytes(cli, ['timeline', '--json'] + cli_args + steps[::-1])
        if p.stdout != want:
            raise Failure('%s --timeline %s: the JSON differs from `heapscope timeline --json`:\n'
                          '  got  %s\n  want %s' % (name, ' '.join(args), p.stdout[:300], want[:300]))
        doc = json.loads(p.stdout.decode('utf-8', 'surrogateescape'))
        if [x['path'] for x in doc['dumps']] != steps:
            raise Failure('%s --timeline: dumps not in time order: %r' % (name, doc['dumps']))
        if doc['by'] != 'file:line:class':
            continue
        grew = [g for g in doc['groups'] if g['growing']]
        if not grew or grew[0]['key'] != site or grew[0]['count'] != truth['growing']['count_at_step']:
            raise Failure('%s --timeline: the planted site %s with counts %r is not the first '
                          'growing group: %r' % (name, site, truth['growing']['count_at_step'],
                                                 [(g['key'], g['count']) for g in grew[:3]]))
        said = 'growing: %s, count %s' % (site, ' '.join(map(str, truth['growing']['count_at_step'])))
        if said not in p.stderr.decode(errors='replace').split('\n'):
            raise Failure('%s --timeline: the accessors did not say %r: %r' % (name, said, p.stderr))
    print('ok: %s --timeline on %d steps: equal to `heapscope timeline --json`; %s growing, '
          'count %s' % (name, len(steps), os.path.basename(site),
                        truth['growing']['count_at_step']))


LOAD_LINE = re.compile(rb'^  load .*\n', re.M)


def check_c_report(example, cli, dump):
    """examples/c/write_report: JSON tally, then the text summary."""
    out = run([example, dump]).stdout
    first, _, rest = out.partition(b'\n')
    want = cli_bytes(cli, ['tally', '--json', dump])
    if first + b'\n' != want:
        raise Failure('write_report %s: the JSON tally differs from `heapscope tally --json`:\n'
                      '  got  %s\n  want %s' % (dump, first[:300], want[:300]))
    want = cli_bytes(cli, ['summary', dump])
    if not LOAD_LINE.search(rest) or LOAD_LINE.sub(b'', rest) != LOAD_LINE.sub(b'', want):
        raise Failure('write_report %s: the summary differs from `heapscope summary`:\n%s\n---\n%s'
                      % (dump, rest.decode(errors='replace'), want.decode(errors='replace')))
    print('ok: write_report %s: JSON tally and text summary equal to the CLI\'s bytes'
          % os.path.basename(dump))


GENERATED = re.compile(rb'generated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC')


def check_c_html(example, cli, dumps, work):
    """examples/c/html_report: the page = `heapscope report`'s (but for the
    time it was generated), the JSON tally = `heapscope tally --json`."""
    for ds in ([dumps[2]], dumps):
        out = os.path.join(work, 'html_report.html')
        tally = run([example, out] + ds).stdout
        page = open(out, 'rb').read()
        want = cli_bytes(cli, ['report', '--out', '-'] + ds)
        if GENERATED.sub(b'', page) != GENERATED.sub(b'', want) or not GENERATED.search(page):
            raise Failure('html_report %s: the page differs from `heapscope report` (%d vs %d '
                          'bytes)' % (' '.join(ds), len(page), len(want)))
        for sec in (b'summary', b'sites', b'retainers', b'dominators', b'waste') + (
                (b'diff', b'suspects', b'timeline') if len(ds) > 1 else ()):
            if b'<section id="' + sec + b'">' not in page:
                raise Failure('html_report %s: no %s section' % (' '.join(ds), sec.decode()))
        want = cli_bytes(cli, ['tally', '--json', ds[-1]])
        if tally != want:
            raise Failure('html_report %s: the JSON tally differs from `heapscope tally --json`'
                          ':\n  got  %s\n  want %s' % (ds[-1], tally[:300], want[:300]))
        print('ok: html_report on %d dump(s): the page equals `heapscope report`\'s, the JSON '
              'tally `heapscope tally --json`\'s' % len(ds))


def check_error(tool, env):
    missing = '/nonexistent-heapscope-dir/missing.json'
    p = run(tool + [missing], env=env, check=False)
    err = p.stderr.decode(errors='replace')
    # "PATH: HSCOPE_ERR_IO: <the library's message, which names the file>":
    # the message buffer is read at the right offset of hscope_error.
    if p.returncode != 1 or not re.search(r'HSCOPE_ERR_IO: .*' + re.escape(missing), err):
        raise Failure('error path: wanted exit 1 and "HSCOPE_ERR_IO: <message naming %s>" '
                      'on stderr, got exit %d, stderr %r' % (missing, p.returncode, err))
    print('ok: error path: %s' % err.strip())


def build_consumer(a, tmp):
    """Install to a DESTDIR, build the consumer with pkg-config; (cmd, env)."""
    dest = os.path.join(tmp, 'destdir')
    run([a.meson, 'install', '-C', a.build_root, '--destdir', dest, '--no-rebuild', '--quiet'])
    pcs = glob.glob(os.path.join(dest, '**', 'pkgconfig', 'heapscope.pc'), recursive=True)
    if len(pcs) != 1:
        raise Failure('expected one installed heapscope.pc under %s, found %s' % (dest, pcs))
    env = dict(os.environ)
    env['PKG_CONFIG_PATH'] = os.path.dirname(pcs[0])
    env['PKG_CONFIG_SYSROOT_DIR'] = dest
    flags = run(['pkg-config', '--cflags', '--libs', 'heapscope'], env=env).stdout.decode()
    print('pkg-config --cflags --libs heapscope: %s' % flags.strip())
    exe = os.path.join(tmp, 'consumer')
    cc = os.environ.get('CC', 'cc')
    cmd = [cc, '-std=c11', '-Wall', '-Wextra', '-Wpedantic', '-Werror', a.example, '-o', exe]
    cmd += shlex.split(flags)
    run(cmd, env=env)
    print('built out of tree: %s' % ' '.join(shlex.quote(c) for c in cmd))
    libdirs = sorted({os.path.dirname(p) for p in
                      glob.glob(os.path.join(dest, '**', 'libheapscope.so.*'), recursive=True)})
    if len(libdirs) != 1:
        raise Failure('installed libheapscope.so.* not found under %s' % dest)
    runenv = dict(os.environ)
    runenv['LD_LIBRARY_PATH'] = libdirs[0]
    ver = run(['readelf', '-V', exe]).stdout.decode()
    needed = run(['readelf', '-d', exe]).stdout.decode()
    if 'libheapscope.so.' not in needed or not re.search(r'Name: HEAPSCOPE_\d+\.\d+', ver):
        raise Failure('consumer does not need libheapscope.so.N with versioned symbols:\n%s'
                      % ver)
    ldd = run(['ldd', exe], env=runenv).stdout.decode()
    m = re.search(r'libheapscope\.so\.\S+ => (\S+)', ldd)
    if not m or not os.path.realpath(m.group(1)).startswith(os.path.realpath(dest)):
        raise Failure('consumer does not load the installed library:\n%s' % ldd)
    print('links %s with versions %s' % (
        os.path.relpath(m.group(1), dest),
        ', '.join(sorted(set(re.findall(r'Name: (HEAPSCOPE_[\d.]+)', ver))))))
    return [exe], runenv


def main():
    p = argparse.ArgumentParser()
    p.add_argument('mode', choices=['python', 'ruby', 'consumer', 'c-report', 'c-html'])
    p.add_argument('--example', required=True)
    p.add_argument('--lib')
    p.add_argument('--build-root')
    p.add_argument('--meson', default='meson')
    p.add_argument('--cli', default=os.environ.get('HEAPSCOPE'))
    p.add_argument('--corpus', default=os.environ.get('HEAPSCOPE_CORPUS'))
    p.add_argument('--work', default=os.environ.get('HEAPSCOPE_WORK'))
    a = p.parse_args()
    if not a.cli or not a.work:
        p.error('--cli and --work (or HEAPSCOPE, HEAPSCOPE_WORK) are required')
    try:
        dumps = ensure_dumps(a.work)
        external = os.path.join(a.corpus or '', 'external', 'heapy_my_dump_1.json')
        os.makedirs(a.work, exist_ok=True)
        if a.mode == 'c-html':
            check_c_html(a.example, a.cli, dumps, a.work)
            return 0
        if a.mode == 'c-report':
            for d in [dumps[2]] + ([external] if os.path.exists(external) else []):
                check_c_report(a.example, a.cli, d)
            return 0
        with tempfile.TemporaryDirectory(dir=a.work, prefix='abi-%s-' % a.mode) as tmp:
            env = dict(os.environ)
            env.pop('HEAPSCOPE_LIB', None)
            if a.mode == 'python':
                tool = [sys.executable, a.example, '--lib', a.lib]
                envtool = [sys.executable, a.example]
            elif a.mode == 'ruby':
                if run(['ruby', '-e', 'require "ffi"'], check=False).returncode != 0:
                    raise Failure('ruby cannot load the ffi gem: install ruby-ffi '
                                  '(scripts/setup.sh)')
                tool = ['ruby', a.example, '--lib', a.lib]
                envtool = ['ruby', a.example]
            else:
                tool, env = build_consumer(a, tmp)
                envtool = None
            columns = a.mode != 'consumer'
            name = os.path.basename(a.example)
            if envtool is None:
                name = os.path.basename(tool[0])
            if os.path.exists(external):
                check_case(name, tool, env, a.cli, ['--top', '0'], [external], 'type',
                           'class', 0, columns)
            else:
                print('note: no shared corpus (%s): the external dump of another Ruby is not '
                      'checked' % (a.corpus or 'HEAPSCOPE_CORPUS unset'))
            check_case(name, tool, env, a.cli, ['--top', '0'], dumps, 'type', 'class', 0, columns)
            env2 = env
            if envtool:                  # the library found through $HEAPSCOPE_LIB
                env2 = dict(env, HEAPSCOPE_LIB=a.lib)
                tool = envtool
            check_case(name, tool, env2, a.cli,
                       ['--by', 'class', '--diff-by', 'file:line:class', '--top', '5'],
                       dumps[:2], 'class', 'file:line:class', 5, False)
            # the same dump three times: nothing leaked, no group, and the
            # warnings say the dump was repeated
            res = check_case(name, tool, env2, a.cli, ['--top', '0'], [dumps[2]] * 3, 'type',
                             'class', 0, False)
            if not any('same file' in w for w in res['diff']['warnings']):
                raise Failure('%s on one dump three times: no "same file" warning: %r'
                              % (name, res['diff']['warnings']))
            if envtool:                  # the FFI examples: JSON through the sink
                check_json(name, tool, env2, a.cli, dumps, 'type', 'class', 0)
                check_json(name, tool, env2, a.cli, dumps[:2], 'class', 'file:line:class', 5)
                check_json(name, tool, env2, a.cli, [dumps[2]] * 3, 'file:line:class',
                           'file:line:class', 20)
                if os.path.exists(external):
                    check_json(name, tool, env2, a.cli, [external], 'gem', 'class', 0)
            if envtool:                  # a timeline through the sink
                check_timeline(name, tool, env2, a.cli, a.work)
            check_error(tool, env2)
    except Failure as e:
        print('FAIL: %s' % e)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
