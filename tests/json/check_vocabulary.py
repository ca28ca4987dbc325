#!/usr/bin/env python3
"""One vocabulary across every JSON document (docs/JSON.md, "Common
vocabulary"): a member name means one thing wherever it appears.  Walks
every schema in docs/schema/ and collects, per member name, the JSON types
it may take (through properties, items, $defs; $refs resolved within and
across the files), then checks the names the vocabulary defines:

  count, memsize     a number of objects / of bytes: an integer, or one
                     integer per dump (timeline, grew); or a {count, memsize}
                     total never under these names
  file, line         an allocation file (string or null) and line (integer)
  excluded_dumper_objects  an integer (objects left out), wherever it is
  growing            a boolean
  time               epoch seconds (a number) or null
  key, by            strings

that every member of a document's objects is described (the schemas are
strict: additionalProperties or unevaluatedProperties false), that an
object given with its retained total (retained, suspects) gives its
allocation file and line, and that a document with excluded_dumper_objects
anywhere has it at its top level (the objects left out of the result).

Usage: check_vocabulary.py SCHEMA_DIR
"""
import json
import os
import sys

DIR = sys.argv[1]
schemas = {f: json.load(open(os.path.join(DIR, f))) for f in sorted(os.listdir(DIR))
           if f.endswith(".json")}
failures = []
seen = {}          # name -> {(file, path): types}


def resolve(ref, here):
    f, _, frag = ref.partition("#")
    doc = schemas[f] if f else schemas[here]
    node = doc
    for part in [p for p in frag.split("/") if p]:
        node = node[part]
    return node, (f or here)


def types_of(node, here, depth=0):
    """The JSON types a schema node allows (arrays as 'array<...>')."""
    if depth > 20 or not isinstance(node, dict):
        return set()
    if "$ref" in node:
        n, f = resolve(node["$ref"], here)
        out = types_of(n, f, depth + 1)
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return out | types_of(rest, here, depth + 1) if "type" in rest else out
    out = set()
    for key in ("oneOf", "anyOf"):
        for alt in node.get(key, []):
            out |= types_of(alt, here, depth + 1)
    if "const" in node:
        out.add(type(node["const"]).__name__)
    t = node.get("type")
    for one in ([t] if isinstance(t, str) else t or []):
        if one == "array":
            inner = types_of(node.get("items", {}), here, depth + 1)
            out.add("array<%s>" % "|".join(sorted(inner)))
        else:
            out.add(one)
    if not out and "properties" in node:
        out.add("object")
    return out


def walk(node, here, path):
    if isinstance(node, dict):
        for name, sub in (node.get("properties") or {}).items():
            seen.setdefault(name, {})[(here, path + "/" + name)] = types_of(sub, here)
        for k, v in node.items():
            if k in ("properties",):
                for name, sub in v.items():
                    walk(sub, here, path + "/" + name)
            elif isinstance(v, (dict, list)):
                walk(v, here, path + "/" + k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            walk(v, here, path + "[%d]" % i)


for f, s in schemas.items():
    walk(s, f, "")

RULES = {
    "count": [{"integer"}, {"array<integer>"}],
    "memsize": [{"integer"}, {"array<integer>"}],
    "file": [{"string", "null"}],
    "line": [{"integer"}, {"integer", "null"}],
    "excluded_dumper_objects": [{"integer"}],
    "growing": [{"boolean"}],
    "time": [{"number", "null"}],
    "key": [{"string"}, {"string", "null"}],
}
# the rows of the export's tables (export.json $defs) are SQL columns: their
# names are the tables' (docs/TIMELINE.md), not the documents'
TABLE_ROWS = ("export.json", "/$defs/")

for name, allowed in RULES.items():
    for (f, path), ts in sorted(seen.get(name, {}).items()):
        if f == TABLE_ROWS[0] and path.startswith(TABLE_ROWS[1]):
            continue
        if ts and not any(ts <= a for a in allowed):
            failures.append("%s%s: %r is %s, the vocabulary says %s" % (f, path, name, sorted(ts),
                                                                      allowed))

# strictness: every object schema with properties closes itself
for f, s in schemas.items():
    def strict(node, path):
        if isinstance(node, dict):
            # common.json's objref_fields is a base the documents extend
            # (and close with unevaluatedProperties)
            if path.endswith("/$defs/objref_fields"):
                return
            if node.get("type") == "object" and "properties" in node and not (
                    node.get("additionalProperties") is False
                    or node.get("unevaluatedProperties") is False):
                failures.append("%s%s: an object schema that is not strict" % (f, path))
            for k, v in node.items():
                strict(v, path + "/" + k)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                strict(v, path + "[%d]" % i)
    strict(s, "")

# an object that names where it lies in the heap by its retained total
# (retained, suspects) says where it was allocated: file and line
for f, s in schemas.items():
    def sited(node, path):
        if isinstance(node, dict):
            props = node.get("properties") or {}
            addr = "address" in props or "objref_fields" in json.dumps(node.get("$ref", ""))
            if addr and "retained" in props and ("memsize" in props or "leaked" in props) and \
                    not ("file" in props and "line" in props):
                failures.append("%s%s: an object with a retained total but no file and line"
                                % (f, path))
            for k, v in node.items():
                sited(v, path + "/" + k)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                sited(v, path + "[%d]" % i)
    sited(s, "")
    # excluded_dumper_objects at the document's top level wherever the
    # document has it at all (timeline's dumps have it per dump too)
    if f != "common.json" and any(k[0] == f for k in seen.get("excluded_dumper_objects", {})) \
            and "excluded_dumper_objects" not in (s.get("properties") or {}):
        failures.append("%s: excluded_dumper_objects only below the top level" % f)

for m in failures:
    print("FAIL:", m)
n = sum(len(v) for k, v in seen.items() if k in RULES)
print("check_vocabulary: %d uses of %d names in %d schemas, %d failure(s)" %
      (n, len(RULES), len(schemas), len(failures)))
sys.exit(1 if failures else 0)
