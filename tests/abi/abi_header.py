#!/usr/bin/env python3
"""ABI discipline checks on the public header, the linker map and the
built shared library (docs/ABI.md).  Standard library only.

usage:
  abi_header.py exports --lib SO --map MAP --header H
      The dynamic symbols that SO defines (`nm -D --defined-only`) are
      exactly the globals of MAP, each at the version node MAP puts it in;
      MAP has no duplicates or non-symbols; every HSCOPE_API function of
      the header is in MAP and every MAP symbol is declared in the header.
  abi_header.py lint --header H
      The header keeps the rules that keep the ABI stable: public structs
      are size-versioned (`uint32_t size` first) with fixed-width fields,
      handles are opaque, enum constants have explicit values, every _INIT
      macro has an _init() twin, no varargs / bool / long / enum-typed /
      by-value struct parameters, destructors are `void x_free(T *)`.
  abi_header.py constants --header H [-I DIR]... [--baseline FILE]
                          [--write FILE]
      Evaluates every integer HSCOPE_* macro and enum constant with the C
      compiler ($CC, default cc).  With --baseline: fails if a constant of
      the baseline is gone or has another value (new ones are fine; a
      *__COUNT may grow).
  abi_header.py suppressions --header H
      Prints the libabigail suppression file for abidiff: changes inside
      opaque handles are private; data members appended at the end of a
      size-versioned struct are compatible.  Anything else is reported.
  abi_header.py api --header H
      Prints the HSCOPE_API function names, one per line.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

IDENT = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
NODE_NAME = re.compile(r'^HEAPSCOPE_[0-9]+\.[0-9]+$')


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'),
                  text, flags=re.S)
    return re.sub(r'//[^\n]*', '', text)


def read_header(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


def api_decls(header_text):
    """[(name, full declaration text)] of the HSCOPE_API functions."""
    code = strip_comments(header_text)
    code = '\n'.join(l for l in code.split('\n') if not l.lstrip().startswith('#'))
    out = []
    for m in re.finditer(r'\bHSCOPE_API\b([^;{]*);', code):
        decl = ' '.join(m.group(1).split())
        f = re.search(r'\b([A-Za-z_]\w*)\s*\(', decl)
        if f:
            out.append((f.group(1), decl))
    return out


def api_names(header_text):
    return [n for n, _ in api_decls(header_text)]


# ---------------------------------------------------------------------------
# exports


def parse_map(path):
    """{node: [symbols]} in file order, plus a list of problems."""
    text = strip_comments(open(path, encoding='utf-8').read())
    problems = []
    nodes = {}
    order = []
    pos = 0
    node_re = re.compile(r'\s*([A-Za-z_][\w.]*)\s*\{(.*?)\}\s*([\w.]*)\s*;', re.S)
    while True:
        m = node_re.match(text, pos)
        if not m:
            break
        name, body, parent = m.group(1), m.group(2), m.group(3)
        if not NODE_NAME.match(name):
            problems.append('version node %r is not named HEAPSCOPE_MAJOR.MINOR' % name)
        if name in nodes:
            problems.append('version node %s appears twice' % name)
        if order and parent != order[-1]:
            problems.append('version node %s must inherit the previous node %s '
                            '(write "} %s;")' % (name, order[-1], order[-1]))
        if not order and parent:
            problems.append('first version node %s inherits %s' % (name, parent))
        section = None
        syms = []
        for tok in re.split(r'\s*;\s*', body):
            tok = tok.strip()
            while tok:
                sm = re.match(r'(global|local)\s*:\s*', tok)
                if not sm:
                    break
                section = sm.group(1)
                tok = tok[sm.end():].strip()
            if not tok:
                continue
            if section == 'local':
                if tok != '*':
                    problems.append('%s: unexpected local entry %r' % (name, tok))
                continue
            if section != 'global':
                problems.append('%s: entry %r outside global:' % (name, tok))
                continue
            if not IDENT.match(tok):
                problems.append('%s: global entry %r is not a plain symbol name '
                                '(no wildcards in global:)' % (name, tok))
                continue
            syms.append(tok)
        nodes[name] = syms
        order.append(name)
        pos = m.end()
    if text[pos:].strip():
        problems.append('cannot parse the map after: %r' % text[pos:pos + 60])
    if not order:
        problems.append('no version node in the map')
    elif not re.search(r'\blocal\s*:\s*\*\s*;', text):
        problems.append('the map has no "local: *;": unlisted symbols would leak')
    return nodes, order, problems


def dynamic_symbols(lib):
    """{name: (nm type, version or None, default?)} of defined dynamic symbols."""
    out = subprocess.run(['nm', '-D', '--defined-only', lib], check=True,
                         stdout=subprocess.PIPE, universal_newlines=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        typ, name = parts[-2], parts[-1]
        ver, default = None, False
        if '@@' in name:
            name, ver = name.split('@@', 1)
            default = True
        elif '@' in name:
            name, ver = name.split('@', 1)
        syms.setdefault(name, []).append((typ, ver, default))
    return syms


def soname(lib):
    out = subprocess.run(['readelf', '-d', lib], check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    m = re.search(r'\(SONAME\)\s+Library soname: \[([^\]]+)\]', out)
    return m.group(1) if m else None


def cmd_exports(a):
    fail = []
    nodes, order, problems = parse_map(a.map)
    fail += ['map: ' + p for p in problems]
    where = {}
    dups = {}
    for node in order:
        for s in nodes[node]:
            if s in where:
                dups.setdefault(s, [where[s]]).append(node)
            else:
                where[s] = node
    for s in sorted(dups):
        fail.append('map: %s listed %d times (%s)' % (s, len(dups[s]), ', '.join(dups[s])))
    mapped = set(where)

    dyn = dynamic_symbols(a.lib)
    exported = {}
    for name, entries in dyn.items():
        for typ, ver, default in entries:
            if typ == 'A' and name in nodes:      # the version node itself
                continue
            exported.setdefault(name, []).append((typ, ver, default))
    for name in sorted(set(exported) - mapped):
        fail.append('exported but not in the map: %s %s' % (name, exported[name]))
    for name in sorted(mapped - set(exported)):
        fail.append('in the map (%s) but not exported by %s: %s'
                    % (where[name], os.path.basename(a.lib), name))
    for name in sorted(set(exported) & mapped):
        for typ, ver, default in exported[name]:
            if typ not in ('T', 'W', 'i'):
                fail.append('%s is exported as nm type %s: only functions belong in '
                            'the ABI (no data symbols)' % (name, typ))
            if ver != where[name] or not default:
                fail.append('%s is exported as version %s%s, the map says %s'
                            % (name, ver, '' if default else ' (non-default)', where[name]))

    header = read_header(a.header)
    declared = api_names(header)
    seen = set()
    for n in declared:
        if n in seen:
            fail.append('header: %s declared twice with HSCOPE_API' % n)
        seen.add(n)
    for n in sorted(set(declared) - mapped):
        fail.append('header declares HSCOPE_API %s but the map does not list it' % n)
    for n in sorted(mapped - set(declared)):
        fail.append('map lists %s but the header has no HSCOPE_API declaration of it' % n)

    so = soname(a.lib)
    if not so or not re.match(r'^libheapscope\.so\.[0-9]+$', so):
        fail.append('SONAME is %r, expected libheapscope.so.N' % so)

    if fail:
        print('FAIL: exported symbols, linker map and header disagree:')
        for f in fail:
            print('  ' + f)
        return 1
    print('ok: %d symbols exported = map (%s) = HSCOPE_API declarations; SONAME %s'
          % (len(mapped), ', '.join('%s: %d' % (n, len(nodes[n])) for n in order), so))
    return 0


# ---------------------------------------------------------------------------
# lint

FORBIDDEN_FIELD = re.compile(r'\b(bool|_Bool|long|short|unsigned|signed|enum|size_t|'
                             r'ssize_t|off_t|float|double|int|char)\b')
FORBIDDEN_PARAM = re.compile(r'\b(bool|_Bool|long|short|enum|float|double)\b')


def struct_bodies(code):
    """[(tag, typedef name, [member decls])] of structs defined in the header."""
    out = []
    for m in re.finditer(r'typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;', code, re.S):
        members = [' '.join(x.split()) for x in m.group(2).split(';') if x.strip()]
        out.append((m.group(1), m.group(3), members))
    return out


def opaque_handles(code):
    """[(tag, typedef name)] of `typedef struct tag name;` without a body here."""
    defined = set(re.findall(r'\bstruct\s+(\w+)\s*\{', code))
    return [(t, n) for t, n in re.findall(r'typedef\s+struct\s+(\w+)\s+(\w+)\s*;', code)
            if t not in defined]


def cmd_lint(a):
    raw = read_header(a.header)
    code = strip_comments(raw)
    fail = []
    structs = struct_bodies(code)
    struct_names = {n for _, n, _ in structs}
    for tag, name, members in structs:
        if name.endswith('_t'):
            fail.append('struct %s: only opaque handles take the _t suffix' % name)
        if not tag.startswith('hscope_') or tag != name:
            fail.append('struct %s: tag and typedef name should both be hscope_*' % name)
        if not members or not re.match(r'^uint32_t size$', members[0]):
            fail.append('struct %s: first member must be "uint32_t size" '
                        '(size-versioned struct)' % name)
        for mem in members:
            if ':' in mem:
                fail.append('struct %s: bit-field %r' % (name, mem))
            if re.search(r'\(\s*\*\s*\w+\s*\)\s*\(', mem):
                continue                       # function pointer member
            if re.match(r'^char \w+\[\w+\]$', mem):
                continue                       # fixed message buffer
            # a pointer's pointee type does not change the struct's layout
            if '*' in mem:
                continue
            if FORBIDDEN_FIELD.search(mem):
                fail.append('struct %s: member %r is not a fixed-width type '
                            '(use uintN_t / intN_t)' % (name, mem))
            if re.match(r'^(\w+) ', mem) and re.match(r'^(\w+) ', mem).group(1) in struct_names:
                fail.append('struct %s: member %r embeds a struct (its growth would '
                            'move our tail)' % (name, mem))
    for tag, name in opaque_handles(code):
        if not name.endswith('_t'):
            fail.append('opaque handle %s should end in _t' % name)
    for m in re.finditer(r'\benum\s*(\w*)\s*\{(.*?)\}', code, re.S):
        for entry in m.group(2).split(','):
            entry = entry.strip()
            if entry and '=' not in entry:
                fail.append('enum %s: constant %s has no explicit value' % (m.group(1), entry))
    decls = api_decls(raw)
    names = {n for n, _ in decls}
    for macro in re.findall(r'#\s*define\s+(HSCOPE_\w+)_INIT\b', raw):
        twin = macro.lower() + '_init'
        if twin not in names:
            fail.append('%s_INIT has no function twin %s()' % (macro, twin))
    members_of = {name: mem for _, name, mem in structs}
    for macro, body in re.findall(r'#\s*define\s+(HSCOPE_\w+_INIT)\s+(.*)', raw):
        m = re.match(r'\{\s*sizeof\((\w+)\)', body)
        if not m:
            fail.append('%s must start with sizeof(...)' % macro)
            continue
        # one initializer per member, so that -Wmissing-field-initializers
        # stays quiet for users when a member is appended
        depth, fields = 0, 1
        for ch in body.strip()[1:-1]:
            depth += ch in '({'
            depth -= ch in ')}'
            fields += ch == ',' and depth == 0
        want = len(members_of.get(m.group(1), []))
        if want and fields != want:
            fail.append('%s has %d initializers, %s has %d members'
                        % (macro, fields, m.group(1), want))
    for name, decl in decls:
        if not name.startswith('hscope_'):
            fail.append('%s: exported names start with hscope_' % name)
        if '...' in decl:
            fail.append('%s: varargs' % name)
        params = decl[decl.index('(') + 1:decl.rindex(')')]
        ret = decl[:decl.index(name)]
        if FORBIDDEN_PARAM.search(params) or FORBIDDEN_PARAM.search(ret):
            fail.append('%s: bool/long/short/enum/float in the signature: %s' % (name, decl))
        for p in [ret] + params.split(','):
            words = re.findall(r'\w+', p)
            if '*' not in p and any(w in struct_names for w in words):
                fail.append('%s: struct passed or returned by value: %s' % (name, p.strip()))
        if params.strip() == '':
            fail.append('%s: write (void) for an empty parameter list' % name)
        if name.endswith('_free'):
            if not re.match(r'^void\s', ret.strip() + ' ') or params.count(',') != 0 \
                    or '*' not in params:
                fail.append('%s: destructors are "void x_free(T *x)"' % name)
    if fail:
        print('FAIL: header breaks the ABI rules (docs/ABI.md):')
        for f in fail:
            print('  ' + f)
        return 1
    print('ok: %d structs size-versioned, %d opaque handles, %d functions, '
          'enum values explicit, _INIT twins present'
          % (len(structs), len(opaque_handles(code)), len(decls)))
    return 0


# ---------------------------------------------------------------------------
# constants

SKIP_MACRO = re.compile(r'^(HSCOPE_API|HSCOPE_VERSION_\w+|HSCOPE_\w+_INIT|HSCOPE_BUILDING_\w+)$')
INT_EXPR = re.compile(r'^[\s()0-9a-fA-FxXuUlL<>|&+\-*~]*(\((uint|int)(8|16|32|64)_t\)|'
                      r'\(hscope_\w+\))?[\s()0-9a-fA-FxXuUlL<>|&+\-*~]*$')


def evaluate_constants(header, incdirs):
    cc = os.environ.get('CC', 'cc')
    incs = []
    for d in incdirs:
        incs += ['-I', d]
    src = '#include <heapscope/heapscope.h>\n'
    with tempfile.TemporaryDirectory() as tmp:
        c = os.path.join(tmp, 'k.c')
        with open(c, 'w') as f:
            f.write(src)
        macros = subprocess.run([cc, '-E', '-dM'] + incs + [c], check=True,
                                stdout=subprocess.PIPE, universal_newlines=True).stdout
        names = []
        for line in macros.splitlines():
            m = re.match(r'#define\s+(HSCOPE_\w+)(\(?)\s*(.*)$', line)
            if not m or m.group(2) or SKIP_MACRO.match(m.group(1)):
                continue
            if not m.group(3) or not INT_EXPR.match(m.group(3)):
                continue
            names.append(m.group(1))
        code = strip_comments(read_header(header))
        for m in re.finditer(r'\benum\s*\w*\s*\{(.*?)\}', code, re.S):
            for entry in m.group(1).split(','):
                n = entry.split('=')[0].strip()
                if n:
                    names.append(n)
        names = sorted(set(names))
        body = ''.join('    printf("%%s %%lld\\n", "%s", (long long)(%s));\n' % (n, n)
                       for n in names)
        with open(c, 'w') as f:
            f.write('#include <stdio.h>\n#include <heapscope/heapscope.h>\n'
                    'int main(void)\n{\n%s    return 0;\n}\n' % body)
        exe = os.path.join(tmp, 'k')
        subprocess.run([cc, '-std=c11', '-o', exe] + incs + [c], check=True)
        out = subprocess.run([exe], check=True, stdout=subprocess.PIPE,
                             universal_newlines=True).stdout
    vals = {}
    for line in out.splitlines():
        n, v = line.split()
        vals[n] = int(v)
    return vals


def cmd_constants(a):
    vals = evaluate_constants(a.header, a.include)
    if a.write:
        with open(a.write, 'w') as f:
            f.write('# Public integer constants of heapscope.h (macros and enum values):\n'
                    '# fixed and append-only (docs/ABI.md).  Regenerate with\n'
                    '# scripts/abi-update.sh.\n')
            for n in sorted(vals):
                f.write('%s %d\n' % (n, vals[n]))
        print('wrote %d constants to %s' % (len(vals), a.write))
    if not a.baseline:
        return 0
    base = {}
    for line in open(a.baseline, encoding='utf-8'):
        line = line.strip()
        if line and not line.startswith('#'):
            n, v = line.split()
            base[n] = int(v)
    fail = []
    for n in sorted(base):
        if n not in vals:
            fail.append('%s (was %d) is gone' % (n, base[n]))
        elif n.endswith('__COUNT') and vals[n] >= base[n]:
            continue                       # a count grows with its append-only list
        elif vals[n] != base[n]:
            fail.append('%s changed from %d to %d' % (n, base[n], vals[n]))
    added = sorted(set(vals) - set(base))
    if added:
        print('new constants (compatible): ' + ', '.join(added))
    if fail:
        print('FAIL: public constants changed incompatibly against %s:' % a.baseline)
        for f in fail:
            print('  ' + f)
        print('Constants are fixed and append-only (docs/ABI.md).  If this is an '
              'intended break (new SONAME), run scripts/abi-update.sh.')
        return 1
    print('ok: %d baseline constants unchanged, %d new' % (len(base), len(added)))
    return 0


# ---------------------------------------------------------------------------
# suppressions


def cmd_suppressions(a):
    code = strip_comments(read_header(a.header))
    handles = sorted(t for t, _ in opaque_handles(code))
    sized = sorted(tag for tag, _, mem in struct_bodies(code)
                   if mem and re.match(r'^uint32_t size$', mem[0]))
    print('# Generated from %s by tests/abi/abi_header.py.' % os.path.basename(a.header))
    if handles:
        print('# Opaque handles: their layout is private to the library.')
        print('[suppress_type]\n  type_kind = struct\n  name_regexp = ^(%s)$'
              % '|'.join(re.escape(h) for h in handles))
    if sized:
        print('# Size-versioned structs may grow at the end (the caller passes size).')
        print('[suppress_type]\n  type_kind = struct\n  name_regexp = ^(%s)$\n'
              '  has_data_member_inserted_at = end'
              % '|'.join(re.escape(s) for s in sized))
    return 0


def cmd_api(a):
    for n in api_names(read_header(a.header)):
        print(n)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = p.add_subparsers(dest='cmd', required=True)
    e = sub.add_parser('exports')
    e.add_argument('--lib', required=True)
    e.add_argument('--map', required=True)
    e.add_argument('--header', required=True)
    l = sub.add_parser('lint')
    l.add_argument('--header', required=True)
    c = sub.add_parser('constants')
    c.add_argument('--header', required=True)
    c.add_argument('-I', '--include', action='append', default=[])
    c.add_argument('--baseline')
    c.add_argument('--write')
    s = sub.add_parser('suppressions')
    s.add_argument('--header', required=True)
    i = sub.add_parser('api')
    i.add_argument('--header', required=True)
    a = p.parse_args()
    return {'exports': cmd_exports, 'lint': cmd_lint, 'constants': cmd_constants,
            'suppressions': cmd_suppressions, 'api': cmd_api}[a.cmd](a)


if __name__ == '__main__':
    sys.exit(main())
