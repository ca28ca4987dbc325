#!/usr/bin/env python3
"""The library's writers called through ctypes (a CFUNCTYPE write callback)
print the same bytes as the heapscope CLI, one check per point of issue
20's list that concerns FFI callers:

  1. one JSON vocabulary: tally, diff and suspects documents
  2. the dominator super-root "(roots)": dominators --json, with and
     without a focus object
  4. text tables fit the width, long keys cut in the middle: tally and diff
     text at 100, 60 and 45 columns
  5. numbers with separators, right plurals: a diff where one object
     leaked ("1 object"), the dominators text
  6. one default grouping key (file:line:class): hscope_diff_write with no
     groups is `heapscope diff`
  7. suspects text: every step of a path labelled

usage: check_ffi_reports.py --lib SO [--cli PATH] [--work DIR]
(--cli and --work default to $HEAPSCOPE and $HEAPSCOPE_WORK.)  The
declarations come from examples/ffi/python_ctypes.py (imported), so the
example's transcription of the header is what is tested.
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
from ctypes import POINTER, byref, c_char_p, c_int32, c_uint32, c_uint64, c_void_p

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'workloads'))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'examples', 'ffi'))
import workloads  # noqa: E402
import python_ctypes as pc  # noqa: E402

HSCOPE_FORMAT_TEXT = 1
HSCOPE_REPORT_NO_WARNINGS = 0x10
HSCOPE_ID_NONE = 0xFFFFFFFF


class Opaque(ctypes.Structure):
    pass


OpaqueP = POINTER(Opaque)
MORE = {
    # the writers and analyses the example does not declare
    'hscope_heap_write_summary': (c_int32, [pc.HeapP, POINTER(pc.ReportOptions), pc.WRITE_FN,
                                            c_void_p, POINTER(pc.Error)]),
    'hscope_heap_find': (c_int32, [pc.HeapP, c_uint64, POINTER(c_uint32)]),
    'hscope_domtree_compute': (c_int32, [POINTER(OpaqueP), pc.HeapP, c_void_p,
                                         POINTER(pc.Error)]),
    'hscope_domtree_free': (None, [OpaqueP]),
    'hscope_domtree_write': (c_int32, [OpaqueP, c_uint32, POINTER(pc.ReportOptions),
                                       pc.WRITE_FN, c_void_p, POINTER(pc.Error)]),
    'hscope_suspects_compute': (c_int32, [POINTER(OpaqueP), pc.DiffP, c_void_p,
                                          POINTER(pc.Error)]),
    'hscope_suspects_free': (None, [OpaqueP]),
    'hscope_suspects_write': (c_int32, [OpaqueP, POINTER(pc.ReportOptions), pc.WRITE_FN,
                                        c_void_p, POINTER(pc.Error)]),
}


class Failure(Exception):
    pass


class Reports:
    def __init__(self, lib_path, cli):
        self.lib = pc.Lib(lib_path)
        for name, (restype, argtypes) in MORE.items():
            fn = getattr(self.lib.c, name)
            fn.restype, fn.argtypes = restype, argtypes
        self.c = self.lib.c
        self.cli = cli
        self.handles = []

    def free_all(self):
        for free, h in reversed(self.handles):
            free(h)
        self.handles = []

    def make(self, ctor, ptype, free, *args):
        out = ptype()
        err = self.lib.new_error()
        self.lib.check(ctor(byref(out), *args, byref(err)), err, ctor.__name__)
        self.handles.append((free, out))
        return out

    def heap(self, path):
        return self.make(self.c.hscope_heap_open_file, pc.HeapP, self.c.hscope_heap_free,
                         os.fsencode(path), None)

    def diff(self, paths):
        return self.make(self.c.hscope_diff_files, pc.DiffP, self.c.hscope_diff_free,
                         *[os.fsencode(p) for p in paths[:2]],
                         os.fsencode(paths[2]) if len(paths) > 2 else None, None, None)

    def write(self, writer, handle, extra, names, fmt=HSCOPE_FORMAT_TEXT, top=20, width=0,
              flags=HSCOPE_REPORT_NO_WARNINGS, depth=0):
        """Run a writer into bytes through the sink, with the options the
        CLI sets (text: the warnings are on its stderr)."""
        opts = pc.ReportOptions()
        self.c.hscope_report_options_init(byref(opts))
        opts.format, opts.top, opts.width, opts.depth = fmt, top, width, depth
        opts.flags = flags if fmt == HSCOPE_FORMAT_TEXT else 0
        arr = (c_char_p * len(names))(*[os.fsencode(n) for n in names])
        opts.dump_names, opts.dump_name_count = arr, len(names)
        pieces = []
        sink = pc.WRITE_FN(lambda _ud, data, n: pieces.append(ctypes.string_at(data, n)) or 0)
        err = self.lib.new_error()
        self.lib.check(writer(handle, *extra, byref(opts), sink, None, byref(err)), err,
                       writer.__name__)
        return b''.join(pieces)

    def run_cli(self, args, columns=100):
        env = dict(os.environ, COLUMNS=str(columns))
        p = subprocess.run([self.cli, args[0], '--no-progress', '--no-index'] + args[1:],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        if p.returncode != 0:
            raise Failure('heapscope %s: exit %d: %s' % (' '.join(args), p.returncode,
                                                        p.stderr.decode(errors='replace')))
        return p.stdout

    def same(self, point, what, got, args, columns=100):
        want = self.run_cli(args, columns)
        if got != want:
            raise Failure('point %s, %s: the FFI output differs from `heapscope %s`:\n'
                          '--- got\n%s\n--- want\n%s' % (point, what, ' '.join(args),
                                                         got.decode(errors='replace')[:1500],
                                                         want.decode(errors='replace')[:1500]))
        print('ok: point %s: %s = heapscope %s (%d bytes)' % (point, what, ' '.join(
            os.path.basename(a) if os.sep in a else a for a in args), len(got)))
        return got


def one_leak_dumps(tmp):
    """A and B = C: one STRING of 1.2 MB new in B (no tracing: warnings)."""
    a = os.path.join(tmp, 'one_a.json')
    b = os.path.join(tmp, 'one_b.json')
    with open(a, 'w') as f:
        f.write('{"type":"ROOT","root":"vm","references":["0x1000"]}\n'
                '{"address":"0x1000","type":"ARRAY","references":[],"memsize":40}\n')
    with open(b, 'w') as f:
        f.write('{"type":"ROOT","root":"vm","references":["0x1000"]}\n'
                '{"address":"0x1000","type":"ARRAY","references":["0x2000"],"memsize":40}\n'
                '{"address":"0x2000","type":"STRING","memsize":1234567}\n')
    return [a, b, b]


def check(r, dumps, tmp):
    c = r.c
    d3 = dumps[2]
    heap = r.heap(d3)
    # 1: the JSON documents
    tally = r.make(c.hscope_tally_compute, pc.TallyP, c.hscope_tally_free, heap, b'class',
                   byref(r.lib.tally_options(7)))
    r.same(1, 'tally JSON', r.write(c.hscope_tally_write, tally, (), [d3], pc.HSCOPE_FORMAT_JSON, 7),
           ['tally', '--json', '--keep-dumper', '--keep-tracer', '--by', 'class', '--top', '7', d3])
    diff = r.diff(dumps)
    groups = r.make(c.hscope_diff_tally, pc.TallyP, c.hscope_tally_free, diff, b'class',
                    byref(r.lib.tally_options(0)))
    r.same(1, 'diff JSON', r.write(c.hscope_diff_write, diff, (groups,), dumps,
                                   pc.HSCOPE_FORMAT_JSON, pc.HSCOPE_TOP_ALL),
           ['diff', '--json', '--by', 'class', '--top', '0'] + dumps)
    sus = r.make(c.hscope_suspects_compute, OpaqueP, c.hscope_suspects_free, diff, None)
    doc = r.same(1, 'suspects JSON', r.write(c.hscope_suspects_write, sus, (), dumps,
                                             pc.HSCOPE_FORMAT_JSON, 10),
                 ['suspects', '--json'] + dumps)
    doc = json.loads(doc)
    if [x['path'] for x in doc['dumps']] != dumps or 'warnings' not in doc:
        raise Failure('suspects JSON: dumps %r' % doc['dumps'])
    # 2: "(roots)" in the dominator tree, with and without a focus
    tree = r.make(c.hscope_domtree_compute, OpaqueP, c.hscope_domtree_free, heap, None)
    doc = r.same(2, 'dominators JSON', r.write(c.hscope_domtree_write, tree, (HSCOPE_ID_NONE,),
                                               [d3], pc.HSCOPE_FORMAT_JSON, 10, depth=2),
                 ['dominators', '--json', d3])
    if '(roots)' not in [t['root'] for t in json.loads(doc)['top']]:
        raise Failure('dominators JSON: no "(roots)" entry')
    holder = next(x for x in json.loads(r.write(c.hscope_suspects_write, sus, (), dumps,
                                                pc.HSCOPE_FORMAT_JSON))['suspects']
                  if x['address'])
    oid = c_uint32()
    if c.hscope_heap_find(heap, int(holder['address'], 16), byref(oid)) != 0:
        raise Failure('the top holder %s is not in %s' % (holder['address'], d3))
    r.same(2, 'dominators JSON of an object',
           r.write(c.hscope_domtree_write, tree, (oid.value,), [d3], pc.HSCOPE_FORMAT_JSON, 10,
                   depth=2), ['dominators', '--json', d3, holder['address']])
    # 4: text tables at several widths
    ftally = r.make(c.hscope_tally_compute, pc.TallyP, c.hscope_tally_free, heap,
                    b'file:line:class', byref(r.lib.tally_options(20)))
    fgroups = r.make(c.hscope_diff_tally, pc.TallyP, c.hscope_tally_free, diff,
                     b'file:line:class', byref(r.lib.tally_options(20)))
    for w in (100, 60, 45):
        r.same(4, 'tally text at %d columns' % w,
               r.write(c.hscope_tally_write, ftally, (), [d3], width=w),
               ['tally', '--keep-dumper', '--keep-tracer', d3], columns=w)
        r.same(4, 'diff text at %d columns' % w,
               r.write(c.hscope_diff_write, diff, (fgroups,), dumps, width=w),
               ['diff'] + dumps, columns=w)
    # 5: plurals and numbers
    one = one_leak_dumps(tmp)
    odiff = r.diff(one)
    text = r.same(5, 'a diff of one leaked object',
                  r.write(c.hscope_diff_write, odiff, (None,), one), ['diff'] + one)
    if b'leaked: 1 object, 1.2 MB' not in text:
        raise Failure('one leaked object: %r' % text)
    r.same(5, 'dominators text', r.write(c.hscope_domtree_write, tree, (HSCOPE_ID_NONE,), [d3],
                                         top=10, depth=2), ['dominators', d3])
    # 6: the default key: no groups given
    r.same(6, 'diff text, default groups', r.write(c.hscope_diff_write, diff, (None,), dumps),
           ['diff'] + dumps)
    # 7: suspects text, every step labelled
    text = r.same(7, 'suspects text', r.write(c.hscope_suspects_write, sus, (), dumps, top=10),
                  ['suspects'] + dumps)
    paths = [ln for ln in text.decode().split('\n') if 'path from root' in ln]
    if not paths or any(not ln.split(': ', 1)[1].split(' -> ')[0].count(' ') >= 2 for ln in paths):
        raise Failure('suspects text: unlabelled path steps: %r' % paths)
    # the warnings the CLI prints on stderr are the writer's first lines
    warned = r.write(c.hscope_diff_write, odiff, (None,), one, flags=0)
    p = subprocess.run([r.cli, 'diff', '--no-progress'] + one, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=dict(os.environ, COLUMNS='100'))
    want = b''.join(ln[len(b'heapscope: '):] for ln in p.stderr.splitlines(True)) + p.stdout
    if warned != want or not warned.startswith(b'warning: '):
        raise Failure('diff text with its warnings differs from the CLI stderr + stdout:\n%r\n%r'
                      % (warned[:400], want[:400]))
    print('ok: warnings: the writer\'s "warning:" lines = the CLI\'s stderr')


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--lib', required=True)
    p.add_argument('--cli', default=os.environ.get('HEAPSCOPE'))
    p.add_argument('--work', default=os.environ.get('HEAPSCOPE_WORK'))
    a = p.parse_args()
    if not a.cli or not a.work:
        p.error('--cli and --work (or HEAPSCOPE, HEAPSCOPE_WORK) are required')
    r = Reports(a.lib, a.cli)
    try:
        d = workloads.ensure_set('leak_s1', a.work)
        dumps = [os.path.join(d, 'heap_%d.json' % i) for i in (1, 2, 3)]
        os.makedirs(a.work, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=a.work, prefix='abi-reports-') as tmp:
            check(r, dumps, tmp)
    except (Failure, pc.HeapscopeError) as e:
        print('FAIL: %s' % e)
        return 1
    finally:
        r.free_all()
    return 0


if __name__ == '__main__':
    sys.exit(main())
