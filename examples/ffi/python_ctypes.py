#!/usr/bin/env python3
"""python_ctypes.py - libheapscope from Python with nothing but ctypes.

    python3 python_ctypes.py [--lib PATH] [--by KEY] [--diff-by KEY]
                             [--top N] [--json] DUMP [DUMP2 [DUMP3]]
    python3 python_ctypes.py [--lib PATH] [--by KEY] [--top N] --timeline DUMP...

Loads the last DUMP and prints its tally by KEY (default "type"); then
recomputes count and memsize per type from the bulk columns
(HSCOPE_COL_TYPE, HSCOPE_COL_MEMSIZE: one call per column, not per object)
and checks that they agree with the library's tally.  Given two or three
dumps, also prints the heapleak diff (objects new in DUMP2 that are still
alive in DUMP3) grouped by --diff-by (default "class").

With --json, prints instead the library's own JSON documents of the same
tally and diff, one per line, written by hscope_tally_write() and
hscope_diff_write() through a write callback (a CFUNCTYPE sink): the same
bytes as `heapscope tally --json --keep-dumper --keep-tracer` and `heapscope diff --json`
print for the same dumps and options (docs/JSON.md).

With --timeline, the DUMPs (any number) are a series of one process: prints
the library's JSON document of what grows over time (kind "timeline"),
computed by hscope_timeline_compute() (grouped by --by, default
"file:line:class"; the dumps put in time order) and written by
hscope_timeline_write() through the same sink: the same bytes as
`heapscope timeline --json --by KEY --top N DUMP...`.  Then, on stderr, the
growing groups with their count in each dump, read back through the
timeline's accessors.

The shared library is --lib PATH, else $HEAPSCOPE_LIB, else whatever the
dynamic loader finds as libheapscope.so.0 (after `meson install`).

Exit status: 0 success, 1 library error or a disagreement, 2 usage.
"""
import argparse
import ctypes
import os
import sys
from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_char, c_char_p,
                    c_int32, c_uint32, c_uint64, c_void_p)

# --- The C declarations, transcribed from <heapscope/heapscope.h> ----------

HSCOPE_OK = 0
HSCOPE_ERROR_MESSAGE_SIZE = 256
HSCOPE_COL_TYPE = 2              # u8 per object: HSCOPE_TYPE_*
HSCOPE_COL_MEMSIZE = 5           # u32 per object; 0xFFFFFFFF: ask the object
HSCOPE_ELEM_U8 = 1
HSCOPE_ELEM_U32 = 3
HSCOPE_SORT_COUNT = 0
HSCOPE_FORMAT_JSON = 2
HSCOPE_TOP_ALL = 2**64 - 1
HSCOPE_METRIC_COUNT = 2


class Error(Structure):
    """hscope_error: caller-owned, `size` set before the call."""
    _fields_ = [('size', c_uint32),
                ('status', c_int32),
                ('sys_errno', c_int32),
                ('reserved', c_uint32),
                ('line', c_uint64),
                ('offset', c_uint64),
                ('message', c_char * HSCOPE_ERROR_MESSAGE_SIZE)]


class TallyOptions(Structure):
    """hscope_tally_options: size-versioned, zero means default.  Transcribed
    whole (flags and reserved came in 0.2): hscope_tally_options_init()
    writes the library's full struct."""
    _fields_ = [('size', c_uint32),
                ('sort', c_uint32),
                ('top', c_uint64),
                ('flags', c_uint32),
                ('reserved', c_uint32)]


class ReportOptions(Structure):
    """hscope_report_options (0.2): how a writer writes; zero means default."""
    _fields_ = [('size', c_uint32),
                ('format', c_int32),
                ('flags', c_uint32),
                ('width', c_uint32),
                ('top', c_uint64),
                ('depth', c_uint32),
                ('max_paths', c_uint32),
                ('dump_names', POINTER(c_char_p)),
                ('dump_name_count', c_uint64)]


class TimelineOptions(Structure):
    """hscope_timeline_options (0.2): zero means default (by file:line:class,
    metric memsize, order auto, one fold per core, 3 dumps to grow)."""
    _fields_ = [('size', c_uint32),
                ('flags', c_uint32),
                ('by', c_char_p),
                ('metric', c_int32),
                ('order', c_int32),
                ('threads', c_uint32),
                ('min_dumps', c_uint32)]


# The output sink: int32_t write(void *user_data, const char *data, uint64_t len).
WRITE_FN = CFUNCTYPE(c_int32, c_void_p, POINTER(c_char), c_uint64)


# Opaque handles: distinct pointer types, so ctypes refuses to mix them up.
class Heap(Structure):
    pass


class Tally(Structure):
    pass


class Diff(Structure):
    pass


class Timeline(Structure):
    pass


HeapP, TallyP, DiffP = POINTER(Heap), POINTER(Tally), POINTER(Diff)
TimelineP = POINTER(Timeline)

SIGNATURES = {
    # name: (restype, argtypes)
    'hscope_version_string': (c_char_p, []),
    'hscope_status_name': (c_char_p, [c_int32]),
    'hscope_error_init': (None, [POINTER(Error)]),
    'hscope_tally_options_init': (None, [POINTER(TallyOptions)]),
    'hscope_heap_open_file': (c_int32, [POINTER(HeapP), c_char_p, c_void_p,
                                        POINTER(Error)]),
    'hscope_heap_free': (None, [HeapP]),
    'hscope_heap_object_count': (c_uint64, [HeapP]),
    'hscope_heap_object_memsize': (c_uint64, [HeapP, c_uint32]),
    'hscope_heap_type_name': (c_char_p, [HeapP, c_int32]),
    'hscope_heap_column': (c_int32, [HeapP, c_int32, POINTER(c_void_p),
                                     POINTER(c_uint64), POINTER(c_int32)]),
    'hscope_tally_compute': (c_int32, [POINTER(TallyP), HeapP, c_char_p,
                                       POINTER(TallyOptions), POINTER(Error)]),
    'hscope_tally_free': (None, [TallyP]),
    'hscope_tally_row_count': (c_uint64, [TallyP]),
    'hscope_tally_group_count': (c_uint64, [TallyP]),
    'hscope_tally_totals': (None, [TallyP, POINTER(c_uint64), POINTER(c_uint64)]),
    'hscope_tally_row_key': (c_char_p, [TallyP, c_uint64]),
    'hscope_tally_row_count_of': (c_uint64, [TallyP, c_uint64]),
    'hscope_tally_row_memsize': (c_uint64, [TallyP, c_uint64]),
    'hscope_diff_files': (c_int32, [POINTER(DiffP), c_char_p, c_char_p, c_char_p,
                                    c_void_p, c_void_p, POINTER(Error)]),
    'hscope_diff_free': (None, [DiffP]),
    'hscope_diff_count': (c_uint64, [DiffP]),
    'hscope_diff_memsize': (c_uint64, [DiffP]),
    'hscope_diff_excluded': (c_uint64, [DiffP]),
    'hscope_diff_reused_addresses': (c_uint64, [DiffP]),
    'hscope_diff_snapshot_objects': (c_uint64, [DiffP, c_uint32]),
    'hscope_diff_warning_text': (c_char_p, [DiffP]),
    'hscope_diff_tally': (c_int32, [POINTER(TallyP), DiffP, c_char_p,
                                    POINTER(TallyOptions), POINTER(Error)]),
    'hscope_report_options_init': (None, [POINTER(ReportOptions)]),
    'hscope_tally_write': (c_int32, [TallyP, POINTER(ReportOptions), WRITE_FN,
                                     c_void_p, POINTER(Error)]),
    'hscope_diff_write': (c_int32, [DiffP, TallyP, POINTER(ReportOptions), WRITE_FN,
                                    c_void_p, POINTER(Error)]),
    'hscope_timeline_options_init': (None, [POINTER(TimelineOptions)]),
    'hscope_timeline_compute': (c_int32, [POINTER(TimelineP), POINTER(c_char_p), c_uint64,
                                          c_void_p, POINTER(TimelineOptions), POINTER(Error)]),
    'hscope_timeline_free': (None, [TimelineP]),
    'hscope_timeline_growing_count': (c_uint64, [TimelineP]),
    'hscope_timeline_dump_count': (c_uint64, [TimelineP]),
    'hscope_timeline_group_key': (c_char_p, [TimelineP, c_uint64]),
    'hscope_timeline_group_series': (POINTER(c_uint64), [TimelineP, c_uint64, c_int32]),
    'hscope_timeline_write': (c_int32, [TimelineP, POINTER(ReportOptions), WRITE_FN,
                                        c_void_p, POINTER(Error)]),
}


def load_library(path):
    lib = ctypes.CDLL(path)
    for name, (restype, argtypes) in SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


class HeapscopeError(Exception):
    pass


def text(b):
    """Library strings are NUL-terminated bytes, usually UTF-8."""
    return b.decode('utf-8', 'backslashreplace') if b is not None else ''


class Lib:
    def __init__(self, path):
        self.c = load_library(path)

    def new_error(self):
        err = Error()
        self.c.hscope_error_init(byref(err))
        return err

    def check(self, status, err, what):
        if status != HSCOPE_OK:
            raise HeapscopeError('%s: %s: %s' % (
                what, text(self.c.hscope_status_name(status)), text(err.message)))

    def tally_options(self, top):
        opts = TallyOptions()
        self.c.hscope_tally_options_init(byref(opts))
        opts.sort = HSCOPE_SORT_COUNT
        opts.top = top
        return opts

    def column(self, heap, col, elem_type, ctype):
        """A zero-copy view of a whole column (borrowed from the heap)."""
        data, length, elem = c_void_p(), c_uint64(), c_int32()
        status = self.c.hscope_heap_column(heap, col, byref(data), byref(length),
                                           byref(elem))
        if status != HSCOPE_OK or elem.value != elem_type:
            raise HeapscopeError('hscope_heap_column(%d): %s' % (
                col, text(self.c.hscope_status_name(status))))
        if length.value == 0:
            return []
        return (ctype * length.value).from_address(data.value)

    def write_json(self, writer, handle, extra, names, top):
        """Run a writer (hscope_tally_write, hscope_diff_write,
        hscope_timeline_write) into a bytes object through the sink; `extra`
        are the arguments between the handle and the options (the diff's
        groups)."""
        opts = ReportOptions()
        self.c.hscope_report_options_init(byref(opts))
        opts.format = HSCOPE_FORMAT_JSON
        opts.top = top if top else HSCOPE_TOP_ALL      # as `--top N`, 0 = all
        encoded = (c_char_p * len(names))(*[os.fsencode(n) for n in names])
        opts.dump_names = encoded
        opts.dump_name_count = len(names)
        pieces = []

        def sink(_user_data, data, length):
            pieces.append(ctypes.string_at(data, length))
            return 0

        callback = WRITE_FN(sink)    # kept alive until the writer returns
        err = self.new_error()
        self.check(writer(handle, *extra, byref(opts), callback, None, byref(err)),
                   err, 'write')
        return b''.join(pieces)


def print_rows(lib, tally):
    c = lib.c
    print('%10s %13s  %s' % ('count', 'memsize', 'key'))
    rows = []
    for i in range(c.hscope_tally_row_count(tally)):
        row = (text(c.hscope_tally_row_key(tally, i)),
               c.hscope_tally_row_count_of(tally, i),
               c.hscope_tally_row_memsize(tally, i))
        rows.append(row)
        print('%10d %13d  %s' % (row[1], row[2], row[0]))
    print()
    return rows


def column_check(lib, heap, rows, total_count, total_memsize):
    """Count and memsize per type from two bulk columns."""
    c = lib.c
    types = lib.column(heap, HSCOPE_COL_TYPE, HSCOPE_ELEM_U8, ctypes.c_uint8)
    mems = lib.column(heap, HSCOPE_COL_MEMSIZE, HSCOPE_ELEM_U32, ctypes.c_uint32)
    per_code = {}
    for oid, (t, m) in enumerate(zip(memoryview(types).cast('B'),
                                     memoryview(mems).cast('B').cast('I'))):
        if m == 0xFFFFFFFF:                   # too large for the u32 column
            m = c.hscope_heap_object_memsize(heap, oid)
        cnt, mem = per_code.get(t, (0, 0))
        per_code[t] = (cnt + 1, mem + m)
    per_name = {text(c.hscope_heap_type_name(heap, code)): v
                for code, v in per_code.items()}
    bad = [key for key, cnt, mem in rows if per_name.get(key) != (cnt, mem)]
    n = sum(v[0] for v in per_name.values())
    m = sum(v[1] for v in per_name.values())
    if bad or (n, m) != (total_count, total_memsize):
        print('columns: MISMATCH with the tally for %s (columns: %d objects, '
              '%d bytes)' % (', '.join(bad) or 'the totals', n, m))
        return False
    print('columns: %d objects, %d bytes in %d types from HSCOPE_COL_TYPE and '
          'HSCOPE_COL_MEMSIZE: equal to the tally' % (n, m, len(per_name)))
    return True


def json_reports(lib, paths, key, diff_key, top):
    """The library's JSON of the tally and the diff, one document a line."""
    c = lib.c
    err = lib.new_error()
    heap, tally, diff, groups = HeapP(), TallyP(), DiffP(), TallyP()
    out = sys.stdout.buffer
    try:
        lib.check(c.hscope_heap_open_file(byref(heap), os.fsencode(paths[-1]), None,
                                          byref(err)), err, paths[-1])
        lib.check(c.hscope_tally_compute(byref(tally), heap, key.encode(),
                                         byref(lib.tally_options(top)), byref(err)),
                  err, 'tally')
        out.write(lib.write_json(c.hscope_tally_write, tally, (), paths[-1:], top))
        if len(paths) > 1:
            a, b = (os.fsencode(p) for p in paths[:2])
            cpath = os.fsencode(paths[2]) if len(paths) > 2 else None
            lib.check(c.hscope_diff_files(byref(diff), a, b, cpath, None, None, byref(err)),
                      err, 'diff')
            lib.check(c.hscope_diff_tally(byref(groups), diff, diff_key.encode(),
                                          byref(lib.tally_options(top)), byref(err)),
                      err, 'diff tally')
            out.write(lib.write_json(c.hscope_diff_write, diff, (groups,), paths, top))
    finally:
        for free, h in ((c.hscope_tally_free, groups), (c.hscope_diff_free, diff),
                        (c.hscope_tally_free, tally), (c.hscope_heap_free, heap)):
            free(h)
    out.flush()
    return True


def timeline_json(lib, paths, key, top):
    """The library's JSON of the dumps' timeline, through the sink; the
    growing groups (count per dump) on stderr."""
    c = lib.c
    err = lib.new_error()
    opts = TimelineOptions()
    c.hscope_timeline_options_init(byref(opts))
    opts.by = key.encode()
    encoded = (c_char_p * len(paths))(*[os.fsencode(p) for p in paths])
    tl = TimelineP()
    try:
        lib.check(c.hscope_timeline_compute(byref(tl), encoded, len(paths), None, byref(opts),
                                            byref(err)), err, 'timeline')
        out = sys.stdout.buffer
        out.write(lib.write_json(c.hscope_timeline_write, tl, (), paths, top))
        out.flush()
        dumps = c.hscope_timeline_dump_count(tl)
        for g in range(c.hscope_timeline_growing_count(tl)):
            counts = c.hscope_timeline_group_series(tl, g, HSCOPE_METRIC_COUNT)
            print('growing: %s, count %s' % (text(c.hscope_timeline_group_key(tl, g)),
                                             ' '.join(str(counts[i]) for i in range(dumps))),
                  file=sys.stderr)
    finally:
        c.hscope_timeline_free(tl)
    return True


def tally_dump(lib, path, key, top):
    c = lib.c
    err = lib.new_error()
    heap = HeapP()
    lib.check(c.hscope_heap_open_file(byref(heap), os.fsencode(path), None,
                                      byref(err)), err, path)
    tally = TallyP()
    ok = True
    try:
        opts = lib.tally_options(top)
        lib.check(c.hscope_tally_compute(byref(tally), heap, key.encode(),
                                         byref(opts), byref(err)), err, 'tally')
        count, memsize = c_uint64(), c_uint64()
        c.hscope_tally_totals(tally, byref(count), byref(memsize))
        print('tally of %s by %s: %d objects, %d bytes in %d groups'
              % (path, key, count.value, memsize.value,
                 c.hscope_tally_group_count(tally)))
        rows = print_rows(lib, tally)
        if key == 'type':
            ok = column_check(lib, heap, rows, count.value, memsize.value)
    finally:
        # Destructors accept NULL; freeing the heap first would be fine too
        # (the tally holds a reference on it).
        c.hscope_tally_free(tally)
        c.hscope_heap_free(heap)
    return ok


def diff_dumps(lib, paths, key, top):
    c = lib.c
    err = lib.new_error()
    diff = DiffP()
    a, b = (os.fsencode(p) for p in paths[:2])
    cpath = os.fsencode(paths[2]) if len(paths) > 2 else None
    lib.check(c.hscope_diff_files(byref(diff), a, b, cpath, None, None,
                                  byref(err)), err, 'diff')
    tally = TallyP()
    try:
        opts = lib.tally_options(top)
        lib.check(c.hscope_diff_tally(byref(tally), diff, key.encode(),
                                      byref(opts), byref(err)), err, 'diff tally')
        print('diff %s by %s: %d leaked objects, %d bytes in %d groups; '
              '%d dumper objects left out, %d reused addresses; snapshots %s'
              % (' '.join(paths), key, c.hscope_diff_count(diff),
                 c.hscope_diff_memsize(diff), c.hscope_tally_group_count(tally),
                 c.hscope_diff_excluded(diff), c.hscope_diff_reused_addresses(diff),
                 ' '.join(str(c.hscope_diff_snapshot_objects(diff, i))
                          for i in range(len(paths)))))
        warning = text(c.hscope_diff_warning_text(diff))
        for line in warning.split('\n') if warning else []:
            print('warning: %s' % line)
        print_rows(lib, tally)
    finally:
        c.hscope_tally_free(tally)
        c.hscope_diff_free(diff)


def main():
    p = argparse.ArgumentParser(description='libheapscope through ctypes: tally and diff')
    p.add_argument('--lib', default=os.environ.get('HEAPSCOPE_LIB', 'libheapscope.so.0'),
                   help='path of libheapscope.so (default: $HEAPSCOPE_LIB, '
                        'else libheapscope.so.0 from the loader path)')
    p.add_argument('--by', help='tally key (default: type; with --timeline: file:line:class)')
    p.add_argument('--diff-by', default='class', help='diff group key (default: class)')
    p.add_argument('--top', type=int, default=20, help='rows to print, 0 = all')
    p.add_argument('--json', action='store_true',
                   help="the library's JSON documents (tally, diff) instead of the text")
    p.add_argument('--timeline', action='store_true',
                   help="the DUMPs are a series: the library's JSON document of their timeline")
    p.add_argument('dumps', nargs='+', metavar='DUMP')
    a = p.parse_args()
    if len(a.dumps) > 3 and not a.timeline:
        p.error('at most three dumps (but with --timeline)')
    try:
        lib = Lib(a.lib)
    except OSError as e:
        print('cannot load libheapscope: %s' % e, file=sys.stderr)
        return 1
    try:
        if a.timeline:
            return 0 if timeline_json(lib, a.dumps, a.by or 'file:line:class', a.top) else 1
        if a.json:
            return 0 if json_reports(lib, a.dumps, a.by or 'type', a.diff_by, a.top) else 1
        print('libheapscope %s' % text(lib.c.hscope_version_string()))
        ok = tally_dump(lib, a.dumps[-1], a.by or 'type', a.top)
        if len(a.dumps) > 1:
            diff_dumps(lib, a.dumps, a.diff_by, a.top)
    except HeapscopeError as e:
        print(e, file=sys.stderr)
        return 1
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
