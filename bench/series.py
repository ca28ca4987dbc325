#!/usr/bin/env python3
"""Cost of the "memory over time" commands against a plain load, for one or
more heapscope binaries in the same run (bench/README.md, "Series commands").

On a bench set (heap_1.json .. heap_3.json of bench/run.py's data), times:

  load       summary --json --no-index heap_3      (the yardstick: a full load)
  timeline   timeline --json --by file:line:class heap_1 heap_2 heap_3
  timeline-type   the same --by type
  grew       diff --grew --json heap_1 heap_2 heap_3
  histogram  histogram --json heap_3
  export-csv, export-jsonl   export --format F --out TMP heap_1 heap_2 heap_3
  export-heapsnapshot   export --format heapsnapshot --no-index --out TMP/F heap_3
  load1, load2   summary --no-index of heap_1 and heap_2 (the 3-dump commands
             are also given against the sum of the three loads: "x loads")
  diff, suspects   diff --json / suspects --json heap_1 heap_2 heap_3
  retained, dominators   retained --json / dominators --json --no-index heap_3
  retained-class   retained --by class --json --no-index heap_3 (the retained
             size per class: a walk of the dominator tree)
  retained-all, dominators-full   retained --json --top 0 / dominators --json
             --full --no-index heap_3: every reachable object, ranked by
             retained size / with its immediate dominator (the largest JSON
             outputs, to stdout, thrown away)
  report, report3   report --no-index --out TMP/F.html of heap_3, of all three
             (--no-index: bench/run.py leaves heap_3.json.hsx beside the
             dump, which report would read instead of parsing heap_3)
  export-csv1   export --format csv --out TMP heap_3 (one dump)
  waste      waste --json heap_3
  simdjson   build/bench/simdjson_decode heap_3 2 1: a decode-only pass with
             simdjson On-Demand on 2 threads (built where libsimdjson-dev is;
             --simdjson PATH), timed like the others, the same for every binary

Every command of every binary runs once untimed (warm page cache), then N
rounds interleave all of them (so a busier machine slows all alike); the best
wall time and the lowest CPU time (user + sys, 10 ms resolution) of the N are
reported, with peak RSS (/usr/bin/time), the ratios to the same binary's load,
and, with two binaries, the second's over the first's.  On a busy machine the
CPU ratios are the steadier ones.  Binaries are copied with their libheapscope.so first, so that a
rebuild during the run does not mix versions.  Python 3 standard library only.

  python3 bench/series.py --data /work/data/bench/100M OLD/heapscope build/heapscope
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

TIME_BIN = "/usr/bin/time"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SIMDJSON = os.path.join(REPO, "build", "bench", "simdjson_decode")


def freeze(binary, into):
    """Copy the binary and the libheapscope.so* beside it (RUNPATH $ORIGIN)."""
    os.makedirs(into)
    src = os.path.dirname(os.path.abspath(binary))
    shutil.copy2(binary, os.path.join(into, "heapscope"))
    for lib in glob.glob(os.path.join(src, "libheapscope.so*")):
        if os.path.isdir(lib) and not os.path.islink(lib):
            continue  # meson's object directory, libheapscope.so.X.Y.Z.p
        dst = os.path.join(into, os.path.basename(lib))
        if os.path.islink(lib):
            os.symlink(os.readlink(lib), dst)
        else:
            shutil.copy2(lib, dst)
    return os.path.join(into, "heapscope")


def commands(data, tmp):
    d = [os.path.join(data, "heap_%d.json" % k) for k in (1, 2, 3)]
    return [
        ("load", ["summary", "--json", "--no-progress", "--no-index", d[2]]),
        ("timeline", ["timeline", "--json", "--by", "file:line:class"] + d),
        ("timeline-type", ["timeline", "--json", "--by", "type"] + d),
        ("grew", ["diff", "--grew", "--json"] + d),
        ("histogram", ["histogram", "--json", d[2]]),
        ("export-csv", ["export", "--format", "csv", "--out", os.path.join(tmp, "csv")] + d),
        ("export-jsonl", ["export", "--format", "jsonl", "--out", os.path.join(tmp, "jsonl")] + d),
        ("export-heapsnapshot", ["export", "--format", "heapsnapshot", "--no-index", "--no-progress",
                                 "--out", os.path.join(tmp, "heap_3.heapsnapshot"), d[2]]),
        ("load1", ["summary", "--json", "--no-progress", "--no-index", d[0]]),
        ("load2", ["summary", "--json", "--no-progress", "--no-index", d[1]]),
        ("diff", ["diff", "--json", "--no-progress"] + d),
        ("suspects", ["suspects", "--json", "--no-progress"] + d),
        ("retained", ["retained", "--json", "--no-progress", "--no-index", d[2]]),
        ("dominators", ["dominators", "--json", "--no-progress", "--no-index", d[2]]),
        ("retained-class", ["retained", "--by", "class", "--json", "--no-progress", "--no-index",
                            d[2]]),
        ("retained-all", ["retained", "--json", "--top", "0", "--no-progress", "--no-index",
                          d[2]]),
        ("dominators-full", ["dominators", "--json", "--full", "--no-progress", "--no-index",
                             d[2]]),
        ("report", ["report", "--no-progress", "--no-index", "--out", os.path.join(tmp, "r1.html"), d[2]]),
        ("report3", ["report", "--no-progress", "--no-index", "--out",
                     os.path.join(tmp, "r3.html")] + d),
        ("export-csv1", ["export", "--format", "csv", "--out", os.path.join(tmp, "csv1"), d[2]]),
        ("waste", ["waste", "--json", "--no-progress", d[2]]),
    ]


# 3-dump commands, also given against the sum of the three loads
SERIES = {"timeline", "timeline-type", "grew", "export-csv", "export-jsonl", "diff", "suspects",
          "report3"}


def run_once(exe, args):
    """(wall s, CPU s, peak RSS KB, sys s, minor faults) of one run; raises on failure."""
    t0 = time.perf_counter()
    p = subprocess.run([TIME_BIN, "-f", "%M %U %S %R", exe] + args, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit("%s %s failed: %s" % (exe, " ".join(args), p.stderr[-400:]))
    rss, user, sys_, flt = p.stderr.strip().splitlines()[-1].split()
    return wall, float(user) + float(sys_), int(rss), float(sys_), int(flt)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="a bench set: DIR/heap_{1,2,3}.json")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", help="comma-separated commands to time (load is always timed; "
                    "load1 and load2 too when a 3-dump command is)")
    ap.add_argument("--simdjson", default=DEFAULT_SIMDJSON,
                    help="the decode-only baseline binary (default: build/bench/simdjson_decode "
                    "when it was built); '' for none")
    ap.add_argument("binaries", nargs="+", help="heapscope binaries (first: the reference)")
    a = ap.parse_args()
    if not os.access(TIME_BIN, os.X_OK):
        raise SystemExit("needs GNU time at %s (apt-get install time)" % TIME_BIN)
    with tempfile.TemporaryDirectory(prefix="hs-series-") as tmp:
        exes = [freeze(b, os.path.join(tmp, "bin%d" % i)) for i, b in enumerate(a.binaries)]
        cmds = commands(a.data, tmp)
        if a.only:
            keep = set(a.only.split(",")) | {"load"}
            if keep & SERIES:
                keep |= {"load1", "load2"}
            cmds = [c for c in cmds if c[0] in keep]
        base = None
        if a.simdjson and os.access(a.simdjson, os.X_OK) and (not a.only or "simdjson" in a.only):
            base = shutil.copy2(a.simdjson, os.path.join(tmp, "simdjson_decode"))
        best = {}

        def keep_best(key, m):
            b = best.setdefault(key, list(m))
            for j in (0, 1, 3, 4):  # wall, CPU, sys, faults: the least
                b[j] = min(b[j], m[j])
            b[2] = max(b[2], m[2])  # peak RSS: the most

        for rnd in range(a.runs + 1):  # round 0: warm-up, untimed
            if base:
                m = run_once(base, [os.path.join(a.data, "heap_3.json"), "2", "1"])
                if rnd:
                    keep_best((0, "simdjson"), m)
            for name, args in cmds:
                # alternate which binary goes first, so neither is always
                # the one that runs on a just-warmed cache
                order = list(enumerate(exes))
                for i, exe in (order if rnd % 2 else order[::-1]):
                    m = run_once(exe, args)
                    if rnd:
                        keep_best((i, name), m)
            print("[series] round %d of %d done" % (rnd, a.runs), file=sys.stderr)
        report(a, exes, cmds, best, base)


def report(a, exes, cmds, best, base):
    load = os.uname().nodename, os.getloadavg()
    two = len(exes) > 1
    print("| command | " + " | ".join(
        "bin %d wall s, CPU s, sys s, minor faults, RSS MB | bin %d x load (wall, CPU); "
        "3 dumps: x loads" % (i, i) for i in range(len(exes)))
        + (" | bin 1 / bin 0 (wall, CPU) |" if two else " |"))
    print("|---" * (2 * len(exes) + 1 + two) + "|")
    names = [n for n, _ in cmds]
    for name in names:
        cells = []
        for i in range(len(exes)):
            w, cpu, rss, sy, flt = best[(i, name)]
            lw, lc = best[(i, "load")][:2]
            cell = "%.3f, %.2f, %.2f, %d, %.0f | %.2f, %.2f" % (w, cpu, sy, flt, rss / 1024,
                                                              w / lw, cpu / max(lc, 0.01))
            if name in SERIES and (i, "load1") in best:
                sw = sum(best[(i, k)][0] for k in ("load", "load1", "load2"))
                sc = sum(best[(i, k)][1] for k in ("load", "load1", "load2"))
                cell += "; %.2f, %.2f" % (w / sw, cpu / max(sc, 0.01))
            cells.append(cell)
        ratio = ""
        if two:
            ratio = " | %.2f, %.2f" % (best[(1, name)][0] / best[(0, name)][0],
                                       best[(1, name)][1] / max(best[(0, name)][1], 0.01))
        print("| %s | %s%s |" % (name, " | ".join(cells), ratio))
    if base:
        w, cpu, rss, sy, flt = best[(0, "simdjson")]
        print("\nsimdjson decode-only pass (2 threads): %.3f s wall, %.2f s CPU, %.2f s sys, "
              "%d minor faults, %.0f MB; load / simdjson (wall): %s" % (
                  w, cpu, sy, flt, rss / 1024,
                  ", ".join("bin %d %.2f" % (i, best[(i, "load")][0] / w) for i in range(len(exes)))))
    print("\nload sys / wall: " + ", ".join(
        "bin %d %.2f" % (i, best[(i, "load")][3] / best[(i, "load")][0]) for i in range(len(exes))))
    print("\nbest of %d runs (wall, CPU, sys, faults: the least; RSS: the most); %s, "
          "load average %.2f %.2f %.2f after the run" % (a.runs, load[0], *load[1]))
    for i, b in enumerate(a.binaries):
        print("bin %d: %s" % (i, b))


if __name__ == "__main__":
    main()
