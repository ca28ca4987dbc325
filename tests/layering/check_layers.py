#!/usr/bin/env python3
"""
check_layers.py - the layer rule of src/README.md, checked.

    core <- io <- parse <- model+index <- analysis <- report <- api
    (cli: the public header and its own headers only)
    (serve: the public header and its own headers only; cli may include
     serve's, to start the server)

index/ (the heap's address index and reverse references) is one layer with
model/: the model builds and queries it while loading, and it works on the
heap's columns.

Fails (exit 1, one line per violation) when, under ROOT/src:
  export   a file outside src/api/ defines an exported function (HSCOPE_API,
           or a non-static hscope_ name that is not hscope__; in src/cli/,
           the program's own hscope_cli_ names are not the library's);
  include  an #include goes up the layer order, or from analysis/ or report/
           to io/ or parse/ (they read dumps through model/); a cli file
           includes any library header but the public one;
  call     a file uses a function of a layer it may not include: an
           hscope__ function of an upper layer, a public hscope_ function
           (defined in api/) from below api/, a parse/ or io/ function from
           analysis/ or report/; cli uses no hscope__ function at all;
  cli-len  a src/cli/*.c or src/serve/*.c file has more than 600 lines;
  fn-len   a function in src/ has more than 120 lines (from the line of its
           name to its closing brace);
  hdr-len  a header in src/ has more than 350 lines: one header per
           module (src/analysis/tally.h, src/report/jsonw.h ...), so that
           a reader sees what each file offers;
  include-unused  a library file (not cli/ or serve/, whose opts.h and
           serve.h gather what a front end needs) includes a header of src/
           and uses none of the names it declares (functions, typedefs,
           struct tags and the public handle typedef of a struct defined
           there, macros, enum constants): each file includes the headers
           of the modules it uses, and only those.

and under ROOT/bindings/ruby/ext (the Ruby extension, which the gem may
compile flat with the library's sources):
  ext-include  an #include other than the public header
           <heapscope/heapscope.h>, Ruby's and the system's headers, and
           the extension's own headers ("rb_*.h" beside it);
  ext-call     a use of an internal hscope__ function;
  ext-export   a non-static function whose name does not start with
           hscope_rb_ (Init_heapscope aside): the shared names stay out of
           the library's namespace;
  ext-len      a file over 800 lines;
  fn-len       a function over 120 lines, as in src/.

A function's layer is the directory of the file that defines it (static
inline functions of a header: the header's).  There are no exceptions.

--self-test plants one violation of each kind in a copy of the tree and
checks that each is caught.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

LAYERS = ["core", "io", "parse", "model", "index", "analysis", "report", "api", "serve", "cli"]
RANK = {"core": 0, "io": 1, "parse": 2, "model": 3, "index": 3, "analysis": 4, "report": 5,
        "api": 6, "serve": 7, "cli": 8}
# Front ends: the program's files, on the public header only.  serve/ is
# the HTTP server of `heapscope serve`, started by cli/cmd_serve.c.
FRONT = {"cli": "hscope_cli_", "serve": "hscope_srv_"}
# What each layer's files may include and call: the layers below it, except
# that analysis/ and report/ reach the dump's bytes and the parser only
# through model/ (they never include io/ or parse/ headers, nor call them).
LIB = ["core", "io", "parse", "model", "index", "analysis", "report", "api"]
MAY_USE = {
    "core": {"core"},
    "io": {"core", "io"},
    "parse": {"core", "io", "parse"},
    "model": {"core", "io", "parse", "model", "index"},
    "index": {"core", "io", "parse", "model", "index"},
    "analysis": {"core", "model", "index", "analysis"},
    "report": {"core", "model", "index", "analysis", "report"},
    "api": set(LIB),
    "serve": {"serve"},  # and the public header, as cli
    "cli": {"cli", "serve"},  # and the public header (found on the include path, not in src/)
}
CLI_MAX_LINES = 600
EXT_DIR = "bindings/ruby/ext"
EXT_MAX_LINES = 800
FN_MAX_LINES = 120
HDR_MAX_LINES = 350
HERE = os.path.dirname(os.path.abspath(__file__))

IDENT = re.compile(r"[A-Za-z_]\w*")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case",
            "defined", "_Alignof", "alignof", "_Static_assert", "static_assert",
            "__attribute__", "typeof", "__typeof__", "_Generic"}


def blank_code(text):
    """The text with comments, string and character literals and preprocessor
    lines (with their continuations) blanked out; newlines kept."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if at_line_start and c == "#":
            # a preprocessor line, with its backslash continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                if text.startswith("/*", i):  # a comment may span lines
                    j = text.find("*/", i + 2)
                    j = n if j < 0 else j + 2
                    out.append(re.sub(r"[^\n]", " ", text[i:j]))
                    i = j
                    continue
                out.append(" ")
                i += 1
            continue
        at_line_start = False
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + (c if j - 1 > i else ""))
            i = j
        else:
            if c == "\n":
                at_line_start = True
            out.append(c)
            i += 1
    return "".join(out)


def functions(code):
    """Function definitions at file scope of blanked code: (name, first line,
    last line, is_static, text before the name on its declaration)."""
    found = []
    depth = 0
    i, n = 0, len(code)
    stmt_start = 0  # where the current file-scope declaration began
    while i < n:
        c = code[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                stmt_start = i + 1
        elif c == ";" and depth == 0:
            stmt_start = i + 1
        elif c == "(" and depth == 0:
            m = re.search(r"([A-Za-z_]\w*)\s*$", code[stmt_start:i])
            close = matching(code, i, "(", ")")
            if m and close > 0 and m.group(1) not in KEYWORDS:
                k = close + 1
                while k < n and code[k].isspace():
                    k += 1
                # old-style attributes after the parameters are not used here
                if k < n and code[k] == "{":
                    end = matching(code, k, "{", "}")
                    if end < 0:
                        break
                    name = m.group(1)
                    name_pos = stmt_start + m.start(1)
                    head = code[stmt_start:name_pos]
                    found.append((name, code.count("\n", 0, name_pos) + 1,
                                  code.count("\n", 0, end) + 1,
                                  re.search(r"\bstatic\b", head) is not None, head))
                    i = end + 1
                    stmt_start = i
                    continue
            if close > 0:
                i = close
        i += 1
    return found


def matching(code, i, op, cl):
    depth = 0
    for j in range(i, len(code)):
        if code[j] == op:
            depth += 1
        elif code[j] == cl:
            depth -= 1
            if depth == 0:
                return j
    return -1


# The blanked code and the functions of a file's text, kept by text: the
# self-test checks 30 copies of the tree that differ in one file each.
_analysed = {}


def analysed(text):
    got = _analysed.get(text)
    if got is None:
        code = blank_code(text)
        got = _analysed[text] = (code, functions(code))
    return got


class Source:
    def __init__(self, root, rel):
        self.rel = rel
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            self.text = f.read()
        self.code, self.fns = analysed(self.text)
        parts = rel.split("/")
        self.layer = parts[1] if len(parts) > 2 and parts[1] in RANK else None
        self.lines = self.text.count("\n") + (0 if self.text.endswith("\n") else 1)


def sources(root):
    out = []
    src = os.path.join(root, "src")
    for d, _, files in os.walk(src):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                rel = os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
                out.append(Source(root, rel))
    return sorted(out, key=lambda s: s.rel)


def ext_sources(root):
    """The Ruby extension's own C files (not a vendored copy of src/)."""
    out = []
    top = os.path.join(root, EXT_DIR)
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x != "vendor")
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                rel = os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
                out.append(Source(root, rel))
    return out


def check_ext(root):
    """The violations of the Ruby extension, as check() returns them."""
    v = []
    srcs = ext_sources(root)
    for s in srcs:
        own = {os.path.basename(x.rel) for x in srcs
               if os.path.dirname(x.rel) == os.path.dirname(s.rel) and x.rel.endswith(".h")}
        for m in re.finditer(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', s.text, re.M):
            quoted, target = m.group(1) == '"', m.group(2)
            if quoted:
                bad = target not in own
            else:
                bad = target.startswith("heapscope/") and target != "heapscope/heapscope.h"
            if bad or "src/" in target or target.startswith(".."):
                v.append(("ext-include", s.rel, "", "includes %s%s%s (only the public header, "
                          "Ruby's, the system's and its own)" % (m.group(1), target,
                                                                 ">" if not quoted else '"')))
        seen = set()
        for m in IDENT.finditer(s.code):
            name = m.group(0)
            if name.startswith("hscope__") and name not in seen:
                seen.add(name)
                line = s.code.count("\n", 0, m.start()) + 1
                v.append(("ext-call", s.rel, name, "line %d: uses the library's internal %s"
                          % (line, name)))
        for name, line, last, static, _ in s.fns:
            if not static and name != "Init_heapscope" and not name.startswith("hscope_rb_"):
                v.append(("ext-export", s.rel, name, "line %d: %s is not static and not "
                          "named hscope_rb_*" % (line, name)))
            if last - line + 1 > FN_MAX_LINES:
                v.append(("fn-len", s.rel, name, "%s: %d lines (at most %d)"
                          % (name, last - line + 1, FN_MAX_LINES)))
        if s.lines > EXT_MAX_LINES:
            v.append(("ext-len", s.rel, "", "%d lines (at most %d)" % (s.lines, EXT_MAX_LINES)))
    return v


def declared(s):
    """The names a header declares: functions (and static inline ones),
    typedefs, struct/union/enum tags, enum constants, macros and extern
    variables."""
    names = set(re.findall(r"^\s*#\s*define\s+(\w+)", s.text, re.M))
    code = s.code
    depth = 0  # braces
    start = 0
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                head = code[start:i]
                names.update(re.findall(r"\b(?:struct|union|enum)\s+(\w+)\s*$", head))
                if re.search(r"\benum\b[^;]*$", head):
                    body = code[i + 1:matching(code, i, "{", "}")]
                    names.update(re.findall(r"(?:^|,)\s*([A-Za-z_]\w*)", body))
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                m = re.match(r"\s*(\w+)\s*;", code[i + 1:])
                if m:
                    names.add(m.group(1))
        elif c == ";" and depth == 0:
            stmt = code[start:i]
            flat = re.sub(r"\{[^{}]*\}", "", stmt)
            while re.search(r"\{[^{}]*\}", flat):
                flat = re.sub(r"\{[^{}]*\}", "", flat)
            if re.match(r"\s*typedef\b", flat):
                m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", flat) or re.search(r"(\w+)\s*(?:\[[^]]*\])?\s*$", flat)
                if m:
                    names.add(m.group(1))
            else:
                m = re.match(r"[^(]*?(\w+)\s*(?:\(|\[|$)", flat.strip())
                if m:
                    names.add(m.group(1))
            start = i + 1
        if depth == 0 and c in ";}":
            start = i + 1
    names.update(f[0] for f in s.fns)
    # the definition of a public handle's struct: its users name the typedef
    names.update(n + "_t" for n in list(names) if re.match(r"hscope_[a-z]", n))
    return names - KEYWORDS


def include_target(root, s, target):
    """The src/ file an #include "target" of s names, or None (system or
    public headers, found on the include path)."""
    p = os.path.normpath(os.path.join(os.path.dirname(s.rel), target)).replace(os.sep, "/")
    if p.startswith("src/") and os.path.exists(os.path.join(root, p)):
        return p
    return None


def check(root):
    """The violations under root: a list of (kind, path, function or '', text)."""
    srcs = sources(root)
    v = []
    decls = {s.rel: declared(s) for s in srcs if s.rel.endswith(".h")}
    owner = {}  # function name -> layer of its definition (non-static, or a header's inline)
    for s in srcs:
        if not s.layer:
            continue
        for name, _, _, static, _ in s.fns:
            if not static or s.rel.endswith(".h"):
                owner.setdefault(name, s.layer)
    for s in srcs:
        if s.layer is None:
            continue
        # exported definitions
        if s.layer != "api":
            for name, line, _, static, head in s.fns:
                public = re.match(r"hscope_[a-z0-9]", name) and not static
                if s.layer in FRONT and name.startswith(FRONT[s.layer]):
                    public = False  # the heapscope program's names, not linked into the library
                if "HSCOPE_API" in head or public:
                    v.append(("export", s.rel, name,
                              "line %d: %s is exported outside src/api/" % (line, name)))
        # includes
        used = set(IDENT.findall(s.code))
        for m in re.finditer(r'^\s*#\s*include\s*"([^"]+)"', s.text, re.M):
            t = include_target(root, s, m.group(1))
            if t is None:
                continue
            if s.layer in LIB and t in decls and not (decls[t] & used):
                v.append(("include-unused", s.rel, "", "includes %s and uses none of its names"
                          % t))
            tl = t.split("/")[1]
            if tl not in MAY_USE[s.layer]:
                v.append(("include", s.rel, "", "includes %s (layer %s may not use %s)"
                          % (t, s.layer, tl)))
        # uses of functions defined in a higher layer
        own = {f[0] for f in s.fns}
        seen = set()
        for m in IDENT.finditer(s.code):
            name = m.group(0)
            if not name.startswith("hscope_") or name in own or name in seen:
                continue
            seen.add(name)
            ol = owner.get(name)
            if ol is None:
                continue
            if s.layer in FRONT:
                bad = name.startswith("hscope__") or ol not in MAY_USE[s.layer] | {"api"}
            else:
                bad = ol not in MAY_USE[s.layer]
            if bad:
                line = s.code.count("\n", 0, m.start()) + 1
                v.append(("call", s.rel, name, "line %d: layer %s uses %s of layer %s"
                          % (line, s.layer, name, ol)))
        # lengths
        if s.layer in FRONT and s.rel.endswith(".c") and s.lines > CLI_MAX_LINES:
            v.append(("cli-len", s.rel, "", "%d lines (at most %d)" % (s.lines, CLI_MAX_LINES)))
        if s.rel.endswith(".h") and s.lines > HDR_MAX_LINES:
            v.append(("hdr-len", s.rel, "", "%d lines (at most %d)" % (s.lines, HDR_MAX_LINES)))
        for name, first, last, _, _ in s.fns:
            if last - first + 1 > FN_MAX_LINES:
                v.append(("fn-len", s.rel, name, "%s: %d lines (at most %d)"
                          % (name, last - first + 1, FN_MAX_LINES)))
    return v


def run(root):
    """Every violation under root, one line each."""
    return ["%s %s: %s" % (kind, path, text) for kind, path, _, text in check(root) + check_ext(root)]


# ---------------------------------------------------------------------
# self-test: plant each kind of violation in a copy and see it caught
# ---------------------------------------------------------------------

def plant(root, rel, text, where="end"):
    p = os.path.join(root, rel)
    with open(p, encoding="utf-8") as f:
        old = f.read()
    if where == "start":
        new = text + old
    else:
        new = old + text
    with open(p, "w", encoding="utf-8") as f:
        f.write(new)


def long_fn(name, lines):
    body = "".join("    x += %d;\n" % i for i in range(lines - 4))  # name line to brace: lines
    return "\nstatic int\n%s(int x)\n{\n%s    return x;\n}\n" % (name, body)


PLANTS = [
    # (what, file, text, where, expected kind, expected substring)
    ("HSCOPE_API definition in analysis/", "src/analysis/tally.c",
     "\nHSCOPE_API int\nhscope_planted_api(void)\n{\n    return 0;\n}\n", "end",
     "export", "hscope_planted_api"),
    ("public name defined in model/ without HSCOPE_API", "src/model/model.c",
     "\nint\nhscope_planted_public(int x)\n{\n    return x;\n}\n", "end",
     "export", "hscope_planted_public"),
    ("parse/ including analysis/", "src/parse/parse.c",
     '#include "../analysis/tally.h"\n', "start", "include", "src/analysis/tally.h"),
    ("analysis/ including parse/", "src/analysis/diff.c",
     '#include "../parse/parse.h"\n', "start", "include", "src/parse/parse.h"),
    ("cli/ including a library header", "src/cli/main.c",
     '#include "../model/model.h"\n', "start", "include", "src/model/model.h"),
    ("model/ calling a public function", "src/model/model.c",
     "\nstatic void\nplanted_call(hscope_error *e)\n{\n    hscope_error_init(e);\n}\n", "end",
     "call", "hscope_error_init"),
    ("parse/ calling an analysis function", "src/parse/builder.c",
     "\nstatic void *\nplanted_up(void)\n{\n    return (void *)hscope__tally_run;\n}\n", "end",
     "call", "hscope__tally_run"),
    ("HSCOPE_API definition in cli/", "src/cli/tty.c",
     "\nHSCOPE_API int\nhscope_cli_planted(void)\n{\n    return 0;\n}\n", "end",
     "export", "hscope_cli_planted"),
    ("a library name defined in cli/", "src/cli/tty.c",
     "\nint\nhscope_planted_lib(void)\n{\n    return 0;\n}\n", "end",
     "export", "hscope_planted_lib"),
    ("report/ calling the parser", "src/report/out.c",
     "\nstatic void *\nplanted_skip(void)\n{\n    return (void *)hscope__parse_path;\n}\n", "end",
     "call", "hscope__parse_path"),
    ("cli/ calling an internal function", "src/cli/main.c",
     "\nstatic void\nplanted_cli(void)\n{\n    hscope__error_init(0);\n}\n", "end",
     "call", "hscope__error_init"),
    ("serve/ including a library header", "src/serve/api.c",
     '#include "../analysis/tally.h"\n', "start", "include", "src/analysis/tally.h"),
    ("serve/ including a cli header", "src/serve/lazy.c",
     '#include "../cli/opts.h"\n', "start", "include", "src/cli/opts.h"),
    ("serve/ calling an internal function", "src/serve/lazy.c",
     "\nstatic void\nplanted_srv(void)\n{\n    hscope__error_init(0);\n}\n", "end",
     "call", "hscope__error_init"),
    ("a library name defined in serve/", "src/serve/api.c",
     "\nint\nhscope_planted_srv(void)\n{\n    return 0;\n}\n", "end",
     "export", "hscope_planted_srv"),
    ("a serve file over 600 lines", "src/serve/lazy.c",
     "".join("/* filler %d */\n" % i for i in range(CLI_MAX_LINES)), "end",
     "cli-len", "src/serve/lazy.c"),
    ("a CLI file over 600 lines", "src/cli/tty.c",
     "".join("/* filler %d */\n" % i for i in range(CLI_MAX_LINES)), "end",
     "cli-len", "src/cli/tty.c"),
    ("a header over 350 lines", "src/analysis/tally.h",
     "".join("/* filler %d */\n" % i for i in range(HDR_MAX_LINES)), "end",
     "hdr-len", "src/analysis/tally.h"),
    ("report/ including an analysis header it does not use", "src/report/out.c",
     '#include "../analysis/budget.h"\n', "start", "include-unused", "src/analysis/budget.h"),
    ("analysis/ including a sibling module's header it does not use", "src/analysis/order.c",
     '#include "suspects.h"\n', "start", "include-unused", "src/analysis/suspects.h"),
    ("a function over 120 lines", "src/core/fit.c", long_fn("planted_long", FN_MAX_LINES + 1),
     "end", "fn-len", "planted_long"),
    ("the extension including a library header", EXT_DIR + "/heapscope/rb_heap.c",
     '#include "../../../../src/model/model.h"\n', "start", "ext-include", "src/model/model.h"),
    ("the extension including another public-path header", EXT_DIR + "/heapscope/rb_diff.c",
     "#include <heapscope/internal.h>\n", "start", "ext-include", "heapscope/internal.h"),
    ("the extension calling an internal function", EXT_DIR + "/heapscope/rb_tally.c",
     "\nstatic void\nplanted_ext(void)\n{\n    hscope__error_init(0);\n}\n", "end",
     "ext-call", "hscope__error_init"),
    ("the extension sharing an unprefixed name", EXT_DIR + "/heapscope/rb_waste.c",
     "\nint\nplanted_shared(void)\n{\n    return 0;\n}\n", "end",
     "ext-export", "planted_shared"),
    ("an extension file over 800 lines", EXT_DIR + "/heapscope/rb_export.c",
     "".join("/* filler %d */\n" % i for i in range(EXT_MAX_LINES)), "end",
     "ext-len", EXT_DIR + "/heapscope/rb_export.c"),
    ("an extension function over 120 lines", EXT_DIR + "/heapscope/rb_html.c",
     long_fn("planted_ext_long", FN_MAX_LINES + 1), "end", "fn-len", "planted_ext_long"),
]


def copy_tree(root, dest):
    """src/ and the extension's files (not its vendored copy) into dest."""
    shutil.copytree(os.path.join(root, "src"), os.path.join(dest, "src"))
    ext = os.path.join(root, EXT_DIR)
    if os.path.isdir(ext):
        shutil.copytree(ext, os.path.join(dest, EXT_DIR), ignore=shutil.ignore_patterns("vendor"))


def self_test(root):
    failures = []
    with tempfile.TemporaryDirectory(prefix="hscope-layering-") as tmp:
        base = os.path.join(tmp, "clean")
        copy_tree(root, base)
        clean = set(run(base))
        # a function of exactly the limit passes
        ok = os.path.join(tmp, "limit")
        copy_tree(base, ok)
        plant(ok, "src/core/fit.c", long_fn("planted_at_limit", FN_MAX_LINES))
        extra = set(run(ok)) - clean
        if extra:
            failures.append("a %d-line function was reported: %s" % (FN_MAX_LINES, sorted(extra)))
        for i, (what, rel, text, where, kind, needle) in enumerate(PLANTS):
            t = os.path.join(tmp, "p%d" % i)
            copy_tree(base, t)
            plant(t, rel, text, where)
            new = set(run(t)) - clean
            hit = [x for x in new if x.startswith(kind + " " + rel) and needle in x]
            print("%-4s %s: %s" % ("ok" if hit else "MISS", what, hit[0] if hit else sorted(new)))
            if not hit:
                failures.append("not caught: " + what)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.normpath(os.path.join(HERE, "..", "..")),
                    help="the source tree (holding src/)")
    ap.add_argument("--self-test", action="store_true",
                    help="plant each kind of violation in a copy of ROOT's src/ and check it is caught")
    a = ap.parse_args()
    if a.self_test:
        return self_test(a.root)
    problems = run(a.root)
    for p in problems:
        print(p)
    print("layering: %d problem%s" % (len(problems), "" if len(problems) == 1 else "s"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
