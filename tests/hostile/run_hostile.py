#!/usr/bin/env python3
"""The hostile-input corpus: every case with its expected outcome.

usage: run_hostile.py HEAPSCOPE [WORKDIR]

Small cases are files in this directory; large ones (100 MB line, 10^6-deep
nesting, gzip bomb) are generated into WORKDIR.  Each case runs
`heapscope summary --json` (with the options given) and checks the exit
status and the listed JSON fields; none may crash (a signal is a failure),
and the gzip bomb must stay within its memory cap.  Prints one line per
case and `N passed, N failed`.
"""
import gzip
import json
import os
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def gen_long_line(path):
    # one record holding a 100 MB string value, between two normal ones
    with open(path, 'wb') as f:
        f.write(b'{"type":"ROOT", "root":"vm", "references":["0x1000"]}\n')
        f.write(b'{"address":"0x1000", "type":"STRING", "value":"')
        chunk = b'x' * (1 << 20)
        for _ in range(100):
            f.write(chunk)
        f.write(b'", "memsize":104857640}\n')
        f.write(b'{"address":"0x1008", "type":"STRING", "memsize":40}\n')


def gen_deep(path):
    with open(path, 'wb') as f:
        f.write(b'{"address":"0x1000", "type":"OBJECT", "memsize":40}\n')
        f.write(b'{"address":"0x1008", "type":"OBJECT", "x":' + b'[' * 1000000 + b']' * 1000000 + b'}\n')


def gen_bomb(path):
    # 1 GiB of zeros: about 1 MB compressed, no newline at all
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b'\0' * (1 << 24)
    with open(path, 'wb') as f:
        for _ in range(64):
            f.write(co.compress(block))
        f.write(co.flush())


# name, input, extra args, expected exit, expected fields (dotted paths), max RSS MB
CASES = [
    ('empty file', 'empty.json', [], 1, {}, None),
    ('not a dump (Ruby source)', 'not_a_dump.rb', [], 1, {}, None),
    ('invalid UTF-8 and a lone surrogate', 'invalid_utf8.json', [], 0,
     {'total.count': 3, 'skipped_lines': 0}, None),
    ('numbers beyond 64 bits', 'big_numbers.json', [], 0,
     {'total.count': 4, 'skipped.number_range': 1, 'by_type.groups.OBJECT.memsize': 18446744073709551615}, None),
    ('duplicate address', 'dup_address.json', [], 0, {'total.count': 4, 'duplicate_addresses': 1}, None),
    ('missing address', 'missing_address.json', [], 0, {'total.count': 3, 'skipped.no_address': 1}, None),
    ('references to self and to a missing object', 'self_and_missing_refs.json', [], 0,
     {'references': 2, 'dangling.references': 1, 'dangling.addresses': 1}, None),
    ('billions claimed in a length', 'billions_claimed.json', [], 0,
     {'total.count': 2, 'references': 2}, None),
    ('NUL byte in a string', 'nul_byte.json', [], 0, {'total.count': 3, 'skipped.bad_json': 1}, None),
    ('NUL byte, strict', 'nul_byte.json', ['--strict'], 1, {}, None),
    ('CRLF line ends', 'crlf.json', [], 0, {'total.count': 3, 'skipped_lines': 0}, None),
    ('dump cut mid-line', 'cut_mid_line.json', [], 0,
     {'total.count': 3, 'skipped.truncated': 1, 'truncated': True}, None),
    ('dump cut mid-line, strict', 'cut_mid_line.json', ['--strict'], 1, {}, None),
    ('truncated gzip', 'truncated.json.gz', [], 0, {'truncated': True}, None),
    ('truncated gzip, strict', 'truncated.json.gz', ['--strict'], 1, {}, None),
    ('100 MB single line', '@long', [], 0, {'total.count': 2, 'skipped_lines': 0}, None),
    ('100 MB single line over --max-line', '@long', ['--max-line', '1M'], 0,
     {'total.count': 1, 'skipped.too_long': 1}, None),
    ('10^6-deep nesting', '@deep', [], 0, {'total.count': 1, 'skipped.too_deep': 1}, None),
    ('gzip bomb (1 GiB of zeros) under --max-line 1M', '@bomb', ['--max-line', '1M'], 1, {}, 64),
    ('gzip bomb under --max-memory 32M', '@bomb', ['--max-memory', '32M'], 1, {}, 64),
]


def field(d, path):
    """d at a dotted path; in a list of rows, a part names the row by its
    "key" (by_type.groups.OBJECT.memsize)."""
    for k in path.split('.'):
        if isinstance(d, list):
            rows = [r for r in d if isinstance(r, dict) and r.get('key') == k]
            if len(rows) != 1:
                return '<missing>'
            d = rows[0]
            continue
        if not isinstance(d, dict) or k not in d:
            return '<missing>'
        d = d[k]
    return d


def main():
    hs = sys.argv[1]
    work = sys.argv[2] if len(sys.argv) > 2 else '/tmp/heapscope-hostile'
    os.makedirs(work, exist_ok=True)
    gens = {'@long': ('long_line.json', gen_long_line), '@deep': ('deep.json', gen_deep),
            '@bomb': ('bomb.json.gz', gen_bomb)}
    passed = failed = 0
    for name, inp, args, want_rc, want, max_rss in CASES:
        if inp.startswith('@'):
            fn, g = gens[inp]
            path = os.path.join(work, fn)
            if not os.path.exists(path):
                g(path)
        else:
            path = os.path.join(HERE, inp)
        cmd = ['/usr/bin/time', '-f', '%M', hs, 'summary', '--json', '--no-progress'] + args + [path]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        errs = r.stderr.decode('utf-8', 'replace').strip().splitlines()
        rss_mb = int(errs[-1]) / 1024 if errs and errs[-1].isdigit() else None
        problems = []
        if r.returncode < 0 or r.returncode > 2:
            problems.append('crashed or was killed (status %d)' % r.returncode)
        elif r.returncode != want_rc:
            problems.append('exit %d, want %d (%s)' % (r.returncode, want_rc, ' '.join(errs[:-1])[:200]))
        if want and r.returncode == 0:
            out = json.loads(r.stdout.decode('utf-8', 'surrogateescape'))
            for k, v in want.items():
                if field(out, k) != v:
                    problems.append('%s = %r, want %r' % (k, field(out, k), v))
        if want_rc and r.returncode == want_rc and not any(e.startswith('heapscope: ') for e in errs[:-1]):
            problems.append('no error message on stderr')
        if max_rss and rss_mb and rss_mb > max_rss:
            problems.append('peak RSS %.0f MB > %d MB' % (rss_mb, max_rss))
        status = 'ok' if not problems else 'FAIL: ' + '; '.join(problems)
        msg = (' '.join(errs[:-1])[:90]) if r.returncode else ''
        print('%-50s %s%s' % (name, status, ('  [' + msg + ']') if msg and not problems else ''))
        if problems:
            failed += 1
        else:
            passed += 1
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
