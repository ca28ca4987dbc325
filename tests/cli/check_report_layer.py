#!/usr/bin/env python3
"""The CLI's output after the report layer moved into the library, each
promise of the report layer for these commands checked
against an expectation computed here from the hand-made dumps:

  1. text tables fit the width ($COLUMNS when not a terminal): no line
     longer, the count column where the table puts it whatever the key's
     length (tally, diff, retained --by), a long key cut in the middle with
     "…" and its end (file name, line, class) kept;
  2. a class name is never cut (retained's "TYPE class", a site key's
     class): the table grows for it, its columns aligned;
  3. thousands separators (dominators, retained) and plurals ("1 leaked
     object", "1 object", "(1 object)") in text;
  4. one JSON vocabulary: tally/diff "groups" lists with "group_count";
     totals as {"count", "memsize"} (no total_memsize); suspects and diff
     with "dumps" [{"path", "objects"}] and "warnings"; the super-root is
     "(roots)" in text, JSON, --full and folded stacks, never "(several
     roots)" or "(super-root)";
  5. the same names in text and JSON (a class by its own name; root
     category names);
  6. the shared options are accepted by every command that reads a dump
     (--no-index, -v, --threads, --no-progress, load options; --json and
     --top where the command has them), and --json/--top where it has not
     are usage errors that say so;
  7. --by KEY and --order RULE: each command's words for a bad or missing
     value, and --order/--by where the command has not got it;
  8. cuts keep rows apart and class names whole (timeline, root), show's
     record line holds 2,000 bytes;
  9. retained --by says its rows overlap, timeline on two dumps why growth
     is not ranked, "left out" as tally says it, no "0 to 0 missing
     addresses".

Usage: HEAPSCOPE=/path/to/heapscope check_report_layer.py WORKDIR
"""
import json
import os
import re
import shutil
import subprocess
import sys

CLI = os.environ["HEAPSCOPE"]
WORK = sys.argv[1]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import checklib  # noqa: E402
from checklib import check, failures  # noqa: E402,F401
ELL = "\u2026"


def run(*args, columns=80, ok=0):
    env = dict(os.environ, COLUMNS=str(columns))
    p = subprocess.run([CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       timeout=300)
    p.out = p.stdout.decode("utf-8", "replace")
    p.err = p.stderr.decode("utf-8", "replace")
    if ok is not None and p.returncode != ok:
        check(False, "heapscope %s: exit %d, wanted %d: %s" % (" ".join(args), p.returncode, ok,
                                                              p.err.strip()[:300]))
    return p


def jrun(*args):
    p = run(*args)
    try:
        return json.loads(p.out)
    except ValueError:
        check(False, "heapscope %s: not JSON: %r" % (" ".join(args), p.out[:200]))
        return {}


def write_dump(path, records):
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    return path


os.makedirs(WORK, exist_ok=True)
J = lambda *p: os.path.join(WORK, *p)

GEMFILE = ("/usr/local/lib/ruby/gems/3.3.0/gems/activesupport-7.1.2/lib/active_support/"
           "core_ext/object/with_options.rb")
LONGKEY = GEMFILE + ":42:String"
LONGCLASS = "Admin::Reports::Quarterly::RevenueBreakdownPresenterWithAVeryLongName"
N = 1234


def base_records(leak=0):
    """vm -> an Array of N Strings (GEMFILE:42) and a cache object of
    LONGCLASS; machine_context -> one String; the String class is reached
    from both roots, so only the super-root dominates it.  `leak` more
    Strings (app.rb:7, generation 9) hang below the cache."""
    strings = ["0x%x" % (0x100000 + 0x28 * k) for k in range(N)]
    leaked = ["0x%x" % (0x900000 + 0x28 * k) for k in range(leak)]
    recs = [
        {"type": "ROOT", "root": "vm", "references": ["0x1000", "0x3000"]},
        {"type": "ROOT", "root": "machine_context", "references": ["0x7000"]},
        {"address": "0x2000", "type": "CLASS", "name": "Array", "memsize": 100},
        {"address": "0x1000", "type": "ARRAY", "class": "0x2000", "references": strings,
         "memsize": 8 * N, "length": N, "file": "app.rb", "line": 3, "generation": 1},
        {"address": "0x4000", "type": "CLASS", "name": LONGCLASS, "memsize": 100},
        {"address": "0x3000", "type": "OBJECT", "class": "0x4000", "references": leaked,
         "memsize": 40, "file": "app.rb", "line": 5, "generation": 1},
        {"address": "0x6000", "type": "CLASS", "name": "String", "memsize": 100},
        {"address": "0x7000", "type": "STRING", "class": "0x6000", "memsize": 40},
    ]
    for a in strings:
        recs.append({"address": a, "type": "STRING", "class": "0x6000", "memsize": 40,
                     "file": GEMFILE, "line": 42, "generation": 1})
    for a in leaked:
        recs.append({"address": a, "type": "STRING", "class": "0x6000", "memsize": 40,
                     "file": "app.rb", "line": 7, "generation": 9})
    return recs


D = write_dump(J("d.json"), base_records())
A = write_dump(J("a.json"), base_records())
B = write_dump(J("b.json"), base_records(leak=1))
C = write_dump(J("c.json"), base_records(leak=1))


def table_rows(text, title_prefix):
    """The rows of the table whose header starts with title_prefix."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith(title_prefix)), None)
    if start is None:
        return None, []
    rows = []
    for l in lines[start + 1:]:
        if not l.startswith("  ") or l.startswith("      ") or l.startswith("  " + ELL):
            if l.startswith("      "):
                continue        # member addresses below a row
            break
        rows.append(l)
    return lines[start], rows


# ------------------------------------------------- 1. widths, middle cuts
for args, title, what in ((["tally", "--top", "5", D], "by file:line:class", "tally"),
                          (["diff", "--top", "5", A, B, C], "by file:line:class", "diff"),
                          (["retained", "--by", "file:line:class", D], "retained by", "retained --by")):
    for cols in (80, 120):
        p = run(*args, columns=cols)
        header, rows = table_rows(p.out, title)
        # a class name is never cut: a table with LONGCLASS in a key may be
        # wider than the width, never narrower than the class
        whole = LONGCLASS in p.out
        limit = cols if not whole else max(cols, max(len(r) for r in rows),
                                           max(len(l) for l in p.out.splitlines() if LONGCLASS in l))
        long_lines = [l for l in [header or ""] + rows if len(l) > limit]
        check(not long_lines and not any(ELL in r and "Admin::" in r and LONGCLASS not in r
                                         for r in rows),
              "%s, %d columns: no longer table line, no class cut (got %r)" %
              (what, cols, long_lines[:2] or rows[:3]))
        check(len(set(r.split("  ")[1] if "  " in r.strip() else r for r in rows)) == len(rows),
              "%s, %d columns: rows stay distinguishable (%r)" % (what, cols, rows))
        check(header is not None and rows, "%s, %d columns: a table (%r)" % (what, cols, p.out[:300]))
        if not rows:
            continue
        cell = "retained" if what == "retained --by" else "count"
        end = header.rindex(cell) + len(cell)   # cells are right-aligned
        ok = all(len(r) >= end and r[end - 1] != " " and r[end] == " " for r in rows)
        check(ok, "%s, %d columns: the %s column ends at column %d on every row, "
                  "whatever the key (rows %r)" % (what, cols, cell, end, rows))
        cut = [r for r in rows if GEMFILE.rsplit("/", 1)[1] in r or ELL in r]
        if what != "diff":
            check(cut and ELL in cut[0] and "/with_options.rb:42:String" in cut[0]
                  and cut[0].lstrip().startswith("/usr/"),
                  "%s, %d columns: the long key cut in the middle, keeping its start and "
                  "'/with_options.rb:42:String' (got %r)" % (what, cols, cut[:1]))
# wide enough: the whole key, uncut
p = run("tally", D, columns=200)
check(LONGKEY in p.out, "tally, 200 columns: the whole key (%d columns)" % len(LONGKEY))

# ------------------------------------------- 2. retained: class names whole
p = run("retained", "--top", "5", D, columns=80)
rows = [l for l in p.out.splitlines() if l.startswith("  0x")]
obj_row = [l for l in rows if "OBJECT" in l]
check(obj_row and ("OBJECT " + LONGCLASS) in obj_row[0] and ELL not in obj_row[0],
      "retained, 80 columns: 'OBJECT %s' whole: a class name is never cut (got %r)"
      % (LONGCLASS, obj_row))
ends = set(len(l) for l in rows)
check(len(ends) == 1, "retained: the table's columns stay aligned around the whole class (%r)" % rows)
p = run("retained", "--top", "5", D, columns=200)
check(any(("OBJECT " + LONGCLASS) in l for l in p.out.splitlines()),
      "retained, 200 columns: the whole class name")

# ------------------------------- 3. separators and plurals in text
p = run("dominators", "--top", "3", D, columns=120)
# the Array retains itself, its class (only it references Array) and its
# 1,234 Strings
check(re.search(r"0x1000 ARRAY Array  retained [\d.]+ KB \(1,236 objects\)", p.out) is not None,
      "dominators: 'retained ... (1,236 objects)' with a thousands separator (got %r)" % p.out[:400])
check("(1 object)" in p.out and "(1 objects)" not in p.out,
      "dominators: '(1 object)', never '(1 objects)'")
check(re.search(r"reachable objects; 0 unreachable", p.out) is not None, "dominators: head line")
p = run("retained", "--top", "3", D, columns=120)
check(re.search(r"\s1,236\s", p.out) is not None, "retained: 1,236 objects with a separator")
p = run("diff", A, B, C)
check("leaked: 1 object, 40 B" in p.out, "diff: 'leaked: 1 object' (got %r)" % p.out[:400])
p = run("suspects", A, B, C)
check(re.search(r"holds 1 leaked object \(40 B\)", p.out) is not None,
      "suspects: 'holds 1 leaked object' (got %r)" % p.out[-400:])
check("1 leaked objects" not in p.out, "suspects: never '1 leaked objects'")

# ------------------------------------------------ 4. one vocabulary
t = jrun("tally", "--json", "--top", "2", D)
# groups: GEMFILE:42:String, (none):0:<hidden> (the 3 classes), app.rb:3:Array,
# app.rb:5:LONGCLASS, (none):0:String (0x7000)
check(isinstance(t.get("groups"), list) and t.get("group_count") == 5 and len(t["groups"]) == 2,
      "tally --json: groups a list of 2 rows, group_count 5 (got %r)" %
      {k: t.get(k) for k in ("groups", "group_count")})
check(t.get("total") == {"count": N + 6, "memsize": 8 * N + 40 * N + 100 * 3 + 40 + 40}
      and "rows" not in t and "total_memsize" not in t,
      "tally --json: total {count, memsize} (got %r)" % t.get("total"))
s = jrun("summary", "--json", D)
check(s.get("total") == t.get("total") and "total_memsize" not in s and "objects" not in s,
      "summary --json: total {count, memsize}, no total_memsize (got %r)" % s.get("total"))
for cmd in ("diff", "suspects"):
    d = jrun(cmd, "--json", A, B, C)
    check(d.get("dumps") == [{"path": A, "objects": N + 6}, {"path": B, "objects": N + 7},
                             {"path": C, "objects": N + 7}],
          "%s --json: dumps [{path, objects}] (got %r)" % (cmd, d.get("dumps")))
    check(d.get("leaked") == {"count": 1, "memsize": 40}, "%s --json: leaked {count, memsize}" % cmd)
    check(isinstance(d.get("warnings"), list), "%s --json: warnings" % cmd)
    check(d.get("kind") == cmd, "%s --json: kind" % cmd)
d = jrun("diff", "--json", A, B, C)
check(d.get("group_count") == 1 and d.get("groups") == [{"key": "app.rb:7:String", "count": 1,
                                                        "memsize": 40}],
      "diff --json: groups and group_count at the top (got %r)" % d.get("groups"))
outs = {
    "dominators --json": run("dominators", "--json", "--top", "0", D).out,
    "dominators --json --full": run("dominators", "--json", "--full", D).out,
    "dominators (text)": run("dominators", "--top", "0", D).out,
    "dominators --json ADDR": run("dominators", "--json", D, "0x6000").out,
    "dominators ADDR": run("dominators", D, "0x6000").out,
    "retained --folded": run("retained", "--folded", D).out,
}
for what, out in outs.items():
    check("(roots)" in out, "%s: the super-root is (roots)" % what)
    check("several roots" not in out and "super-root" not in out,
          "%s: no '(several roots)' or '(super-root)'" % what)
dj = json.loads(outs["dominators --json"])
check([c["root"] for c in dj["top"]] == ["vm", "machine_context", "(roots)"] and
      [k["address"] for k in dj["top"][2]["children"]] == ["0x6000"],
      "dominators --json: the String class under (roots) (got %r)" %
      [(c["root"], [k["address"] for k in c["children"]]) for c in dj["top"]])
check(json.loads(outs["dominators --json --full"])["idom"].get("0x6000") == "(roots)",
      "dominators --json --full: idom of the String class is (roots)")

# --------------------------------------- 5. the same names, text and JSON
k = next(c for c in dj["top"] if c["root"] == "vm")["children"]
cache = next(x for x in k if x["address"] == "0x3000")
check(cache["label"] == LONGCLASS and cache["class"] == LONGCLASS,
      "dominators --json: the cache object labelled %s" % LONGCLASS)
klass = dj["top"][2]["children"][0]
check(klass["label"] == "String" and klass["class"] == "<hidden>",
      "dominators --json: the class String labelled by its own name (got %r)" % klass)
check("0x6000 CLASS String  retained" in outs["dominators (text)"],
      "dominators text: 'CLASS String' as the JSON's type and label")
check("root (roots) (1 object directly below)" in outs["dominators (text)"],
      "dominators text: 'root (roots)' as the JSON's root name")
sj = jrun("suspects", "--json", A, B, C)
st = run("suspects", A, B, C).out
h = sj.get("suspects", [{}])[0]
check(h.get("address") == "0x3000" and h.get("label") == LONGCLASS and h.get("root") == "vm",
      "suspects --json: the cache holds the leak, from root vm (got %r)" % h)
check("0x3000 OBJECT %s holds 1 leaked object" % LONGCLASS in st and "path from root vm:" in st,
      "suspects text: the same holder, label and root (got %r)" % st[-500:])

# ------------------------------------------------ 6. shared options
shared = ["--no-index", "-v", "--threads", "2", "--no-progress", "--strict", "--max-line", "1M"]
cmds = {
    "summary": (["--json", "--top", "3"], [D]),
    "tally": (["--json", "--top", "3"], [D]),
    "diff": (["--json", "--top", "3"], [A, B, C]),
    "show": (["--json", "--top", "3"], [D, "0x1000"]),
    "generations": (["--json", "--top", "3"], [D]),
    "dominators": (["--json", "--top", "3"], [D]),
    "retained": (["--json", "--top", "3"], [D]),
    "root": (["--json"], [D, "0x1000"]),
    "suspects": (["--json", "--top", "3"], [A, B, C]),
    "index": ([], [J("ix.json")]),
    "redact": ([], [D, J("red.json")]),
}
shutil.copyfile(D, J("ix.json"))
for cmd, (own, operands) in cmds.items():
    p = run(cmd, *shared, *own, *operands, ok=None)
    check(p.returncode == 0, "%s accepts %s (exit %d: %s)" % (cmd, " ".join(shared + own),
                                                             p.returncode, p.err.strip()[:200]))
for cmd, opt, say in (("root", ["--top", "3"], "root has no --top"),
                      ("redact", ["--json"], "redact has no --json"),
                      ("index", ["--json"], "index has no --json"),
                      ("index", ["--top", "1"], "index has no --top")):
    p = run(cmd, *opt, *cmds[cmd][1], ok=None)
    check(p.returncode == 2 and say in p.err, "%s %s: usage error saying %r (exit %d: %r)" %
          (cmd, " ".join(opt), say, p.returncode, p.err.split("\n")[0]))

# ---------------------- 7. --by KEY and --order RULE, one parser's words
# (hscope_cli_by_order_option): what each command says of a bad or missing
# value, word for word, and an option the command has not.
EXP = "--order: expected auto, name, mtime or given, not 'sideways'"
for args, say in ((["timeline", "--order", "sideways", A, B], EXP),
                  (["export", "--format", "csv", "--out", J("ex"), "--order", "sideways", A], EXP),
                  (["report", "-o", J("r.html"), "--order", "sideways", A, B], EXP),
                  (["timeline", A, "--order"], "--order needs a value"),
                  (["report", A, "--order"], "--order needs a value"),
                  (["export", A, "--order"], "--order needs a value"),
                  (["timeline", A, "--by"], "--by needs a value"),
                  (["report", A, "--by"], "--by needs a value"),
                  (["histogram", D, "--by"], "--by needs a value"),
                  (["histogram", "--order", "name", D], "unknown option '--order'"),
                  (["export", "--format", "csv", "--out", J("ex"), "--by", "class", A],
                   "unknown option '--by'")):
    p = run(*args, ok=None)
    check(p.returncode == 2 and p.err.split("\n")[0] == "heapscope: " + say,
          "%s: usage error %r (exit %d: %r)" % (" ".join(args[:1] + args[-2:]), say,
                                               p.returncode, p.err.split("\n")[0]))
for args in (["timeline", "--order", "given", "--by", "type", A, B, C],
             ["report", "-o", J("r.html"), "--order", "given", "--by", "gem", A, B],
             ["export", "--format", "csv", "--out", J("ex"), "--order", "mtime", A, B],
             ["histogram", "--by", "class", D]):
    run(*args)

# ------------- 8. cuts keep rows apart and class names whole; show's record
# two sites whose paths differ only in the middle, and share their class:
# cut to 100 columns they must still read differently; a long module name on
# a root path is printed whole, the file:line beside it is what is cut
AS = "/usr/share/gems/gems/activesupport-7.1.3/lib/active_support/"
SITE1, SITE2 = AS + "core_ext/hash/indifferent_access.rb", AS + "hash_with_indifferent_access.rb"
HWIA = "ActiveSupport::HashWithIndifferentAccess"
MOD = "ActiveSupport::SomeVeryLongModuleNameForSupportingTheIndifferentAccess"
series = []
for k, n in enumerate((10, 20, 30)):
    recs = [{"type": "ROOT", "root": "vm", "references": ["0x100"]},
            {"address": "0x100", "type": "MODULE", "name": MOD, "references": ["0x200"], "memsize": 100},
            {"address": "0x1", "type": "CLASS", "name": HWIA, "memsize": 100},
            {"address": "0x200", "type": "ARRAY", "file": SITE1 + "/" * 0, "line": 77,
             "references": ["0x%x" % 0x10000] + ["0x%x" % (0x900000 + 8 * i) for i in range(300)],
             "memsize": 40}]
    a = 0x10000
    for i in range(n):
        for f in (SITE1, SITE2):
            recs.append({"address": "0x%x" % a, "type": "HASH", "class": "0x1", "file": f, "line": 10,
                         "generation": 1, "memsize": 40})
            a += 0x28
    series.append(write_dump(J("cut_%d.json" % (k + 1)), recs))
p = run("timeline", *series, columns=100)
rows = [l for l in p.out.splitlines() if HWIA in l]
check(len(rows) == 2 and rows[0].split()[1] != rows[1].split()[1],
      "timeline, 100 columns: two sites of %s read differently (%r)" % (HWIA, rows))
check(all(("rb:10:" + HWIA) in r for r in rows), "timeline: the class and line kept whole (%r)" % rows)
p = run("root", series[2], "0x10000", columns=100)
mod = [l for l in p.out.splitlines() if "MODULE" in l]
check(mod and ("MODULE " + MOD) in mod[0], "root, 100 columns: the module's name whole (%r)" % mod)
arr = [l for l in p.out.splitlines() if "ARRAY" in l]
check(arr and len(arr[0]) <= 100 and ":77)" in arr[0] and ELL in arr[0],
      "root, 100 columns: the file:line is cut to fit, its line kept (%r)" % arr)
p = run("show", "--no-index", series[2], "0x200", columns=100)
rec = [l for l in p.out.splitlines() if l.startswith("  record:")]
check(rec and len(rec[0].encode()) <= 2000 and "more bytes cut" in rec[0],
      "show: the record line holds at most 2,000 bytes, note included (%d)" %
      (len(rec[0].encode()) if rec else -1))

# -------------------------- 9. what the smaller outputs say, in one voice
# retained --by: the rows overlap (the Array holds the Strings: both rows)
p = run("retained", "--by", "class", D, columns=100)
check("rows overlap" in p.out, "retained --by says its rows overlap (%r)" % p.out[-300:])
# the dumper's objects: 2 in the last dump (objspace.rb, dump_all), 1 in the first
dumper = []
for k, nd in enumerate((1, 2)):
    recs = base_records() + [{"address": "0x%x" % (0xa00000 + 0x28 * i), "type": "STRING",
                              "memsize": 40, "file": "/usr/lib/ruby/3.3.0/objspace.rb", "line": 1,
                              "method": "dump_all", "generation": 2} for i in range(nd)]
    dumper.append(write_dump(J("dumper_%d.json" % (k + 1)), recs))
t_left = [l for l in run("tally", dumper[1]).out.splitlines() if l.startswith("left out:")]
tl = run("timeline", *dumper, columns=100).out
tl_left = [l for l in tl.splitlines() if l.startswith("left out:")]
check(t_left == ["left out: 2 objects allocated by the dumper itself"] and tl_left and
      tl_left[0].startswith(t_left[0]) and "(3 in all 2 dumps)" in tl_left[0],
      "left out: timeline says the last dump's count as tally does, then the series' (%r, %r)"
      % (t_left, tl_left))
# fewer than 3 dumps: why growth is not ranked
check("growth is not ranked: 2 dumps, and a trend needs 3 or more" in tl,
      "timeline on 2 dumps says why it cannot rank growth (%r)" % tl[:500])
# no "0 to 0 missing addresses"; a dangling reference is still said
p = run("summary", D)
check("0 to 0" not in p.out and "(none dangling)" in p.out, "summary: no '0 to 0 missing addresses'")
dang = write_dump(J("dangling.json"), base_records() + [
    {"address": "0xb00000", "type": "ARRAY", "references": ["0xdead0", "0xdead0"], "memsize": 40}])
p = run("summary", dang)
check("(dangling: 2 to 1 missing address)" in p.out, "summary: dangling references counted (%r)"
      % [l for l in p.out.splitlines() if "references" in l])

shutil.rmtree(WORK, ignore_errors=True)
if failures:
    print("check_report_layer: %d failure(s)" % len(failures))
    sys.exit(1)
print("check_report_layer: all checks passed")
