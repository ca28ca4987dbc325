#!/usr/bin/env python3
"""Every --json output against its JSON Schema (docs/schema/KIND.json) and
the schemas against drift (suite 'json').

  1. the schemas are valid draft 2020-12 schemas, strict: every object
     schema with properties forbids other members (additionalProperties
     or unevaluatedProperties false), but for the one meant to be
     extended (common.json's objref_fields);
  2. docs/JSON.md has a section for every schema and names its kind;
  3. every --json command of summary, tally (plain and --stream), diff
     (2 and 3 dumps, --addresses, warnings), show (found, missing,
     --values, from a saved index), generations, dominators (top, ADDR,
     --full), retained (objects and --by), root (--max-paths), suspects,
     timeline, diff --grew, histogram (a tally), export, waste (--by
     file:line and gem, --values, a damaged dump), check (over and within
     budget, 1 and 3 dumps, a damaged dump) validates
     against the schema of its "kind", on real dumps of a small
     Ruby process and on hand-made ones (damage, a class holder, a root
     category holding leaked objects, Ruby 4.0's fields objects, object
     ids, flags and fields no version knows);
  4. drift fails: a valid document with an unknown member added (at the
     top, in a group, in an object reference), a renamed member
     (total_memsize, counts), groups as a number, or a bad address does
     not validate.

Usage: HEAPSCOPE=/path/to/heapscope check_schemas.py DOCS_DIR WORKDIR
Needs python3-jsonschema (4.10 as in Debian 12, or later) and ruby.
"""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import warnings

try:
    import jsonschema
    from jsonschema import Draft202012Validator
except ImportError:
    print("check_schemas: python3-jsonschema is not installed (scripts/setup.sh installs it)")
    sys.exit(77)

CLI = os.environ["HEAPSCOPE"]
DOCS, WORK = sys.argv[1], sys.argv[2]
SCHEMA_DIR = os.path.join(DOCS, "schema")
BASE = "https://heapscope.invalid/schema/"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import checklib  # noqa: E402
from checklib import check, failures  # noqa: E402,F401


# ------------------------------------------------------------ the schemas
schemas = {}
for f in sorted(os.listdir(SCHEMA_DIR)):
    if f.endswith(".json"):
        with open(os.path.join(SCHEMA_DIR, f)) as fh:
            schemas[f[:-5]] = json.load(fh)


def validator_for(kind):
    """A validator of kind's schema that resolves common.json locally."""
    try:  # jsonschema >= 4.18: the referencing library
        from referencing import Registry, Resource
        reg = Registry().with_resources(
            [(BASE + k + ".json", Resource.from_contents(s)) for k, s in schemas.items()])
        return Draft202012Validator(schemas[kind], registry=reg)
    except ImportError:  # Debian 12's 4.10
        store = {BASE + k + ".json": s for k, s in schemas.items()}
        res = jsonschema.RefResolver(BASE + kind + ".json", schemas[kind], store=store)
        return Draft202012Validator(schemas[kind], resolver=res)


def errors(doc, kind=None):
    kind = kind or doc.get("kind")
    if kind not in schemas:
        return ["no schema for kind %r" % kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return ["%s: %s" % ("/".join(map(str, e.absolute_path)), e.message)
                for e in validator_for(kind).iter_errors(doc)]


EXTENSIBLE = {"objref_fields"}  # extended with unevaluatedProperties: false


def lint(node, where):
    if isinstance(node, dict):
        props = node.get("properties")
        if node.get("type") == "object" and props is not None:
            name = where.rsplit("/", 1)[-1]
            check(node.get("additionalProperties") is False or
                  node.get("unevaluatedProperties") is False or name in EXTENSIBLE,
                  "schema %s: an object schema with properties must forbid others" % where)
        if "$ref" in node and "properties" in node:
            check(node.get("unevaluatedProperties") is False,
                  "schema %s: an extended $ref must end with unevaluatedProperties false" % where)
        for k, v in node.items():
            lint(v, where + "/" + k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            lint(v, "%s/%d" % (where, i))


check(set(schemas) >= {"common", "summary", "tally", "diff", "objects", "generations",
                       "dominators", "retained", "paths", "suspects"},
      "a schema per document kind of one dump and a diff (got %s)" % sorted(schemas))
for k, s in schemas.items():
    try:
        Draft202012Validator.check_schema(s)
    except jsonschema.exceptions.SchemaError as e:
        check(False, "schema %s.json is not a valid draft 2020-12 schema: %s" % (k, e.message))
    check(s.get("$schema") == "https://json-schema.org/draft/2020-12/schema",
          "%s.json declares draft 2020-12" % k)
    check(s.get("$id") == BASE + k + ".json", "%s.json has $id %s" % (k, BASE + k + ".json"))
    if k != "common":
        check(s.get("properties", {}).get("kind") == {"const": k},
              "%s.json: \"kind\" is the constant %r" % (k, k))
    lint(s, k)

md = open(os.path.join(DOCS, "JSON.md"), encoding="utf-8").read()
for k in schemas:
    if k != "common":
        check(re.search(r"^## .*`%s`" % re.escape(k), md, re.M) is not None,
              "docs/JSON.md has a section for kind `%s`" % k)
        check("schema/%s.json" % k in md, "docs/JSON.md links schema/%s.json" % k)

# ------------------------------------------------------------------ dumps
os.makedirs(WORK, exist_ok=True)
J = lambda *p: os.path.join(WORK, *p)


def write_dump(path, records, tail=b""):
    with open(path, "wb") as f:
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")).encode() + b"\n")
        f.write(tail)
    return path


series = [J("s_%d.json" % i) for i in (1, 2, 3)]
subprocess.run(["ruby", "--disable-gems", "-e", """
require 'objspace'
ObjectSpace.trace_object_allocations_start
class Cache; end
$keep = []
3.times do |i|
  100.times { |k| $keep << "leak #{i} #{k}" }
  $keep << { i => [i] }
  GC.start
  File.open(ARGV[0] % (i + 1), 'w') { |f| ObjectSpace.dump_all(output: f) }
end
""", J("s_%d.json")], check=True, timeout=300)
A, B, C = series
# a class holding a Hash holding Strings; a String held by the root
# category directly; a damaged last line and a line that is not JSON
base = [
    {"type": "ROOT", "root": "vm", "references": ["0x1000", "0x7000"]},
    {"address": "0x2000", "type": "CLASS", "name": "Class", "memsize": 100},
    {"address": "0x1000", "type": "CLASS", "class": "0x2000", "name": "PostsController",
     "references": ["0x3000"], "memsize": 500, "file": "app.rb", "line": 1, "generation": 1},
    {"address": "0x4000", "type": "CLASS", "name": "Hash", "memsize": 100},
    {"address": "0x3000", "type": "HASH", "class": "0x4000", "references": [], "memsize": 200,
     "size": 0, "file": "app.rb", "line": 2, "generation": 1},
    {"address": "0x6000", "type": "CLASS", "name": "String", "memsize": 100},
]
leak = [{"address": "0x%x" % (0x10000 + 0x28 * k), "type": "STRING", "class": "0x6000",
         "memsize": 40, "file": "app.rb", "line": 7, "generation": 5, "value": "secret %d" % k}
        for k in range(5)]
h1 = write_dump(J("h1.json"), base + [dict(base[0])])
late = dict(base[4], references=[l["address"] for l in leak[:4]], size=4)
rooted = {"address": "0x7000", "type": "STRING", "class": "0x6000", "memsize": 40,
          "file": "app.rb", "line": 9, "generation": 5}
h2 = write_dump(J("h2.json"), base[:4] + [late, base[5]] + leak + [rooted])
h3 = write_dump(J("h3.json"), base[:4] + [late, base[5]] + leak + [rooted],
                tail=b"not json at all\n{\"address\":\"0x9000\",\"type\":\"STR")
# waste: three copies of a value (one frozen), an empty Array, an oversized
# String, a shared one
arr = {"address": "0x5000", "type": "CLASS", "name": "Array", "memsize": 100}
dup = [{"address": "0x%x" % (0x20000 + 0x28 * k), "type": "STRING", "class": "0x6000",
        "memsize": 40, "bytesize": 5, "value": "hello", "file": "w.rb", "line": 3 + (k == 2),
        **({"frozen": True} if k else {})} for k in range(3)]
wd = write_dump(J("w.json"), [base[0], base[1], arr, base[5]] + dup + [
    {"address": "0x30000", "type": "ARRAY", "class": "0x5000", "memsize": 40, "length": 0,
     "file": "w.rb", "line": 5},
    {"address": "0x30028", "type": "STRING", "class": "0x6000", "memsize": 1041, "bytesize": 1,
     "capacity": 1000, "value": "x", "file": "w.rb", "line": 6},
    {"address": "0x30050", "type": "STRING", "class": "0x6000", "memsize": 40, "bytesize": 5,
     "shared": True, "value": "hello", "file": "w.rb", "line": 7}])

# Ruby 4.0+: an IMEMO fields object owned by a class, object ids (one of
# them moves in the last dump), flags that are not true, a shareable
# object, a field and a type no version knows, a machine_context holder
r40 = [
    {"type": "ROOT", "root": "vm", "references": ["0x1000"]},
    {"type": "ROOT", "root": "machine_context", "references": ["0x8000"]},
    {"address": "0x2000", "type": "CLASS", "slot_size": 96, "name": "Class", "memsize": 96,
     "flags": {"age": 3}},
    {"address": "0x1000", "type": "CLASS", "slot_size": 96, "class": "0x2000", "name": "Cache",
     "references": ["0x1100"], "memsize": 96, "flags": {"wb_protected": True, "age": 3}},
    {"address": "0x1100", "type": "IMEMO", "shape_id": 3, "slot_size": 24, "class": "0x1000",
     "imemo_type": "fields", "references": ["0x3000"], "memsize": 24, "flags": {"age": 1}},
    {"address": "0x4000", "type": "CLASS", "name": "Array", "memsize": 96, "flags": {"age": 3}},
    {"address": "0x3000", "type": "ARRAY", "class": "0x4000", "length": 0, "memsize": 40,
     "file": "app.rb", "line": 3, "generation": 1,
     "flags": {"age": 2, "object_id": 16, "shareable": True}, "warp_factor": 9},
    {"address": "0x5000", "type": "FIBER", "class": "0x4000", "memsize": 8},
]
moved = [dict(r, address="0x3300") if r.get("address") == "0x3000" else
         dict(r, references=["0x3300"]) if r.get("address") == "0x1100" else r for r in r40]
late40 = {"address": "0x8000", "type": "ARRAY", "class": "0x4000", "length": 0, "memsize": 40,
          "file": "app.rb", "line": 9, "generation": 2, "flags": {"age": 0, "object_id": 24}}
g1 = write_dump(J("r40_1.json"), r40)
g2 = write_dump(J("r40_2.json"), r40 + [late40])
g3 = write_dump(J("r40_3.json"), moved + [late40])


# check: a budget with every section and metric (over), one
# within budget, one without [leaked] given three dumps (a warning)
def write_budget(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


bud_all = write_budget(J("all.toml"), """[total]
memsize = "1 KB"
objects = 1_000_000
retained = "1 GB"
[leaked]
objects = 0
memsize = "1 MB"
[class."String"]
memsize = "10 MB"
retained = 100
[gem."nosuchgem"]
objects = 5
[site."app.rb:7:String"]
objects = 2
""")
bud_ok = write_budget(J("ok.toml"), "[total]\nobjects = 1_000_000_000\n[class.'String']\nobjects = 1_000_000\n")


def jrun(*args):
    p = subprocess.run([CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    try:
        return json.loads(p.stdout.decode("utf-8", "surrogateescape")), p
    except ValueError:
        check(False, "heapscope %s: not JSON (exit %d): %r %s" %
              (" ".join(args), p.returncode, p.stdout[:200], p.stderr[-300:]))
        return None, p


def first_of(path, type_):
    for line in open(path):
        r = json.loads(line)
        if r.get("type") == type_:
            return r["address"]


obj = first_of(C, "HASH")
cases = [
    ("summary", ["summary", "--json", C]),
    ("summary", ["summary", "--json", "--top", "3", h3]),
    ("tally", ["tally", "--json", "--top", "0", C]),
    ("tally", ["tally", "--json", "--stream", "--by", "gem", h3]),
    ("diff", ["diff", "--json", A, B, C]),
    ("diff", ["diff", "--json", "--addresses", "--by", "class", A, B]),
    ("diff", ["diff", "--json", C, C, C]),
    ("diff", ["diff", "--json", h1, h2, h3]),
    ("objects", ["show", "--json", "--no-index", C, obj, "0xdeadbeef"]),
    ("objects", ["show", "--json", "--values", "--no-index", h3, "0x1000", "0x10000"]),
    ("generations", ["generations", "--json", C]),
    ("generations", ["generations", "--json", "--top", "0", h3]),
    ("dominators", ["dominators", "--json", C]),
    ("dominators", ["dominators", "--json", "--full", "--no-class-edges", h3]),
    ("dominators", ["dominators", "--json", "--depth", "3", h3, "0x1000"]),
    ("dominators", ["dominators", "--json", h1, "0x1000"]),
    ("retained", ["retained", "--json", "--top", "0", C]),
    ("retained", ["retained", "--json", "--by", "class", "--top", "5", C]),
    ("paths", ["root", "--json", C, obj]),
    ("paths", ["root", "--json", "--max-paths", "3", h3, "0x10000", "0x3000"]),
    ("suspects", ["suspects", "--json", "--top", "0", A, B, C]),
    ("suspects", ["suspects", "--json", "--top", "0", h1, h2, h3]),
    ("summary", ["summary", "--json", g3]),
    ("objects", ["show", "--json", "--no-index", g3, "0x1100", "0x3300", "0x5000"]),
    ("diff", ["diff", "--json", "--addresses", g1, g2, g3]),
    ("suspects", ["suspects", "--json", "--top", "0", g1, g2, g3]),
    ("paths", ["root", "--json", g3, "0x3300", "0x8000"]),
    # many dumps (h1..h3: a damaged dump, warnings in the timeline)
    ("timeline", ["timeline", "--json", A, B, C]),
    ("timeline", ["timeline", "--json", "--top", "0", "--by", "type", "--metric", "count",
                  "--order", "given", h1, h2, h3]),
    ("grew", ["diff", "--grew", "--json", A, B, C]),
    ("tally", ["histogram", "--json", "--top", "0", h3]),
    ("export", ["export", "--json", "--format", "jsonl", "--out", J("export"), A, B]),
    ("waste", ["waste", "--json", "--top", "0", wd]),
    ("waste", ["waste", "--json", "--values", "--by", "gem", wd]),
    ("waste", ["waste", "--json", "--top", "1", C]),
    ("waste", ["waste", "--json", h3]),
    ("check", ["check", "--json", "--budget", bud_all, A, B, C]),
    ("check", ["check", "--json", "--budget", bud_all, h1, h2, h3]),
    ("check", ["check", "--json", "--budget", bud_ok, C]),
    ("check", ["check", "--json", "--budget", bud_ok, h3]),
    ("check", ["check", "--json", "--budget", bud_ok, A, B, C]),
]
docs = {}
for kind, args in cases:
    d, p = jrun(*args)
    if d is None:
        continue
    check(d.get("kind") == kind, "heapscope %s: kind %r, wanted %r" % (" ".join(args),
                                                                       d.get("kind"), kind))
    errs = errors(d, kind)
    check(not errs, "heapscope %s does not validate against %s.json:\n    %s" %
          (" ".join(args), kind, "\n    ".join(errs[:8])))
    docs.setdefault(kind, []).append(d)

# the hand-made dumps reached the branches the schemas allow
ws = [w["code"] for d in docs.get("summary", []) for w in d["warnings"]]
check("skipped_lines" in ws and "truncated" in ws,
      "summary of the damaged dump has skipped_lines and truncated warnings (%s)" % ws)
dw = [w["code"] for d in docs.get("diff", []) for w in d["warnings"]]
check("repeated" in dw, "diff X X X warns 'repeated' (%s)" % dw)
sus = [s for d in docs.get("suspects", []) for s in d["suspects"]]
check(any(s["type"] == "ROOT" and s["address"] is None for s in sus) and
      any(s["address"] for s in sus), "suspects lists a root category and an object holder")
wst = docs.get("waste", [])
check(len(wst) == 4 and all(d["findings"][f]["count"] for f in ("duplicate", "empty",
                                                                "oversized") for d in wst[:2])
      and "value" in wst[1]["values"][0] and "value" not in wst[0]["values"][0]
      and "skipped_lines" in [w["code"] for w in wst[3]["warnings"]],
      "waste: every finding, a value with --values only, a damaged dump's warning")
chk = docs.get("check", [])
check(len(chk) == 5 and not chk[0]["within_budget"] and chk[2]["within_budget"]
      and "leaked" in chk[0] and "retained" in chk[0] and "leaked" not in chk[2]
      and any(not r["found"] for r in chk[0]["rules"])
      and "skipped_lines" in [w["code"] for w in chk[3]["warnings"]]
      and "warning" in [w["code"] for w in chk[4]["warnings"]]
      and "skipped_lines" in [w["code"] for w in chk[1]["warnings"]],
      "check: over and within budget, leaked and retained, a group not found, a damaged "
      "dump's warning with and without the diff, three dumps without [leaked]")
shown = [o for d in docs.get("objects", []) for o in d["objects"]]
check(any(not o["found"] for o in shown) and any(o.get("value") for o in shown),
      "show: a missing address and a value")
# Ruby 4.0+ members reached: an owner, an object id, the shareable flag,
# unknown fields, matches by object id (the moved array), a conservative root
check(any(o.get("owner") for o in shown) and any("object_id" in o for o in shown)
      and any("shareable" in o.get("flags", []) for o in shown),
      "show: an IMEMO fields object's owner, an object_id, the shareable flag")
check(any(d["unknown"] for d in docs.get("summary", [])), "summary: unknown fields listed")
check(any(d["object_id_matches"] and d["notes"] for d in docs.get("diff", [])),
      "diff: objects matched by object_id, with a note")
check(any(s["conservative_root"] for s in sus), "suspects: a conservative root")
# the saved index: the record is null, and the document still validates
subprocess.run([CLI, "index", C], stdout=subprocess.DEVNULL, check=True)
d, _ = jrun("show", "--json", C, obj)
check(d is not None and d["objects"][0]["record"] is None and not errors(d),
      "show --json from a saved index: record null, valid")
os.unlink(C + ".hsx")

# ------------------------------------------------------------------ drift
good = {k: v[0] for k, v in docs.items()}
mutations = []
if "tally" in good:
    t = good["tally"]
    m = copy.deepcopy(t); m["rows"] = m.pop("groups"); mutations.append(("tally", "groups renamed rows", m))
    m = copy.deepcopy(t); m["groups"] = len(m["groups"]); mutations.append(("tally", "groups a number", m))
    m = copy.deepcopy(t); m["total_memsize"] = 1; mutations.append(("tally", "an unknown top member", m))
    m = copy.deepcopy(t); m["groups"][0]["counts"] = 1; mutations.append(("tally", "a member added to a group", m))
    m = copy.deepcopy(t); m["warnings"] = ["a bare string"]; mutations.append(("tally", "a warning as a string", m))
if "diff" in good:
    m = copy.deepcopy(good["diff"]); m["leaked"]["groups"] = []; mutations.append(("diff", "groups under leaked", m))
    m = copy.deepcopy(good["diff"]); m["dumps"] = [x["path"] for x in m["dumps"]]; mutations.append(("diff", "dumps as names", m))
if "paths" in good:
    m = copy.deepcopy(good["paths"]); m["paths"][0]["path"][0]["retained_count"] = 1
    mutations.append(("paths", "a member added to an object reference", m))
    m = copy.deepcopy(good["paths"]); m["paths"][0]["target"] = "0X00FF"
    mutations.append(("paths", "an address in capitals, padded", m))
if "dominators" in good:
    m = copy.deepcopy(good["dominators"]); m["top"][0]["root"] = 3
    mutations.append(("dominators", "a root that is not a name", m))
    m = copy.deepcopy(good["dominators"]); m["reachable"] = 5
    mutations.append(("dominators", "reachable as a number", m))
if "waste" in good:
    w = good["waste"]
    m = copy.deepcopy(w); m["heap"] = m.pop("total"); mutations.append(("waste", "total renamed heap", m))
    m = copy.deepcopy(w); m["groups"][0]["savings"] = 1; mutations.append(("waste", "a member added to a place", m))
    m = copy.deepcopy(w); m["values"][0]["value"] = 5; mutations.append(("waste", "a value that is not a string", m))
    m = copy.deepcopy(w); m["values"][0]["hash"] = "#a8d8"; mutations.append(("waste", "a short hash", m))
if "check" in good:
    c = good["check"]
    m = copy.deepcopy(c); m["rules"][0]["limit"] = "1 KB"; mutations.append(("check", "a limit as a string", m))
    m = copy.deepcopy(c); m["rules"][0]["section"] = "classes"; mutations.append(("check", "an unknown section", m))
    m = copy.deepcopy(c); m["over"] = m.pop("over_count"); mutations.append(("check", "over_count renamed", m))
if "summary" in good:
    m = copy.deepcopy(good["summary"]); m["roots"] = {r["root"]: r for r in m["roots"]}
    mutations.append(("summary", "roots keyed by name", m))
check(len(mutations) >= 16, "enough drift cases (%d)" % len(mutations))
for kind, what, doc in mutations:
    check(errors(doc, kind), "drift is caught: %s (%s) validates" % (what, kind))

shutil.rmtree(WORK, ignore_errors=True)
n = sum(len(v) for v in docs.values())
if failures:
    print("check_schemas: %d failure(s)" % len(failures))
    sys.exit(1)
print("check_schemas: %d documents of %d kinds valid, %d drift cases caught, schemas strict" %
      (n, len(docs), len(mutations)))
