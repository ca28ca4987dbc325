#!/usr/bin/env python3
"""bench/serve.py - `heapscope serve` against a plain load.

    python3 bench/serve.py [--heapscope build/heapscope] [--runs N] DUMP

Measures, on one dump:
  - a plain load: `heapscope summary DUMP` (wall time, peak RSS by GNU time);
  - the time to the URL (first line of stdout) of `heapscope serve DUMP`,
    parsing the dump, and from a saved index (`heapscope index` on a
    symlink in a temporary directory: the data directory is not written);
  - per endpoint, the time of each answer (the best of --runs requests on
    loopback: the server's time plus a round trip of well under a
    millisecond), after what it needs was computed; and how long the
    background work took (dominator tree, paths, drill-down tallies, waste)
    until the first answer that needed it;
  - the server's peak RSS (VmHWM) after every endpoint was answered, against
    the plain load's.
Prints a markdown table.  Python 3 standard library, GNU time.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "serve"))
import serve_util  # noqa: E402


def plain_load(hs, dump, runs):
    best = None
    for _ in range(runs):
        r = subprocess.run(["/usr/bin/time", "-f", "%e %M", hs, "summary", "--no-progress",
                            "--no-index", dump], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        m = re.search(r"([\d.]+) (\d+)\s*$", r.stderr)
        sec, kb = float(m.group(1)), int(m.group(2))
        best = (sec, kb) if best is None or sec < best[0] else (best[0], max(best[1], kb))
    return best


def hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def timed(s, path, runs):
    """(first answer's seconds incl. background work, best answer's seconds)."""
    t0 = time.monotonic()
    st, _ = s.get_json(path, wait=3600)
    first = time.monotonic() - t0
    best = None
    for _ in range(runs):
        t = time.monotonic()
        st2, _, body = s.request("/api/" + path)
        dt = time.monotonic() - t
        best = dt if best is None else min(best, dt)
    return st, first, best, len(body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("--heapscope", default=os.path.join(os.path.dirname(HERE), "build", "heapscope"))
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    hs = os.path.abspath(a.heapscope)
    serve_util.HEAPSCOPE = hs
    dump = os.path.abspath(a.dump)
    size = os.path.getsize(dump)
    load_s, load_kb = plain_load(hs, dump, 2)

    tmp = tempfile.mkdtemp(prefix="hs-bench-serve-")
    link = os.path.join(tmp, os.path.basename(dump))
    os.symlink(dump, link)
    subprocess.run([hs, "index", "--no-progress", link], check=True, stdout=subprocess.DEVNULL)

    s = serve_util.Server("--no-index", dump, timeout=3600)
    url_parse = s.url_seconds
    s.stop()
    s = serve_util.Server(link, timeout=3600)
    url_index = s.url_seconds
    rows = []
    try:
        at_url = hwm_kb(s.proc.pid)
        _, ret = s.get_json("retained?limit=1", wait=3600)
        with_tree = hwm_kb(s.proc.pid)
        top = ret["objects"][0]["address"]
        _, mem = s.get_json("members?by=class&key=String&limit=1", wait=3600)
        obj = mem["objects"][0]["address"]
        for path in ["info", "summary", "tally?by=class&limit=2000",
                     "tally?by=file:line:class&limit=2000", "members?by=class&key=String&limit=100",
                     "object?addr=" + obj, "object?addr=" + top,
                     "object?addr=" + top + "&list=references&offset=0&limit=100",
                     "paths?addr=" + obj + "&max=3",
                     "domtree?depth=1&limit=50", "domtree?addr=" + top + "&depth=1&limit=50",
                     "retained?limit=20", "search?q=Desk", "search?q=" + obj, "waste?limit=20"]:
            st, first, best, n = timed(s, path, a.runs)
            rows.append((path.replace(obj, "OBJ").replace(top, "TOP"), st, first, best, n))
        peak = hwm_kb(s.proc.pid)
    finally:
        s.stop()
    print("dump: %s (%.0f MB)\n" % (dump, size / 1e6))
    print("| measure | value |\n|---|---|")
    print("| plain load (summary --no-index) | %.2f s, peak RSS %.0f MB |" % (load_s, load_kb / 1024))
    print("| serve: URL after parsing | %.2f s (%.2fx the load) |" % (url_parse, url_parse / load_s))
    print("| serve: URL from the saved index | %.3f s |" % url_index)
    print("| serve: peak RSS at the URL (index) | %.0f MB (%.2fx the load) |"
          % (at_url / 1024, at_url / load_kb))
    print("| serve: peak RSS with the dominator tree | %.0f MB (%.2fx the load) |"
          % (with_tree / 1024, with_tree / load_kb))
    print("| serve: peak RSS after every endpoint | %.0f MB (%.2fx the load) |"
          % (peak / 1024, peak / load_kb))
    print("\n| endpoint | status | first answer (with background work) | answer (best of %d) | bytes |"
          % a.runs)
    print("|---|---|---|---|---|")
    for p, st, first, best, n in rows:
        print("| `%s` | %d | %.3f s | %.1f ms | %d |" % (p, st, first, best * 1000, n))


if __name__ == "__main__":
    main()
