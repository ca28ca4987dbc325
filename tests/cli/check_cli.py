#!/usr/bin/env python3
"""CLI behaviour that no other suite covers, each against an expectation
computed here from the dump itself (Python's json module):

  1. show and saved indexes: with a fresh DUMP.hsx the record is said to be
     missing (text) or null (JSON); --no-index shows it; --values reads the
     dump itself, so the values are there even with an index;
  2. retained --top 0 lists every reachable object (reachability computed
     here: ROOT references, then references and object -> class edges);
  3. -V/--version after a command prints the version;
  4. redact refuses OUT = IN under another name (before touching IN),
     copies lines longer than --max-line, writes an OUT that is not a
     regular file (a link to stdout) directly, and leaves an existing OUT
     alone when it fails;
  5. dominators --top 0 lists every top-level node: their retained counts
     add up to the reachable objects;
  6. terminal guard: on a terminal (a pty), strings from the dump are
     printed with their control bytes as \\xHH; through a pipe they are
     printed as they are;
  7. Ruby's allocation tracer (DATA ObjectTracing/allocation_info_tracer,
     class Object): left out of histogram, tally, retained and report by
     default and said ("left out: the allocation tracer ..."), kept by
     --keep-tracer as a row labelled <allocation tracer>, never "Object";
  8. generations leaves the dumper's objects out, counts and says them
     (excluded_dumper_objects, "left out: ..."), as tally does; kept by
     --keep-dumper;
  9. the allocation tracer in diff, timeline, check --budget and waste, on
     a hand-made series whose tracing starts between A and B (so that the
     tracer is new in B): left out of the leaked objects, of every dump's
     totals and groups, of the budget's totals and of the heap waste
     measures, and counted (excluded_tracer, "left out: the allocation
     tracer"); --keep-tracer keeps it; a class."<allocation tracer>" rule
     measures it either way;
 10. --out FILE over an earlier FILE: a plain file is replaced (new inode,
     same mode), a symbolic link or a second hard link written through.

Usage: HEAPSCOPE=/path/to/heapscope check_cli.py WORKDIR
Needs ruby (to write a real dump of a small process).
"""
import json
import os
import pty
import re
import shutil
import subprocess
import sys

CLI = os.environ["HEAPSCOPE"]
WORK = sys.argv[1]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import checklib  # noqa: E402
from checklib import check, failures  # noqa: E402,F401


def run(*args, ok=True):
    p = subprocess.run([CLI, *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    if ok and p.returncode != 0:
        sys.exit("heapscope %s failed (%d): %s" %
                 (" ".join(args), p.returncode, p.stderr.decode("utf-8", "replace")))
    return p


def run_tty(*args):
    """stdout on a pseudo-terminal; returns its bytes ('\\r\\n' -> '\\n')."""
    master, slave = pty.openpty()
    p = subprocess.Popen([CLI, *args], stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    out = b""
    while True:
        try:
            b = os.read(master, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not b:
            break
        out += b
    err = p.stderr.read()
    p.wait()
    os.close(master)
    if p.returncode != 0:
        sys.exit("heapscope %s on a tty failed (%d): %s" %
                 (" ".join(args), p.returncode, err.decode("utf-8", "replace")))
    return out.replace(b"\r\n", b"\n")


def records(path):
    for line in open(path, "rb"):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict):
            yield r, line.rstrip(b"\n")


def escaped(s):
    """What the terminal guard should print for the text s."""
    out = []
    for ch in s:
        c = ord(ch)
        if (c < 0x20 and ch not in "\n\t") or c == 0x7f:
            out.append("\\x%02x" % c)
        elif 0x80 <= c <= 0x9f:
            out.append("\\xc2\\x%02x" % c)
        else:
            out.append(ch)
    return "".join(out)


os.makedirs(WORK, exist_ok=True)

# ------------------------------------------------ 1. show and DUMP.hsx
# A real dump of a small Ruby process (a few 10,000 objects).
dump = os.path.join(WORK, "ruby.json")
subprocess.run(["ruby", "-robjspace", "-e",
                "$keep = Array.new(300) { |i| \"s#{i}\" * 3 }\n"
                "File.open(ARGV[0], 'w') { |f| ObjectSpace.dump_all(output: f) }", dump],
               check=True, timeout=300)
ix = dump + ".hsx"
if os.path.exists(ix):
    os.unlink(ix)
objs = {}
strings = []
roots = []
for r, line in records(dump):
    if r.get("type") == "ROOT":
        roots += [int(a, 16) for a in r.get("references") or []]
    elif "address" in r and r.get("type") not in ("SHAPE", "NONE"):
        objs[int(r["address"], 16)] = (r, line)
        if r.get("type") == "STRING" and isinstance(r.get("value"), str) and r["value"]:
            strings.append(r)
check(len(objs) > 1000 and strings, "the Ruby dump has objects and string values")
target = strings[len(strings) // 2]
addr = target["address"]
hidden = dict(target, value="(hidden)")

def show_json(*extra):
    out = json.loads(run("show", "--json", *extra, dump, addr).stdout)
    return out["objects"][0]

o = show_json()
check(o["found"] and o.get("record") == hidden,
      "show --json without an index: the record is the dump's, value hidden")
check("record:     {" in run("show", dump, addr).stdout.decode(),
      "show without an index prints the record line")
run("index", dump)
check(os.path.exists(ix), "heapscope index wrote DUMP.hsx")
v = run("show", "-v", dump, addr)
check(b"using the index" in v.stderr, "show uses a fresh index (-v says so)")
check("record:     (not kept in the saved index: the dump itself has it)"
      in v.stdout.decode(), "show with an index says the record is not kept")
check(show_json().get("record", "absent") is None, "show --json with an index: record is null")
check(show_json("--no-index").get("record") == hidden, "show --no-index reads the record again")
o = show_json("--values")
check(o.get("value") == target["value"] and o.get("record") == target,
      "show --values with an index present reads the dump: value and record")

# ------------------------------------------------ 2. retained --top 0
seen = set()
stack = [a for a in roots if a in objs]
seen.update(stack)
while stack:
    r = objs[stack.pop()][0]
    out = [int(x, 16) for x in r.get("references") or []]
    if r.get("class"):
        out.append(int(r["class"], 16))
    for b in out:
        if b in objs and b not in seen:
            seen.add(b)
            stack.append(b)
check(len(seen) > 20, "more reachable objects than the default --top")
rows0 = json.loads(run("retained", "--json", "--top", "0", "--no-index", dump).stdout)["objects"]
check(len(rows0) == len(seen) and {int(r["address"], 16) for r in rows0} == seen,
      "retained --top 0 lists every reachable object (%d rows, %d reachable)" %
      (len(rows0), len(seen)))
rows5 = json.loads(run("retained", "--json", "--top", "5", dump).stdout)["objects"]
check(rows5 == rows0[:5], "retained --top 5 is the first 5 rows of --top 0")

# ------------------------------------------------ 3. --version anywhere
want = run("--version").stdout
check(re.match(rb"heapscope \d+\.\d+\.\d+ \(library \d+\.\d+\.\d+\)\n$", want) is not None,
      "heapscope --version prints the versions (got %r)" % want)
for args in (("summary", "--version"), ("tally", dump, "-V"), ("show", "-V")):
    p = run(*args, ok=False)
    check(p.returncode == 0 and p.stdout == want, "heapscope %s prints the version" % " ".join(args))

# ------------------------------------------------ 4. redact
# OUT as IN under another name must be refused before IN is touched.
src = os.path.join(WORK, "in.json")
shutil.copyfile(dump, src)
orig = open(src, "rb").read()
os.symlink("in.json", os.path.join(WORK, "link.json"))
for other in (os.path.join(WORK, ".", "in.json"), os.path.join(WORK, "link.json")):
    p = run("redact", src, other, ok=False)
    check(p.returncode == 2 and open(src, "rb").read() == orig,
          "redact IN %s: refused (exit %d), IN intact" % (other, p.returncode))
# A line longer than --max-line is still copied; values become the length
# and the hash of their decoded bytes (checked here: length; every line kept).
lines = orig.split(b"\n")
long_line = json.dumps({"address": "0x10", "type": "STRING", "value": "x" * 5000}).encode()
src2 = os.path.join(WORK, "long.json")
with open(src2, "wb") as f:
    f.write(b"\n".join(lines[:5] + [long_line] + lines[5:]).rstrip(b"\n") + b"\n" + long_line + b"\n")
nin = open(src2, "rb").read().count(b"\n")
out = os.path.join(WORK, "out.json")
run("redact", "--max-line", "1K", src2, out)
got = open(out, "rb").read().split(b"\n")
check(len(got) - 1 == nin, "redact copies every line, even longer than --max-line (%d of %d)" %
      (len(got) - 1, nin))
check(got[5].startswith(b'{"address": "0x10", "type": "STRING", "value": "[redacted 5000 bytes xxh3:'),
      "redact replaces a value by its length (got %r)" % got[5][:90])
# The promise: waste on the copy finds the same duplicates (lengths, hashes,
# sites) as on the original, and redacting the copy again changes nothing.
def waste_answers(path):
    d = json.loads(run("waste", "--json", "--top", "0", path).stdout)
    return [d[k] for k in ("groups", "values", "findings", "not_compared", "recoverable")]
red1, red2 = os.path.join(WORK, "red1.json"), os.path.join(WORK, "red2.json")
run("redact", dump, red1)
run("redact", red1, red2)
w0 = waste_answers(dump)
check(w0[1] and waste_answers(red1) == w0,
      "waste on a redacted copy gives the original's duplicates (%d values)" % len(w0[1]))
check(open(red1, "rb").read() == open(red2, "rb").read(), "redacting a redacted copy changes nothing")
# OUT that is not a regular file (a pipe, through a link like /dev/stdout;
# a private one here, so a broken binary cannot replace the system's) is
# written to directly, not replaced by a renamed temporary file
so = os.path.join(WORK, "stdout")
os.symlink("/proc/self/fd/1", so)
p = run("redact", src2, so)
check(p.stdout.split(b"\n") == got and os.path.islink(so),
      "redact to a link to stdout writes the same copy there, and the link stays")
# a failed run leaves an existing OUT as it was
with open(out, "wb") as f:
    f.write(b"keep")
p = run("redact", os.path.join(WORK, "missing.json"), out, ok=False)
check(p.returncode == 1 and os.path.exists(out) and open(out, "rb").read() == b"keep",
      "a failed redact leaves the existing OUT alone")

# ------------------------------------------------ 5. dominators --top 0
# Every reachable object is retained by exactly one top-level node, so with
# all of them listed their retained counts add up to the reachable set.
d = json.loads(run("dominators", "--json", "--top", "0", "--depth", "0", "--no-index", dump).stdout)
kids = [k for cat in d["top"] for k in cat["children"]]
check(all(len(cat["children"]) == cat["children_total"] for cat in d["top"]),
      "dominators --top 0 lists every child")
check(sum(k["retained"]["count"] for k in kids) == len(seen),
      "dominators --top 0: top-level retained counts add up to the %d reachable objects "
      "(got %d)" % (len(seen), sum(k["retained"]["count"] for k in kids)))

# ------------------------------------------------ 6. terminal guard
# Strings a program can put in a dump: a class name, a file name (eval's
# file argument), a method name and a string value, with C0, DEL and C1
# controls in them.
evil = os.path.join(WORK, "evil.json")
rows = [
    {"type": "ROOT", "root": "vm", "references": ["0x1000", "0x2000", "0x3000"]},
    {"address": "0x1000", "type": "CLASS", "class": "0x1000",
     "name": "Evil\x1b[2J\x1b]0;pwned\x07", "references": [], "memsize": 100},
    {"address": "0x2000", "type": "STRING", "class": "0x1000",
     "value": "red\x1b[31mtext\x9bX\x85\r", "file": "/app/\x1b[1Afoo.rb", "line": 7,
     "method": "m\x7fx", "generation": 3, "memsize": 40},
    {"address": "0x3000", "type": "OBJECT", "class": "0x1000",
     "file": "/app/caf\u00e9.rb", "line": 9, "generation": 3, "memsize": 40},
]
with open(evil, "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
cls, s = rows[1]["name"], rows[2]
controls = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]|\xc2[\x80-\x9f]")

t = run_tty("tally", "--by", "file:line:class", evil)
check(not controls.search(t.replace(b"\n", b" ")),
      "tally on a tty: no raw control byte (got %r)" % t)
for key in ("%s:%d:%s" % (s["file"], s["line"], cls), "/app/caf\u00e9.rb:9:" + cls):
    check(escaped(key).encode() in t, "tally on a tty shows %r as %r" % (key, escaped(key)))
p = run("tally", "--by", "file:line:class", evil).stdout
check(("%s:%d:%s" % (s["file"], s["line"], cls)).encode() in p,
      "tally through a pipe prints the key byte for byte")

t = run_tty("show", "--values", evil, "0x2000")
check(not controls.search(t.replace(b"\n", b" ")),
      "show --values on a tty: no raw control byte (got %r)" % t)
for text in (s["value"], cls, s["method"], s["file"]):
    check(escaped(text).encode() in t, "show on a tty shows %r as %r" % (text, escaped(text)))
p = run("show", "--values", evil, "0x2000").stdout
check(s["value"].encode() in p, "show --values through a pipe prints the value byte for byte")
check(run_tty("tally", "--json", evil) == run("tally", "--json", evil).stdout,
      "JSON output is the same on a tty and through a pipe")

# 7. the allocation tracer
tr = os.path.join(WORK, "tracer.json")
rows = [
    {"type": "ROOT", "root": "vm", "references": ["0x200", "0x300", "0x400"]},
    {"address": "0x20", "type": "CLASS", "name": "Object", "memsize": 100},
    {"address": "0x200", "type": "DATA", "class": "0x20",
     "struct": "ObjectTracing/allocation_info_tracer", "memsize": 900000},
    {"address": "0x300", "type": "OBJECT", "class": "0x20", "file": "/app/a.rb", "line": 3,
     "memsize": 40},
    {"address": "0x400", "type": "OBJECT", "class": "0x20", "file": "/app/a.rb", "line": 4,
     "memsize": 40},
]
with open(tr, "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
tracer = [r for r in rows if r.get("struct") == "ObjectTracing/allocation_info_tracer"]
t_mem = sum(r["memsize"] for r in tracer)
apps = [r for r in rows if r.get("class") == "0x20" and r not in tracer]
want_obj = {"key": "Object", "count": len(apps), "memsize": sum(r["memsize"] for r in apps)}
for cmd in ("histogram", "tally"):
    j = json.loads(run(cmd, "--json", "--by", "class", "--top", "0", tr).stdout)
    objs = [g for g in j["groups"] if g["key"] == "Object"]
    check(objs == [want_obj] and j["excluded_tracer"] == {"count": 1, "memsize": t_mem}
          and j["total"]["memsize"] == sum(r.get("memsize", 0) for r in rows if "address" in r) - t_mem,
          "%s --by class: the tracer is left out and counted, Object is the app's (%r)" % (cmd, j))
    k = json.loads(run(cmd, "--json", "--by", "class", "--top", "0", "--keep-tracer", tr).stdout)
    check([g for g in k["groups"] if g["key"] == "Object"] == [want_obj]
          and {"key": "<allocation tracer>", "count": 1, "memsize": t_mem} in k["groups"]
          and k["excluded_tracer"]["count"] == 0,
          "%s --keep-tracer: a row <allocation tracer>, Object unchanged (%r)" % (cmd, k))
    txt = run(cmd, "--by", "class", tr).stdout.decode()
    check("left out: the allocation tracer" in txt and "1 object, 878.9 KB" in txt,
          "%s says what it left out: %r" % (cmd, txt))
rt = run("retained", tr).stdout.decode()
first = [ln for ln in rt.splitlines() if ln.startswith("  0x")][:1]
check(first and "0x200" not in first[0] and "left out: the allocation tracer" in rt,
      "retained: the tracer is not the first row, and said (%r)" % rt)
rk = run("retained", "--keep-tracer", tr).stdout.decode()
first = [ln for ln in rk.splitlines() if ln.startswith("  0x")][:1]
check(first and "0x200" in first[0] and "<allocation tracer>" in first[0],
      "retained --keep-tracer: the tracer first, labelled (%r)" % rk)
html = os.path.join(WORK, "tracer.html")
run("report", "--out", html, tr)
page = open(html, encoding="utf-8").read()
check("Left out: the allocation tracer" in page and "(none):0:Object" not in page,
      "report: the tracer is left out of the sections and said")
run("report", "--keep-tracer", "--out", html, tr)
page = open(html, encoding="utf-8").read()
check("&lt;allocation tracer&gt;" in page and "Left out: the allocation tracer" not in page,
      "report --keep-tracer: the tracer labelled <allocation tracer>")

# 8. generations and the dumper's objects: the same rule and counts as tally
gd = os.path.join(WORK, "gens_dumper.json")
with open(gd, "w") as fh:
    fh.write('{"address":"0x10", "type":"STRING", "file":"app.rb", "line":1, '
             '"generation":3, "memsize":40}\n'
             '{"address":"0x38", "type":"ARRAY", "file":"/usr/lib/ruby/3.1.0/objspace.rb", '
             '"line":87, "method":"dump_all", "generation":3, "memsize":80}\n'
             '{"address":"0x60", "type":"HASH", "file":"x.rb", "line":2, "method":"dump_all", '
             '"generation":4, "memsize":160}\n')
gj = json.loads(run("generations", "--json", "--no-index", gd).stdout)
tj = json.loads(run("tally", "--json", "--no-index", gd).stdout)
check(gj["excluded_dumper_objects"] == 2 == tj["excluded_dumper_objects"],
      "generations: excluded_dumper_objects %r, tally %r, expected 2" % (
          gj.get("excluded_dumper_objects"), tj["excluded_dumper_objects"]))
check([(g["generation"], g["count"], g["memsize"]) for g in gj["generations"]] == [(3, 1, 40)],
      "generations: the dumper's objects in %r" % gj["generations"])
gt = run("generations", "--no-index", gd).stdout.decode()
check("left out: 2 objects allocated by the dumper itself" in gt,
      "generations: the left out objects not said (%r)" % gt)
gk = json.loads(run("generations", "--json", "--no-index", "--keep-dumper", gd).stdout)
check(gk["excluded_dumper_objects"] == 0 and
      [(g["generation"], g["count"], g["memsize"]) for g in gk["generations"]] ==
      [(3, 2, 120), (4, 1, 160)], "generations --keep-dumper: %r" % gk["generations"])

# 9. the allocation tracer in diff, timeline, check and waste: a series of
# 40 Strings, the tracer (5000 then 6000 bytes) and a String y (40 bytes)
# new in B, a String z new in C.  Expected by hand: the leak is y alone
# (1, 40 B) and the tracer (1, 6000 B) is left out; with --keep-tracer the
# leak is 2 objects, 6040 B.
def tracer_series():
    base = [{"address": "0x%x" % (0x1000 + i * 0x28), "type": "STRING", "class": "0x8",
             "file": "app.rb", "line": 1, "generation": 1, "memsize": 40, "bytesize": 3}
            for i in range(40)]
    head = [{"type": "ROOT", "root": "vm",
             "references": [b["address"] for b in base] + ["0x20", "0x30", "0x50"]},
            {"address": "0x8", "type": "CLASS", "name": "String", "memsize": 500},
            {"address": "0x18", "type": "CLASS", "name": "Object", "memsize": 300}]
    def tracer(m):
        return {"address": "0x20", "type": "DATA", "class": "0x18",
                "struct": "ObjectTracing/allocation_info_tracer", "memsize": m}
    y = {"address": "0x30", "type": "STRING", "class": "0x8", "file": "app.rb", "line": 2,
         "generation": 5, "memsize": 40, "bytesize": 3}
    z = {"address": "0x50", "type": "STRING", "class": "0x8", "file": "app.rb", "line": 3,
         "generation": 7, "memsize": 40, "bytesize": 3}
    paths = []
    for n, objs in (("a_1", base), ("b_2", base + [tracer(5000), y]),
                    ("c_3", base + [tracer(6000), y, z])):
        p = os.path.join(WORK, "tracer_%s.json" % n)
        with open(p, "w") as fh:
            fh.writelines(json.dumps(o) + "\n" for o in head + objs)
        paths.append(p)
    return paths


tA, tB, tC = tracer_series()
dj = json.loads(run("diff", "--json", "--no-index", tA, tB, tC).stdout)
dk = json.loads(run("diff", "--json", "--no-index", "--keep-tracer", tA, tB, tC).stdout)
check(dj["leaked"] == {"count": 1, "memsize": 40}
      and dj["excluded_tracer"] == {"count": 1, "memsize": 6000}
      and [g["key"] for g in dj["groups"]] == ["app.rb:2:String"],
      "diff: the tracer new in B is left out of the leak and counted: %r %r"
      % (dj["leaked"], dj["excluded_tracer"]))
check(dk["leaked"] == {"count": 2, "memsize": 6040}
      and dk["excluded_tracer"] == {"count": 0, "memsize": 0},
      "diff --keep-tracer: the tracer among the leaked objects: %r" % dk["leaked"])
dt = run("diff", "--no-index", tA, tB, tC).stdout.decode()
check("left out: the allocation tracer (trace_object_allocations), 1 object, 5.9 KB" in dt,
      "diff text: says the tracer was left out (%r)" % dt)
tj = json.loads(run("timeline", "--json", "--by", "class", "--top", "0", tA, tB, tC).stdout)
tk = json.loads(run("timeline", "--json", "--by", "class", "--top", "0", "--keep-tracer",
                    tA, tB, tC).stdout)
check([d["excluded_tracer"] for d in tj["dumps"]] ==
      [{"count": 0, "memsize": 0}, {"count": 1, "memsize": 5000}, {"count": 1, "memsize": 6000}]
      and [d["total"] for d in tj["dumps"]] ==
      [{"count": 42, "memsize": 2400}, {"count": 43, "memsize": 2440},
       {"count": 44, "memsize": 2480}]
      and "<allocation tracer>" not in [g["key"] for g in tj["groups"]]
      and tj["excluded_tracer"] == {"count": 2, "memsize": 11000},
      "timeline: the tracer out of every dump's totals and groups, counted per dump")
check([d["total"]["memsize"] for d in tk["dumps"]] == [2400, 7440, 8480]
      and [g["memsize"] for g in tk["groups"] if g["key"] == "<allocation tracer>"]
      == [[0, 5000, 6000]],
      "timeline --keep-tracer: the tracer's group and totals back")
bud = os.path.join(WORK, "tracer_budget.toml")
with open(bud, "w") as fh:
    fh.write('[total]\nmemsize = 2480\n[class."<allocation tracer>"]\nmemsize = 6000\n'
             '[leaked]\nobjects = 1\n')
cj = json.loads(run("check", "--json", "--no-index", "--budget", bud, tA, tB, tC).stdout)
check(cj["verdict"] == "within" and cj["excluded_tracer"] == {"count": 1, "memsize": 6000}
      and [r["actual"] for r in cj["rules"]] == [2480, 6000, 1],
      "check: totals and leak without the tracer, its own rule measures it: %r"
      % [(r["rule"], r["actual"]) for r in cj["rules"]])
ck = run("check", "--json", "--no-index", "--keep-tracer", "--budget", bud, tA, tB, tC, ok=False)
ckj = json.loads(ck.stdout)
check(ck.returncode == 1 and [r["actual"] for r in ckj["rules"]] == [8480, 6000, 2],
      "check --keep-tracer: the tracer in the totals and the leak: %r"
      % [(r["rule"], r["actual"]) for r in ckj["rules"]])
wj = json.loads(run("waste", "--json", "--no-index", tC).stdout)
wk = json.loads(run("waste", "--json", "--no-index", "--keep-tracer", tC).stdout)
check(wj["total"] == {"count": 44, "memsize": 2480}
      and wj["excluded_tracer"] == {"count": 1, "memsize": 6000}
      and wk["total"] == {"count": 45, "memsize": 8480},
      "waste: the heap's total without the tracer (%r), with --keep-tracer (%r)"
      % (wj["total"], wk["total"]))
# the HTML report says it in its diff, timeline and waste sections too
pages = []
for extra in ([], ["--keep-tracer"]):
    out = os.path.join(WORK, "tracer_report%d.html" % len(extra))
    run("report", "--no-index", *extra, "-o", out, tA, tB, tC)
    page = open(out, encoding="utf-8").read()
    pages.append({sec: re.search(r'<section id="%s">(.*?)</section>' % sec, page, re.S).group(1)
                  for sec in ("diff", "timeline", "waste")})
check(all("Left out: the allocation tracer" in pages[0][sec] for sec in pages[0])
      and not any("Left out: the allocation tracer" in pages[1][sec] for sec in pages[1]),
      "report: the diff, timeline and waste sections say the tracer was left out, and "
      "--keep-tracer keeps it")

# ------------------------------------------------ 10. --out over an earlier file
# export --format heapsnapshot --out FILE over an earlier FILE: a plain file
# is replaced by a new one (new inode, same permission bits, no .FILE.old
# left); a symbolic link and a file with a second hard link are written
# through (the link stays, both names see the new snapshot).  The expected
# content is the same export to standard output.
want = run("export", "--format", "heapsnapshot", "--no-index", dump).stdout
check(json.loads(want)["snapshot"]["node_count"] > 0, "heapsnapshot to stdout has nodes")
hs = os.path.join(WORK, "out.heapsnapshot")
with open(hs, "wb") as f:
    f.write(b"stale " * 100000)  # longer than the snapshot: a trailing rest would show
os.chmod(hs, 0o640)
ino = os.stat(hs).st_ino
run("export", "--format", "heapsnapshot", "--no-index", "--out", hs, dump)
st = os.stat(hs)
check(open(hs, "rb").read() == want and st.st_ino != ino and (st.st_mode & 0o7777) == 0o640
      and not os.path.exists(os.path.join(WORK, ".out.heapsnapshot.old")),
      "--out over a plain file: replaced (new inode, mode %o, nothing set aside left)"
      % (st.st_mode & 0o7777))
real = os.path.join(WORK, "real.heapsnapshot")
ln = os.path.join(WORK, "ln.heapsnapshot")
with open(real, "wb") as f:
    f.write(b"stale " * 100000)
os.symlink(real, ln)
run("export", "--format", "heapsnapshot", "--no-index", "--out", ln, dump)
check(os.path.islink(ln) and open(real, "rb").read() == want,
      "--out over a symbolic link: written through, the link stays")
hard = os.path.join(WORK, "hard.heapsnapshot")
os.link(real, hard)
ino = os.stat(real).st_ino
with open(real, "wb") as f:
    f.write(b"stale " * 100000)
run("export", "--format", "heapsnapshot", "--no-index", "--out", hard, dump)
check(os.stat(hard).st_ino == ino and open(real, "rb").read() == want,
      "--out over a file with a second link: written through, both names see it")

shutil.rmtree(WORK, ignore_errors=True)
if failures:
    print("check_cli: %d failure(s)" % len(failures))
    sys.exit(1)
print("check_cli: all checks passed")
