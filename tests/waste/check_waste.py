#!/usr/bin/env python3
"""heapscope waste against our own workload with planted waste.

Generates a dump with examples/workloads/waste.rb (Ruby, allocation
tracing on), then checks `heapscope waste`:

  1. every planted set is found at its file:line with the right kind,
     type, count and saving, the saving computed here from what Ruby
     itself measured in the workload (ObjectSpace.memsize_of, bytesize:
     waste_truth.json), not from the dump;
  2. the whole JSON document (every place, every value and its sites, the
     totals) equals an independent computation in Python over the dump's
     records (json module), following the rules of docs/WASTE.md;
  3. the same answer with 1, 2 and 3 parser threads and from a gzip copy;
     from a loaded heap (hscope_waste_compute through ctypes) too;
  4. --by gem: the fake gem's duplicates under wastegem-1.2.3;
  5. privacy: no value without --values (a length and a hash instead, the
     same hash in text and JSON, in every report); with --values, they are;
  6. exit statuses: a pipe (not a regular file) and a missing file exit 1,
     bad options exit 2; the text report's totals.  (The JSON Schema is
     checked by suite json, tests/json/check_schemas.py.)

Usage: HEAPSCOPE=/path/to/heapscope check_waste.py WORKDIR
Exit 77 (skipped) without ruby.
"""
import collections
import ctypes
import gzip
import json
import os
import shutil
import subprocess
import sys

CLI = os.environ["HEAPSCOPE"]
WORK = os.path.abspath(sys.argv[1])
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKLOAD = os.path.join(SRC, "examples", "workloads", "waste.rb")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import checklib  # noqa: E402
from checklib import check, failures  # noqa: E402,F401

KIND_ORDER = {"duplicate": 1, "empty": 2, "oversized": 3}
TYPE_ORDER = {"STRING": 6, "ARRAY": 8, "HASH": 9}
RATIO, MIN_SLACK = 4, 256


def run(*args, ok=0, stdin=None):
    p = subprocess.run([CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=stdin, timeout=600)
    p.out = p.stdout.decode("utf-8", "surrogateescape")
    p.err = p.stderr.decode("utf-8", "replace")
    if ok is not None and p.returncode != ok:
        check(False, "heapscope %s: exit %d, wanted %d: %s" % (" ".join(args), p.returncode, ok,
                                                             p.err.strip()))
    return p


def jrun(*args):
    p = run(*args, "--json")
    return json.loads(p.out)


# ---------------------------------------------------------------- the oracle

DUMPER_FILES = ("/heapscope/snapshot.rb", "/heapscope/fork.rb", "/heapscope/auto.rb")


def is_dumper(rec):
    """docs: the dumper's own objects (ObjectSpace.dump_all, the gem's snapshot code)."""
    f, m = rec.get("file"), rec.get("method")
    if m == "dump_all":
        return True
    if not f:
        return False
    return os.path.basename(f) == "objspace.rb" or f.endswith(DUMPER_FILES)


def records(path):
    with open(path, "rb") as fh:
        for line in fh:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and "address" in r and \
                    r.get("type") not in ("ROOT", "SHAPE", "NONE"):
                yield r


def key_of(r):
    f = r.get("file")
    return "%s:%d" % (f, r.get("line") or 0) if f else "(none):0"


def oversized(buf, used):
    return buf > used and buf - used >= MIN_SLACK and buf >= used * RATIO


TRACER_STRUCT = "ObjectTracing/allocation_info_tracer"


def expected(path, keep_tracer=False):
    """The waste document, computed from the dump's records.  Ruby's
    allocation tracer (the workload traces allocations) is left out of the
    heap's total and counted unless keep_tracer, as the dumper's objects."""
    heap_n = heap_m = excluded = 0
    tracer = [0, 0]
    nc = {"shared": [0, 0], "no_value": [0, 0], "truncated": [0, 0]}
    rows = {}          # (key, kind, type) -> row
    copies = collections.defaultdict(list)  # value bytes -> [(key, memsize, frozen, fstring)]

    def row(key, kind, typ):
        return rows.setdefault((key, kind, typ), {
            "key": key, "finding": kind, "type": typ, "count": 0, "memsize": 0,
            "objects_memsize": 0, "buffer": 0, "used": 0})

    for r in records(path):
        if is_dumper(r):
            excluded += 1
            continue
        if not keep_tracer and r["type"] == "DATA" and r.get("struct") == TRACER_STRUCT:
            tracer[0] += 1
            tracer[1] += r.get("memsize", 0)
            continue
        t, mem = r["type"], r.get("memsize", 0)
        heap_n += 1
        heap_m += mem
        key = key_of(r)
        if t == "STRING":
            size = r.get("bytesize", 0)
            if r.get("shared"):
                nc["shared"][0] += 1
                nc["shared"][1] += mem
            elif size == 0:
                e = row(key, "empty", "STRING")
                e["count"] += 1
                e["memsize"] += mem
                e["objects_memsize"] += mem
            elif "capacity" in r and oversized(r["capacity"], size):
                e = row(key, "oversized", "STRING")
                e["count"] += 1
                e["memsize"] += r["capacity"] - size
                e["objects_memsize"] += mem
                e["buffer"] += r["capacity"]
                e["used"] += size
            elif not isinstance(r.get("value"), str):
                nc["no_value"][0] += 1
                nc["no_value"][1] += mem
            else:
                v = r["value"].encode("utf-8", "surrogatepass")
                if len(v) != size:
                    nc["truncated"][0] += 1
                    nc["truncated"][1] += mem
                else:
                    copies[v].append((key, mem, bool(r.get("frozen")), bool(r.get("fstring"))))
        elif t in ("ARRAY", "HASH"):
            size = r.get("length" if t == "ARRAY" else "size", 0)
            if size == 0:
                e = row(key, "empty", t)
                e["count"] += 1
                e["memsize"] += mem
                e["objects_memsize"] += mem
            elif t == "HASH" or not (r.get("embedded") or r.get("shared")):
                slot = r.get("slot_size") or 40
                buf = max(mem - slot, 0)
                used = size * (8 if t == "ARRAY" else 64)
                if oversized(buf, used):
                    e = row(key, "oversized", t)
                    e["count"] += 1
                    e["memsize"] += buf - used
                    e["objects_memsize"] += mem
                    e["buffer"] += buf
                    e["used"] += used
    values = []
    for v, cs in copies.items():
        if len(cs) < 2:
            continue
        per = collections.OrderedDict()
        for key, mem, fz, fs in cs:
            p = per.setdefault(key, {"key": key, "count": 0, "memsize": 0, "max": 0,
                                     "frozen": 0, "fstring": 0})
            p["count"] += 1
            p["memsize"] += mem
            p["max"] = max(p["max"], mem)
            p["frozen"] += fz
            p["fstring"] += fs
        # the copy kept: the largest, where most copies are, then first key
        kept = sorted(per.values(), key=lambda p: (-p["max"], -p["count"], p["key"].encode(
            "utf-8", "surrogateescape")))[0]
        for p in per.values():
            p["saving"] = p["memsize"] - (p["max"] if p is kept else 0)
            p["freed"] = p["count"] - (1 if p is kept else 0)
            e = row(p["key"], "duplicate", "STRING")
            e["count"] += p["freed"]
            e["memsize"] += p["saving"]
            e["objects_memsize"] += p["memsize"]
            for k in ("copies", "frozen", "fstring", "value_count"):
                e.setdefault(k, 0)
            e["copies"] += p["count"]
            e["frozen"] += p["frozen"]
            e["fstring"] += p["fstring"]
            e["value_count"] += 1
            e.setdefault("_values", []).append((v, p["count"], p["saving"]))
        sites = sorted(per.values(), key=lambda p: (-p["count"], -p["saving"], p["key"].encode(
            "utf-8", "surrogateescape")))
        values.append({
            "value": v, "length": len(v), "count": len(cs),
            "memsize": sum(p["saving"] for p in per.values()),
            "objects_memsize": sum(p["memsize"] for p in per.values()),
            "frozen": sum(p["frozen"] for p in per.values()),
            "fstring": sum(p["fstring"] for p in per.values()),
            "site_count": len(per),
            "sites": [{"key": p["key"], "count": p["count"], "memsize": p["saving"],
                       "copies": p["count"], "saving": p["saving"]} for p in sites]})
    groups = sorted(rows.values(), key=lambda e: (-e["memsize"], e["key"].encode(
        "utf-8", "surrogateescape"), KIND_ORDER[e["finding"]], TYPE_ORDER[e["type"]]))
    find = {k: [0, 0] for k in KIND_ORDER}
    for e in groups:
        find[e["finding"]][0] += e["count"]
        find[e["finding"]][1] += e["memsize"]
    return {
        "total": {"count": heap_n, "memsize": heap_m},
        "excluded": excluded, "not_compared": nc, "findings": find,
        "excluded_tracer": {"count": tracer[0], "memsize": tracer[1]},
        "groups": groups, "values": values,
        "recoverable": [sum(x[0] for x in find.values()), sum(x[1] for x in find.values())],
    }


def compare(doc, exp, what):
    """The CLI's JSON (--top 0 --values) against the oracle."""
    check(doc["kind"] == "waste", what + ": kind")
    check(doc["total"] == exp["total"], "%s: total %r, expected %r" % (what, doc["total"],
                                                                        exp["total"]))
    check(doc["excluded_dumper_objects"] == exp["excluded"], what + ": excluded")
    check(doc["excluded_tracer"] == exp["excluded_tracer"], "%s: excluded_tracer %r, expected %r"
          % (what, doc["excluded_tracer"], exp["excluded_tracer"]))
    rec = doc["recoverable"]
    check([rec["count"], rec["memsize"]] == exp["recoverable"],
          "%s: recoverable %r, expected %r" % (what, rec, exp["recoverable"]))
    check(abs(rec["share"] - rec["memsize"] / exp["total"]["memsize"]) < 1e-5, what + ": share")
    check(rec["saving"] == exp["recoverable"][1], what + ": recoverable.saving")
    for k, (n, m) in exp["findings"].items():
        got = doc["findings"][k]
        check((got["count"], got["memsize"], got["saving"]) == (n, m, m),
              "%s: findings.%s %r, expected %r" % (what, k, got, (n, m)))
    for k, (n, m) in exp["not_compared"].items():
        got = doc["not_compared"][k]
        check((got["count"], got["memsize"]) == (n, m),
              "%s: not_compared.%s %r, expected %r" % (what, k, got, (n, m)))
    check(doc["group_count"] == len(exp["groups"]), "%s: group_count %d, expected %d" % (
        what, doc["group_count"], len(exp["groups"])))
    fields = ("key", "finding", "type", "count", "memsize", "objects_memsize")
    for i, (g, e) in enumerate(zip(doc["groups"], exp["groups"])):
        same = all(g[f] == e[f] for f in fields)
        if g["finding"] == "duplicate":
            same = same and all(g[f] == e[f] for f in ("copies", "frozen", "fstring",
                                                       "value_count"))
            got = sorted((x["value"].encode("utf-8", "surrogateescape"), x["count"],
                          x["memsize"]) for x in g["values"])
            check(got == sorted(e["_values"]), "%s: values of %s" % (what, g["key"]))
            order = [(x["memsize"], x["count"]) for x in g["values"]]
            check(order == sorted(order, reverse=True), "%s: order of %s's values" % (
                what, g["key"]))
        elif g["finding"] == "oversized":
            same = same and g["buffer"] == e["buffer"] and g["used"] == e["used"]
        if not check(same, "%s: group %d %r, expected %r" % (
                what, i, {f: g.get(f) for f in fields}, {f: e[f] for f in fields})):
            break
    check(doc["value_count"] == len(exp["values"]), "%s: value_count %d, expected %d" % (
        what, doc["value_count"], len(exp["values"])))
    got = {x["value"].encode("utf-8", "surrogateescape"): x for x in doc["values"]}
    for e in exp["values"]:
        g = got.get(e["value"])
        if not check(g is not None, "%s: value %r missing" % (what, e["value"][:40])):
            continue
        for f in ("length", "count", "memsize", "objects_memsize", "frozen", "fstring",
                  "site_count", "sites"):
            check(g[f] == e[f], "%s: value %r: %s %r, expected %r" % (what, e["value"][:40], f,
                                                                     g[f], e[f]))
        check((g["copies"], g["saving"]) == (e["count"], e["memsize"]),
              "%s: value %r: copies, saving" % (what, e["value"][:40]))
    order = [(x["memsize"], x["count"]) for x in doc["values"]]
    check(order == sorted(order, reverse=True), what + ": values biggest saving first")


# ---------------------------------------------------------------- planted sets

def planted(doc, truth):
    """Each planted set at its site, its numbers from Ruby's own measures."""
    groups = {(g["key"], g["finding"], g["type"]): g for g in doc["groups"]}
    two_sites = [p for p in truth["plants"] if p["kind"] == "duplicate" and
                 sum(q["value"] == p["value"] for q in truth["plants"]) > 1]
    for p in truth["plants"]:
        key = "%s:%d" % (p["file"], p["line"])
        g = groups.get((key, p["kind"], p["type"]))
        what = "planted %s %s at %s" % (p["kind"], p["type"], key)
        if not check(g is not None, what + ": not found"):
            continue
        mem, size, n = p["memsize"], p["bytesize"], p["count"]
        if p["kind"] == "empty":
            check(g["count"] == n, "%s: count %d, planted %d" % (what, g["count"], n))
            check(g["memsize"] == sum(mem), "%s: saving %d, Ruby's memsize %d" % (
                what, g["memsize"], sum(mem)))
            check(g["saving"] == sum(mem) and g["objects"] == n,
                  "%s: saving %d, objects %d" % (what, g["saving"], g["objects"]))
        elif p["kind"] == "oversized":
            # Ruby's memsize_of: slot (40) + buffer (+ 1 byte terminator for a
            # String); the content is bytesize, 8 bytes per element, 64 per entry
            per = {"STRING": 1, "ARRAY": 8, "HASH": 64}[p["type"]]
            term = 1 if p["type"] == "STRING" else 0
            want = sum(m - 40 - term - per * s for m, s in zip(mem, size))
            check(g["count"] == n, "%s: count %d, planted %d" % (what, g["count"], n))
            check(g["memsize"] == want, "%s: saving %d, from Ruby's memsize %d" % (
                what, g["memsize"], want))
            check(g["saving"] == want and g["objects"] == n,
                  "%s: saving %d, objects %d" % (what, g["saving"], g["objects"]))
        else:
            others = [q for q in two_sites if q is not p and q["value"] == p["value"]]
            kept_here = not others or all(n > q["count"] for q in others)
            want_n = n - (1 if kept_here else 0)
            want = sum(mem) - (max(mem) if kept_here else 0)
            check(g["copies"] == n, "%s: copies %d, planted %d" % (what, g["copies"], n))
            check(g["count"] == want_n, "%s: count %d, expected %d" % (what, g["count"], want_n))
            check(g["memsize"] == want, "%s: saving %d, from Ruby's memsize %d" % (
                what, g["memsize"], want))
            check(g["frozen"] == p["frozen"], "%s: frozen %d, planted %d" % (
                what, g["frozen"], p["frozen"]))
            vals = [x for x in g["values"] if x["value"] == p["value"]]
            check(len(vals) == 1 and vals[0]["count"] == n, what + ": its value")
            # one name, one meaning: copies are all the copies at every
            # level, saving the bytes freed, objects the finding's objects
            check(g["objects"] == n and g["saving"] == want, "%s: objects %d, saving %d" % (
                what, g["objects"], g["saving"]))
            check(len(vals) == 1 and vals[0]["copies"] == n and
                  vals[0]["saving"] == vals[0]["memsize"], what + ": its value's copies, saving")
            # the fix that works there: Ruby 3.1 marks no literal, so an
            # unfrozen copy may be a literal or a built string; frozen
            # copies are no literals; a gem's code is not the app's
            want_fix = ("gem" if "/gems/wastegem-" in key else
                        "intern" if p["frozen"] == n else "intern_or_literal")
            check(g["fix_kind"] == want_fix, "%s: fix_kind %s, expected %s" % (
                what, g["fix_kind"], want_fix))
            check((want_fix == "gem") == g["fix"].startswith("gem wastegem's code"),
                  "%s: fix %r" % (what, g["fix"]))


def ctypes_heap_waste(dump):
    """hscope_waste_compute on a heap loaded with values, written as JSON."""
    lib = ctypes.CDLL(os.path.join(os.path.dirname(CLI), "libheapscope.so.0"))

    class Err(ctypes.Structure):
        _fields_ = [("size", ctypes.c_uint32), ("status", ctypes.c_int32),
                    ("sys_errno", ctypes.c_int32), ("reserved", ctypes.c_uint32),
                    ("line", ctypes.c_uint64), ("offset", ctypes.c_uint64),
                    ("message", ctypes.c_char * 256)]

    class LoadOpts(ctypes.Structure):
        _fields_ = [("size", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                    ("allocator", ctypes.c_void_p), ("progress", ctypes.c_void_p),
                    ("progress_user_data", ctypes.c_void_p), ("max_line_bytes", ctypes.c_uint64),
                    ("max_memory", ctypes.c_uint64), ("max_objects", ctypes.c_uint64),
                    ("max_references", ctypes.c_uint64), ("threads", ctypes.c_uint32),
                    ("reserved", ctypes.c_uint32), ("line_fn", ctypes.c_void_p),
                    ("line_user_data", ctypes.c_void_p)]

    class ReportOpts(ctypes.Structure):
        _fields_ = [("size", ctypes.c_uint32), ("format", ctypes.c_int32),
                    ("flags", ctypes.c_uint32), ("width", ctypes.c_uint32),
                    ("top", ctypes.c_uint64), ("depth", ctypes.c_uint32),
                    ("max_paths", ctypes.c_uint32), ("dump_names", ctypes.c_void_p),
                    ("dump_name_count", ctypes.c_uint64)]

    WRITE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.POINTER(ctypes.c_char),
                             ctypes.c_uint64)
    lib.hscope_heap_open_file.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p,
                                          ctypes.POINTER(LoadOpts), ctypes.POINTER(Err)]
    lib.hscope_waste_compute.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                                         ctypes.c_void_p, ctypes.POINTER(Err)]
    lib.hscope_waste_write.argtypes = [ctypes.c_void_p, ctypes.POINTER(ReportOpts), WRITE,
                                       ctypes.c_void_p, ctypes.POINTER(Err)]
    lib.hscope_waste_free.argtypes = [ctypes.c_void_p]
    lib.hscope_heap_free.argtypes = [ctypes.c_void_p]
    err = Err(size=ctypes.sizeof(Err))
    lo = LoadOpts(size=ctypes.sizeof(LoadOpts), flags=0x2)  # HSCOPE_LOAD_VALUES
    heap, waste = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.hscope_heap_open_file(ctypes.byref(heap), dump.encode(), ctypes.byref(lo),
                                     ctypes.byref(err)) == 0, err.message
    assert lib.hscope_waste_compute(ctypes.byref(waste), heap, None, ctypes.byref(err)) == 0, \
        err.message
    out = []

    @WRITE
    def sink(ud, data, n):
        out.append(ctypes.string_at(data, n))
        return 0

    ro = ReportOpts(size=ctypes.sizeof(ReportOpts), format=2, flags=0x4, top=2 ** 64 - 1)
    assert lib.hscope_waste_write(waste, ctypes.byref(ro), sink, None, ctypes.byref(err)) == 0
    lib.hscope_waste_free(waste)
    lib.hscope_heap_free(heap)
    return json.loads(b"".join(out).decode("utf-8", "surrogateescape"))


def advice():
    """The fix per kind of site on a hand-made Ruby 3.4 dump (the expected
    kinds are worked out by hand in tests/api/test_waste.c, test_fixes)."""
    data = os.environ.get("HEAPSCOPE_TEST_DATA", "tests/data")
    dump = os.path.join(data, "waste-advice.jsonl")
    doc = jrun("waste", "--top", "0", dump)
    kinds = {(g["key"].rsplit("/", 1)[-1], g["finding"]): (g["fix_kind"], g.get("chilled"))
             for g in doc["groups"]}
    want = {("user.rb:12", "duplicate"): ("literal", 3), ("row.rb:7", "duplicate"): ("intern", 0),
            ("x.rb:3", "duplicate"): ("intern_or_literal", 1),
            ("y.rb:4", "duplicate"): ("intern", 0), ("inflector.rb:20", "duplicate"): ("gem", 0),
            ("inflector.rb:21", "empty"): ("gem", None), ("set.rb:30", "duplicate"): ("stdlib", 0),
            ("<internal:kernel>:90", "duplicate"): ("ruby", 0),
            ("(none):0", "duplicate"): ("untraced", 0)}
    check(kinds == want, "waste advice: fix kinds %r, expected %r" % (kinds, want))
    text = " ".join(run("waste", dump).out.split())  # the fixes unwrapped
    for line in ("fix: gem activesupport's code (activesupport-7.1.3), not the app's",
                 "fix: Ruby's own code (<internal:kernel>), not the app's",
                 "fix: no allocation info:",
                 "fix: the copies are string literals (Ruby marks them chilled): add "
                 "# frozen_string_literal: true"):
        check(line in text, "waste advice: no %r in the text" % line)
    # the magic comment is offered at the literal site only
    check(text.count("add # frozen_string_literal: true") == 1,
          "waste advice: the magic comment offered where it cannot help")


def main():
    advice()
    if not shutil.which("ruby"):
        print("SKIP: ruby is not installed: the waste tests make their dump with "
              "examples/workloads/waste.rb")
        return 77
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    r = subprocess.run(["ruby", "--disable-gems", WORKLOAD, WORK, "--gzip"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    if r.returncode != 0:
        print(r.stdout.decode(errors="replace"))
        print("FAIL: the workload failed")
        return 1
    dump = os.path.join(WORK, "waste.json")
    with open(os.path.join(WORK, "waste_truth.json")) as fh:
        truth = json.load(fh)
    exp = expected(dump)
    doc = jrun("waste", "--top", "0", "--values", dump)
    compare(doc, exp, "waste --json")
    planted(doc, truth)
    # the allocation tracer: left out by default (the total is the heap
    # without it, and the shares too), kept with --keep-tracer
    check(exp["excluded_tracer"]["count"] == 1,
          "the workload's dump holds the allocation tracer (%r)" % exp["excluded_tracer"])
    kdoc = jrun("waste", "--top", "0", "--values", "--keep-tracer", dump)
    kexp = expected(dump, keep_tracer=True)
    compare(kdoc, kexp, "waste --json --keep-tracer")
    check(kdoc["total"]["memsize"] == doc["total"]["memsize"] + exp["excluded_tracer"]["memsize"]
          and kdoc["total"]["count"] == doc["total"]["count"] + 1,
          "waste --keep-tracer: the total grows by exactly the tracer")
    check("left out: the allocation tracer (trace_object_allocations), 1 object" in
          run("waste", dump).out, "waste text: says the tracer was left out")

    # 3. threads, gzip, a loaded heap
    base = run("waste", "--json", "--top", "0", "--values", dump).out
    for args in (["--threads", "1"], ["--threads", "2"], ["--threads", "3"]):
        out = run("waste", "--json", "--top", "0", "--values", *args, dump).out
        check(out == base, "waste %s: another answer" % " ".join(args))
    gz = json.loads(run("waste", "--json", "--top", "0", "--values", dump + ".gz").out)
    gz["dumps"] = doc["dumps"]
    check(gz == doc, "waste of the gzip copy: another answer")
    if os.environ.get("HEAPSCOPE_SANITIZED") == "1":
        print("note: a sanitizer build: the loaded-heap variant (ctypes) is checked by the "
              "normal build only (api-waste checks it here)")
    else:
        heap = ctypes_heap_waste(dump)
        heap["dumps"] = doc["dumps"]
        check(heap == doc, "hscope_waste_compute on the loaded heap: another answer")

    # 4. by gem
    gdoc = jrun("waste", "--by", "gem", "--top", "0", dump)
    check(gdoc["by"] == "gem", "--by gem: by")
    gems = {(g["key"], g["finding"]): g for g in gdoc["groups"]}
    gp = [p for p in truth["plants"] if p["file"].endswith("wastegem.rb")][0]
    g = gems.get(("wastegem-1.2.3", "duplicate"))
    if check(g is not None, "--by gem: no duplicates under wastegem-1.2.3"):
        check(g["copies"] == gp["count"] and g["count"] == gp["count"] - 1,
              "--by gem: wastegem-1.2.3 copies %d count %d, planted %d" % (
                  g["copies"], g["count"], gp["count"]))
    check(("(app)", "duplicate") in gems and ("(app)", "empty") in gems, "--by gem: (app) rows")
    check(gdoc["recoverable"] == doc["recoverable"], "--by gem: another total")

    # 5. privacy
    text = run("waste", "--top", "0", dump).out
    nojson = run("waste", "--json", "--top", "0", dump).out
    for p in truth["plants"]:
        if p["value"]:
            check(p["value"] not in text and json.dumps(p["value"])[1:-1] not in nojson,
                  "value %r printed without --values" % p["value"][:30])
    check('"value"' not in nojson, "JSON has values without --values")
    vals = {x["hash"]: x for x in json.loads(nojson)["values"]}
    for x in doc["values"]:
        check(x["hash"] in vals and vals[x["hash"]]["length"] == x["length"],
              "the hash of a value differs with --values")
        if x["count"] >= 1000:
            check("%d B #%s" % (x["length"], x["hash"][:8]) in text,
                  "text: value %r not shown as length and hash" % x["value"][:30])
    vtext = run("waste", "--values", "--top", "0", dump).out
    check('"waste-dup-active" (16 B)' in vtext, "--values: the value is not shown")
    again = run("waste", "--json", "--top", "0", dump).out
    check(again == nojson, "two reports of one dump differ")

    # 6. totals in text, errors (the schema: suite json)
    first = text.splitlines()[0]
    check(first.startswith("Waste in %s: " % dump) and "recoverable" in first,
          "text: first line %r" % first)
    cat = subprocess.Popen(["cat", dump], stdout=subprocess.PIPE)
    p = run("waste", "/dev/stdin", stdin=cat.stdout, ok=1)
    cat.stdout.close()
    cat.wait()
    check("not a regular file" in p.err, "a pipe: %r" % p.err)
    run("waste", os.path.join(WORK, "missing.json"), ok=1)
    run("waste", "--by", "class", dump, ok=2)
    run("waste", "--ratio", "1", dump, ok=2)
    run("waste", dump, dump, ok=2)
    run("waste", ok=2)
    help_ = run("waste", "--help").out
    check("--values" in help_ and "--min-slack" in help_, "waste --help")
    if failures:
        print("%d failures" % len(failures))
        return 1
    print("ok: %d planted sets, %d places, %d values checked" % (
        len(truth["plants"]), len(doc["groups"]), len(doc["values"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
