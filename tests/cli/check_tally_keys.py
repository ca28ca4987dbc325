#!/usr/bin/env python3
"""The CLI's --by accepts exactly the tally keys the library accepts.

The keys are documented twice, in the public header (the tally's doc
comment) and in the man page (heapscope tally, the list of KEYs); both
lists must name the same keys.  Each documented key and a set of near
misses (case, spaces, a cut or extended key, words of other options) are
then given to the library (tally_key_probe: hscope_tally_compute() and
hscope_tally_file(), status 0 = OK, 10 = HSCOPE_ERR_UNSUPPORTED) and to
every command whose --by takes a tally key (tally, diff, retained,
histogram, timeline, report).  Checked: the library takes every documented
key and refuses every near miss, its two entries agree, and each command
accepts a key (exit 0) exactly when the library does, and otherwise says
"heapscope: unknown --by key 'KEY'" and exits 2.

Usage: HEAPSCOPE=/path/to/heapscope check_tally_keys.py PROBE HEADER MANPAGE WORKDIR
"""
import os
import re
import shutil
import subprocess
import sys

CLI = os.environ["HEAPSCOPE"]
DUMP = os.path.join(os.environ["HEAPSCOPE_TEST_DATA"], "ruby31-sample.jsonl")
PROBE, HEADER, MANPAGE, WORK = sys.argv[1:5]
OK, UNSUPPORTED = 0, 10
NEAR_MISSES = ["", "Type", "CLASS", "type ", " class", "file:", "file:line:",
               "file:line:class:method", "line", "gems", "generations", "file,line",
               "memsize", "count", "address", "bogus"]
failures = []


def fail(what):
    failures.append(what)
    print("FAIL:", what)


def header_keys():
    """The quoted names of the tally's doc comment: 'one of "type", ...'."""
    text = open(HEADER, encoding="utf-8").read()
    m = re.search(r"/\*\* Group live objects by a key: one of (.*?)\*/", text, re.S)
    return re.findall(r'"([^"]+)"', m.group(1)) if m else []


def manpage_keys():
    """The .TP items of heapscope tally's KEY list, up to the gem key's
    own list (.RS ... .RE)."""
    text = open(MANPAGE, encoding="utf-8").read()
    start = text.find("The same keys are used by")
    end = text.find(".RS", start)
    keys = []
    for item in re.findall(r"^\.TP\n\.BR? (.*)$", text[start:end], re.M):
        keys += [k for k in re.findall(r'"[^"]*"|\S+', item) if not k.startswith('"')]
    return keys


def library(keys):
    p = subprocess.run([PROBE, DUMP, *keys], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    if p.returncode != 0:
        fail("tally_key_probe: exit %d: %s" % (p.returncode, p.stderr))
    verdict = {}
    for line in p.stdout.decode().split("\n")[:-1]:
        key, s1, s2 = line.split("\t")
        if s1 != s2:
            fail("library: key %r: hscope_tally_compute %s, hscope_tally_file %s"
                 % (key, s1, s2))
        if int(s1) not in (OK, UNSUPPORTED):
            fail("library: key %r: status %s" % (key, s1))
        verdict[key] = int(s1) == OK
    if sorted(verdict) != sorted(keys):
        fail("tally_key_probe answered for %r" % sorted(verdict))
    return verdict


def commands(key):
    a, b = os.path.join(WORK, "a.jsonl"), os.path.join(WORK, "b.jsonl")
    html = os.path.join(WORK, "report.html")
    return {
        "tally": ["tally", "--no-index", "--by", key, a],
        "diff": ["diff", "--no-index", "--by", key, a, b],
        "retained": ["retained", "--no-index", "--by", key, a],
        "histogram": ["histogram", "--no-index", "--by", key, a],
        "timeline": ["timeline", "--by", key, a, b],
        "report": ["report", "--by", key, "-o", html, a, b],
    }


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    for name in ("a.jsonl", "b.jsonl"):
        shutil.copy(DUMP, os.path.join(WORK, name))
    documented = header_keys()
    if len(documented) < 8:
        fail("header: tally keys not found (%r)" % documented)
    if sorted(manpage_keys()) != sorted(documented):
        fail("man page keys %r, header keys %r" % (manpage_keys(), documented))
    keys = documented + [k for k in NEAR_MISSES if k not in documented]
    verdict = library(keys)
    for key in keys:
        if verdict.get(key) != (key in documented):
            fail("library: key %r %s, documented: %s"
                 % (key, "accepted" if verdict.get(key) else "refused", key in documented))
    runs = 0
    for key in keys:
        for cmd, args in commands(key).items():
            p = subprocess.run([CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=120)
            err = p.stderr.decode("utf-8", "replace")
            runs += 1
            said = err.startswith("heapscope: unknown --by key '%s'\n" % key)
            takes = verdict.get(key)
            if (p.returncode, said) != ((0, False) if takes else (2, True)):
                fail("%s --by %r: exit %d (the library %s the key): %s"
                     % (cmd, key, p.returncode, "takes" if takes else "refuses", err[:200]))
    print("%d keys (%d documented), %d command lines" % (len(keys), len(documented), runs))
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
    print("ok")


main()
