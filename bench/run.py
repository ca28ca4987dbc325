#!/usr/bin/env python3
"""heapscope benchmark harness: load speed, memory and linearity on real Ruby heap dumps.

Generates (or reuses) heap dumps of about 10 MB, 100 MB and 1 GB with our own leak
workload (examples/workloads/leak_series.rb; or, with --generator corpus, the shared
corpus's gen_leak.rb), optionally gzip copies, and times `heapscope summary`
and `heapscope tally` on the third snapshot (heap_3.json) of each set.  Every timing is
the best of N runs, interleaved with a baseline measured in the same run (`wc -l` for
plain files, `zcat > /dev/null` for gzip), so that the "x baseline" ratio stays
comparable on noisy shared machines.

Prints one markdown table on stdout; progress goes to stderr.  See bench/README.md.
Python 3 standard library only.
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_HEAPSCOPE = os.path.join(REPO, "build", "heapscope")
DEFAULT_CORPUS = os.path.normpath(os.path.join(REPO, "..", "shared", "corpus"))
WORKLOAD = os.path.join(REPO, "examples", "workloads", "leak_series.rb")
# our build machines keep generated data in /work/data; elsewhere a cache directory
DEFAULT_DATA = ("/work/data/bench" if os.path.isdir("/work/data")
                else os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                                  "heapscope-bench"))
DEFAULT_RESULTS = os.path.join(REPO, "bench", "RESULTS.md")
TIME_BIN = "/usr/bin/time"
SEED = 42
MB = 1e6  # sizes and MB/s in this harness are decimal megabytes

# Sizes with measured generator parameters: (scale, gems) so that heap_3.json is about
# 10, 100 and 1000 MB.  ours: leak_series.rb with rubygems loaded (bench/README.md,
# "Data sets"); corpus: gen_leak.rb (../shared/corpus/README.md, "Dump size per scale").
PRESETS = {
    "ours": {"10M": (3.0, "none"), "100M": (60.0, "none"), "1G": (630.0, "none")},
    "corpus": {"10M": (7.0, "none"), "100M": (80.0, "activesupport"), "1G": (1000.0, "activesupport")},
}
SET_FILES = ("heap_1.json", "heap_2.json", "heap_3.json", "truth.json")
GENERATED_BY = {"ours": "ruby examples/workloads/leak_series.rb", "corpus": "gen_leak.rb"}


class BenchError(Exception):
    pass


def log(msg):
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- sizes and data sets

def parse_size(label):
    """'10M' -> 10e6 bytes; accepts K, M, G (decimal)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG])B?\s*", label, re.I)
    if not m:
        raise BenchError(f"bad size {label!r}: use e.g. 10M, 100M, 1G")
    return float(m.group(1)) * {"K": 1e3, "M": 1e6, "G": 1e9}[m.group(2).upper()]


def generator_params(label, generator="ours"):
    """(scale, gems) for the generator so that heap_3.json is about `label` big.

    Presets for 10M/100M/1G; other sizes use linear fits.  ours: heap_3 ~ 5.5 MB +
    1.573 MB/scale (measured at scales 3, 30, 60).  corpus (its README): ~ 3.5 MB +
    0.967 MB/scale without gems, ~ 21 MB + 0.96 MB/scale with activesupport (used from
    40 MB on, like the real-app-sized presets).
    """
    key = label.upper()
    if key in PRESETS[generator]:
        return PRESETS[generator][key]
    target = parse_size(label) / MB
    if generator == "ours":
        if target < 7:
            raise BenchError(f"size {label}: leak_series.rb cannot make a heap_3.json smaller than ~7 MB")
        return (round((target - 5.5) / 1.573, 2), "none")
    if target < 4.5:
        raise BenchError(f"size {label}: gen_leak.rb cannot make a heap_3.json smaller than ~4.5 MB")
    if target < 40:
        return (round((target - 3.5) / 0.967, 2), "none")
    return (round((target - 21.0) / 0.96, 1), "activesupport")


def set_matches(d, scale, gems, generator="ours"):
    """True if d holds a set made by the generator with these parameters (per truth.json)."""
    truth = os.path.join(d, "truth.json")
    plain = os.path.join(d, "heap_3.json")
    if not (os.path.isfile(truth) and os.path.isfile(plain)):
        return False
    try:
        with open(truth) as f:
            t = json.load(f)
    except (OSError, ValueError):
        return False
    if generator == "ours":
        same = t.get("workload") == "leak_series" and not t.get("gzip")
    else:
        same = t.get("generator") == "gen_leak.rb" and sorted(t.get("gems", [])) == sorted(gems.split(","))
    return (same and float(t.get("scale", -1)) == float(scale) and int(t.get("seed", -1)) == SEED
            and os.path.getsize(plain) == next((s.get("bytes") for s in t.get("snapshots", [])
                                                if s.get("file") == "heap_3.json"), None))


def check_free_space(path, need_bytes, what):
    os.makedirs(path, exist_ok=True)
    free = shutil.disk_usage(path).free
    if free < need_bytes:
        raise BenchError(f"not enough disk space for {what} in {path}: {free / 1e9:.1f} GB free, "
                         f"need about {need_bytes / 1e9:.1f} GB (check `df -h {path}`)")


def prepare_set(label, args, ruby_ok):
    """Return the path of heap_3.json for this size, generating the set if needed."""
    scale, gems = generator_params(label, args.generator)
    # DATA/SIZE holds gen_leak.rb sets (as before --generator existed), DATA/SIZE-workload ours
    setdir = os.path.join(args.data, label.upper() + ("-workload" if args.generator == "ours" else ""))
    if set_matches(setdir, scale, gems, args.generator):
        log(f"{label}: reusing {setdir} (scale {scale:g}, gems {gems})")
        return os.path.join(setdir, "heap_3.json")
    for d in args.reuse:
        if set_matches(d, scale, gems, args.generator):
            log(f"{label}: reusing {d} (scale {scale:g}, gems {gems}); linking it into {setdir}")
            os.makedirs(setdir, exist_ok=True)
            clear_set(setdir)
            for name in SET_FILES:
                src = os.path.join(os.path.abspath(d), name)
                if os.path.exists(src):
                    os.symlink(src, os.path.join(setdir, name))
            return os.path.join(setdir, "heap_3.json")
    ruby_ok(gems)
    target = parse_size(label)
    # heap_1 + heap_2 + heap_3 is about 2.6x heap_3; keep 1 GB spare.
    check_free_space(args.data, int(2.7 * target + 1e9), f"the {label} set")
    os.makedirs(setdir, exist_ok=True)
    clear_set(setdir)
    if args.generator == "ours":
        gen = WORKLOAD
        cmd = ["ruby", gen, "--scale", f"{scale:g}", "--seed", str(SEED), "--out", setdir]
    else:
        gen = os.path.join(args.corpus, "gen_leak.rb")
        cmd = ["ruby", gen, "--scale", f"{scale:g}", "--seed", str(SEED), "--gems", gems, "--no-verify",
               "--out", setdir]
    log(f"{label}: generating: {' '.join(cmd)}")
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    name = os.path.basename(gen)
    if r.returncode != 0:
        raise BenchError(f"{name} failed (exit {r.returncode}) for {label}:\n{r.stdout[-3000:]}")
    if not set_matches(setdir, scale, gems, args.generator):
        raise BenchError(f"{name} finished but {setdir} does not hold a matching set:\n{r.stdout[-3000:]}")
    log(f"{label}: generated in {time.perf_counter() - t0:.0f} s, heap_3.json "
        f"{os.path.getsize(os.path.join(setdir, 'heap_3.json')) / MB:.1f} MB")
    return os.path.join(setdir, "heap_3.json")


def clear_set(setdir):
    """Remove the files of a stale set (only the names this harness and the generators write)."""
    for name in SET_FILES + ("heap_1.json.gz", "heap_2.json.gz", "heap_3.json.gz"):
        p = os.path.join(setdir, name)
        if os.path.islink(p) or os.path.isfile(p):
            os.unlink(p)


def prepare_gzip(plain, label, args):
    """gzip -6 -n copy of plain next to the set (cached while newer than the plain file)."""
    gz = os.path.join(os.path.dirname(plain), "heap_3.json.gz")
    if os.path.isfile(gz) and os.path.getsize(gz) > 0 and os.path.getmtime(gz) >= os.path.getmtime(plain):
        log(f"{label}: reusing {gz}")
        return gz
    check_free_space(os.path.dirname(gz), int(os.path.getsize(plain) / 8 + 5e8), f"the gzip copy of {label}")
    log(f"{label}: gzip -6 -n {plain}")
    tmp = gz + ".tmp"
    with open(tmp, "wb") as out:
        r = subprocess.run(["gzip", "-6", "-n", "-c", plain], stdout=out)
    if r.returncode != 0:
        os.unlink(tmp)
        raise BenchError(f"gzip failed on {plain}")
    os.replace(tmp, gz)
    return gz


# ---------------------------------------------------------------- measuring

def timed(cmd, stdout_to=subprocess.DEVNULL, capture=False):
    """Run cmd under /usr/bin/time; return (wall seconds, peak RSS KiB, user+sys CPU seconds, stdout)."""
    with tempfile.NamedTemporaryFile("r", prefix="bench-time-", suffix=".txt") as tf:
        full = [TIME_BIN, "-f", "%M %U %S", "-o", tf.name] + cmd
        t0 = time.perf_counter()
        r = subprocess.run(full, stdout=subprocess.PIPE if capture else stdout_to, stderr=subprocess.PIPE)
        wall = time.perf_counter() - t0
        if r.returncode != 0:
            err = r.stderr.decode(errors="replace")[-2000:]
            raise BenchError(f"command failed (exit {r.returncode}): {' '.join(cmd)}\n{err}")
        lines = [ln for ln in tf.read().split("\n") if ln.strip()]
        try:
            rss, user, system = lines[-1].split()
            rss, cpu = int(rss), float(user) + float(system)
        except (IndexError, ValueError):
            raise BenchError(f"could not read peak RSS from {TIME_BIN} for: {' '.join(cmd)}")
        return wall, rss, cpu, (r.stdout if capture else None)


def bench_file(path, plain_bytes, kind, args):
    hs = args.heapscope
    baseline = ["wc", "-l", path] if kind == "plain" else ["zcat", path]
    summary = [hs, "summary", "--json", "--no-progress", "--no-index", path]
    summary1 = [hs, "summary", "--json", "--no-progress", "--no-index", "--threads", "1", path]
    tally = [hs, "tally", "--json", "--by", "file:line:class", "--no-progress", "--no-index", path]
    retained = [hs, "retained", "--json", "--top", "1", "--no-progress", "--no-index", path]
    fold = [hs, "tally", "--stream", "--json", "--by", "file:line:class", "--no-progress", "--no-index", path]
    ixsummary = [hs, "summary", "--json", "--no-progress", path]  # uses path.hsx, made below
    waste = [hs, "waste", "--json", "--no-progress", path]
    d = os.path.dirname(path)
    diff = None
    if kind == "plain" and all(os.path.exists(os.path.join(d, "heap_%d.json" % i)) for i in (1, 2)):
        diff = [hs, "diff", "--json", "--no-progress"] + [os.path.join(d, "heap_%d.json" % i) for i in (1, 2, 3)]

    # Warm-up (untimed): page cache, binary, and a check that every command works.
    timed(baseline)
    _, _, _, out = timed(summary, capture=True)
    info = json.loads(out)
    _, _, _, tout = timed(tally, capture=True)
    json.loads(tout)
    _, _, _, fout = timed(fold, capture=True)
    if json.loads(fout) != json.loads(tout):
        raise BenchError(f"tally --stream and tally disagree on {path}")
    _, _, _, wout = timed(waste, capture=True)
    if json.loads(wout).get("kind") != "waste":
        raise BenchError(f"waste did not write a waste document for {path}")
    # the saved index beside the dump (rebuilt each run of the benchmark)
    timed([hs, "index", "--no-progress", path])
    chk = subprocess.run(ixsummary[:2] + ["-v"] + ixsummary[2:], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    if chk.returncode != 0 or "using the index" not in chk.stderr:
        raise BenchError(f"summary did not use the index {path}.hsx: {chk.stderr[-500:]}")
    if {k: v for k, v in json.loads(chk.stdout).items() if k != "load"} != \
            {k: v for k, v in info.items() if k != "load"}:
        raise BenchError(f"summary from {path}.hsx differs from summary of {path}")

    runs = {"baseline": [], "summary": [], "summary_cpu": [], "load": [], "tally": [], "rss_kib": [],
            "tally_rss_kib": [], "summary1": [], "load1": [], "retained": [], "retained_rss_kib": [],
            "diff": [], "diff_rss_kib": [], "fold": [], "fold_rss_kib": [], "ixsummary": [],
            "waste": [], "waste_rss_kib": []}
    for i in range(args.runs):
        w, _, _, _ = timed(baseline)
        runs["baseline"].append(w)
        w, rss, cpu, out = timed(summary, capture=True)
        s = json.loads(out)
        runs["summary"].append(w)
        runs["summary_cpu"].append(cpu)
        runs["load"].append(s["load"]["seconds"])
        runs["rss_kib"].append(rss)
        w, trss, _, _ = timed(tally)
        runs["tally"].append(w)
        runs["tally_rss_kib"].append(trss)
        w1, _, _, out1 = timed(summary1, capture=True)
        runs["summary1"].append(w1)
        runs["load1"].append(json.loads(out1)["load"]["seconds"])
        wr, rrss, _, _ = timed(retained)
        runs["retained"].append(wr)
        runs["retained_rss_kib"].append(rrss)
        wf, frss, _, _ = timed(fold)
        runs["fold"].append(wf)
        runs["fold_rss_kib"].append(frss)
        wi, _, _, _ = timed(ixsummary)
        runs["ixsummary"].append(wi)
        ww, wrss, _, _ = timed(waste)
        runs["waste"].append(ww)
        runs["waste_rss_kib"].append(wrss)
        if diff:
            wd, drss, _, _ = timed(diff)
            runs["diff"].append(wd)
            runs["diff_rss_kib"].append(drss)
        log(f"  run {i + 1}/{args.runs}: {baseline[0]} {runs['baseline'][-1]:.3f} s, "
            f"summary {runs['summary'][-1]:.3f} s (load {s['load']['seconds']:.3f}), "
            f"tally {w:.3f} s, RSS {rss / 1024:.0f} MiB")

    mem = None
    if kind == "plain" and getattr(args, "mempeak", None):
        _, _, _, mout = timed([args.mempeak, path], capture=True)
        mem = json.loads(mout)

    best = min(runs["summary"])
    return {
        "mempeak": mem,
        "file": path,
        "kind": kind,
        "file_bytes": os.path.getsize(path),
        "plain_bytes": plain_bytes,
        "objects": info["total"]["count"],
        "references": info["references"],
        "skipped_lines": info.get("skipped_lines", 0),
        "model_bytes": info["load"]["model_bytes"],
        "index_bytes": info["load"]["index_bytes"],
        "bytes_per_object": info["load"]["bytes_per_object"],
        "baseline_cmd": " ".join(baseline[:2]) if kind == "plain" else "zcat",
        "runs": runs,
        "summary_s": best,
        "load_s": min(runs["load"]),
        "cpu_s": min(runs["summary_cpu"]),
        "baseline_s": min(runs["baseline"]),
        "tally_s": min(runs["tally"]),
        "summary1_s": min(runs["summary1"]),
        "load1_s": min(runs["load1"]),
        "retained_s": min(runs["retained"]),
        "retained_rss_bytes": max(runs["retained_rss_kib"]) * 1024,
        "diff_s": min(runs["diff"]) if runs["diff"] else None,
        "fold_s": min(runs["fold"]),
        "fold_rss_bytes": max(runs["fold_rss_kib"]) * 1024,
        "ixsummary_s": min(runs["ixsummary"]),
        "waste_s": min(runs["waste"]),
        "waste_rss_bytes": max(runs["waste_rss_kib"]) * 1024,
        "diff_rss_bytes": max(runs["diff_rss_kib"]) * 1024 if runs["diff_rss_kib"] else None,
        "peak_rss_bytes": max(runs["rss_kib"]) * 1024,
        "mb_per_s": plain_bytes / MB / best,
    }


def sha12(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:12]


def snapshot_heapscope(binary):
    """Copy heapscope and the shared libraries it loads from its own build directory into a
    private temporary directory, so that a rebuild during the run cannot mix versions.
    The build's RUNPATH is $ORIGIN, so the copy loads the copied libraries; this is checked.
    Returns (tmpdir, path of the copied binary, {file: sha256 prefix})."""
    binary = os.path.realpath(binary)
    builddir = os.path.dirname(binary)
    tmp = tempfile.mkdtemp(prefix="heapscope-bench-")
    dst = os.path.join(tmp, "heapscope")
    shutil.copy2(binary, dst)
    hashes = {"heapscope": sha12(dst)}
    ldd = subprocess.run(["ldd", binary], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    own = []
    for ln in ldd.stdout.splitlines():
        m = re.match(r"\s*(\S+) => (\S+) \(", ln)
        if m and os.path.realpath(m.group(2)).startswith(builddir + os.sep):
            shutil.copy2(os.path.realpath(m.group(2)), os.path.join(tmp, m.group(1)))
            hashes[m.group(1)] = sha12(os.path.join(tmp, m.group(1)))
            own.append(m.group(1))
    if own:
        check = subprocess.run(["ldd", dst], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        for name in own:
            m = re.search(re.escape(name) + r" => (\S+)", check)
            if not m or os.path.dirname(os.path.realpath(m.group(1))) != os.path.realpath(tmp):
                log(f"warning: the copy of heapscope does not load its own copy of {name}; "
                    f"measuring {binary} in place (a rebuild during the run would mix versions)")
                shutil.rmtree(tmp)
                return None, binary, hashes
    return tmp, dst, hashes


# ---------------------------------------------------------------- output

def fmt_s(x):
    return f"{x:.3f}" if x < 10 else f"{x:.2f}"


def make_table(results, runs):
    smallest = {}
    for r in results:
        per_mb = r["summary_s"] / (r["plain_bytes"] / MB)
        k = r["kind"]
        if k not in smallest or r["plain_bytes"] < smallest[k][0]:
            smallest[k] = (r["plain_bytes"], per_mb)
    head = ["file", "size MB", "on disk MB", "objects", f"summary s (best of {runs})", "load s", "CPU s",
            "MB/s", "baseline", "baseline s", "x baseline", "peak RSS MB", "RSS / size", "B/obj",
            f"tally s (best of {runs})", "cost/MB vs smallest", "1 thread s", "1 thread x baseline",
            "dominators+retained s", "3-dump diff s", "diff RSS MB", "fold s", "fold RSS MB",
            "fold / summary", "summary from index s", "index / parse", "dominators peak B/obj",
            "dominators kept B/obj", "waste s", "waste / summary", "waste RSS MB"]
    align = ["---"] + ["--:"] * (len(head) - 1)
    rows = []
    for r in results:
        per_mb = r["summary_s"] / (r["plain_bytes"] / MB)
        rows.append([
            f"{r['label']} {'gz' if r['kind'] == 'gzip' else 'plain'}",
            f"{r['plain_bytes'] / MB:.1f}",
            f"{r['file_bytes'] / MB:.1f}",
            f"{r['objects']:,}",
            fmt_s(r["summary_s"]),
            fmt_s(r["load_s"]),
            f"{r['cpu_s']:.2f}",
            f"{r['mb_per_s']:.0f}",
            r["baseline_cmd"],
            fmt_s(r["baseline_s"]),
            f"{r['summary_s'] / r['baseline_s']:.2f}",
            f"{r['peak_rss_bytes'] / MB:.0f}",
            f"{r['peak_rss_bytes'] / r['plain_bytes']:.2f}",
            f"{r['bytes_per_object']:.1f}",
            fmt_s(r["tally_s"]),
            f"{per_mb / smallest[r['kind']][1]:.2f}",
            fmt_s(r["summary1_s"]),
            f"{r['summary1_s'] / r['baseline_s']:.2f}",
            fmt_s(r["retained_s"]),
            fmt_s(r["diff_s"]) if r.get("diff_s") is not None else "-",
            f"{r['diff_rss_bytes'] / MB:.0f}" if r.get("diff_rss_bytes") else "-",
            fmt_s(r["fold_s"]) if r.get("fold_s") is not None else "-",
            f"{r['fold_rss_bytes'] / MB:.0f}" if r.get("fold_rss_bytes") else "-",
            f"{r['fold_s'] / r['summary_s']:.2f}" if r.get("fold_s") is not None else "-",
            fmt_s(r["ixsummary_s"]) if r.get("ixsummary_s") is not None else "-",
            f"{100 * r['ixsummary_s'] / r['summary_s']:.1f}%" if r.get("ixsummary_s") is not None else "-",
            f"{r['mempeak']['dom_peak_extra_per_object']:.1f}" if r.get("mempeak") else "-",
            f"{r['mempeak']['dom_kept_per_object']:.1f}" if r.get("mempeak") else "-",
            fmt_s(r["waste_s"]) if r.get("waste_s") is not None else "-",
            f"{r['waste_s'] / r['summary_s']:.2f}" if r.get("waste_s") is not None else "-",
            f"{r['waste_rss_bytes'] / MB:.0f}" if r.get("waste_rss_bytes") else "-",
        ])
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def sh(cmd, default="?"):
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else default
    except OSError:
        return default


def machine_info(args):
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for ln in f:
                if ln.startswith("model name"):
                    model = ln.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ram = "?"
    try:
        with open("/proc/meminfo") as f:
            for ln in f:
                if ln.startswith("MemTotal:"):
                    ram = f"{int(ln.split()[1]) / 1024 / 1024:.1f} GiB"
                    break
    except OSError:
        pass
    build = "?"
    srcdir = REPO
    mi = os.path.join(os.path.dirname(os.path.realpath(args.heapscope)), "meson-info")
    try:
        with open(os.path.join(mi, "intro-buildoptions.json")) as f:
            opts = {o["name"]: o["value"] for o in json.load(f)}
        build = (f"buildtype={opts.get('buildtype')}, optimization={opts.get('optimization')}, "
                 f"b_sanitize={opts.get('b_sanitize')}, b_lto={opts.get('b_lto')}")
        with open(os.path.join(mi, "intro-buildsystem_files.json")) as f:
            srcdir = os.path.dirname(json.load(f)[0])
    except (OSError, ValueError, KeyError, IndexError):
        pass
    commit = sh(["git", "-C", srcdir, "rev-parse", "--short=12", "HEAD"], default="")
    if commit and os.path.realpath(sh(["git", "-C", srcdir, "rev-parse", "--show-toplevel"], default="")) \
            == os.path.realpath(srcdir):
        dirty = sh(["git", "-C", srcdir, "status", "--porcelain", "--untracked-files=no"], default="")
        if dirty:
            commit += f" + uncommitted changes in {len(dirty.splitlines())} tracked file(s)"
        commit += f" ({srcdir})"
    else:
        commit = f"unknown: {srcdir} is not a git checkout (see the note)"
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": str(len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else str(os.cpu_count()),
        "cpu": model,
        "ram": ram,
        "kernel": f"{platform.system()} {platform.release()}",
        "heapscope": getattr(args, "version", "?") + f" ({os.path.realpath(args.heapscope)})",
        "hashes": ", ".join(f"{k} {v}" for k, v in args.hashes.items()),
        "build": build,
        "commit": commit,
        "python": platform.python_version(),
        "tools": f"{sh(['wc', '--version']).splitlines()[0]}; {sh(['gzip', '--version']).splitlines()[0]}",
    }


def write_results(path, table, info, argv, load_before, load_after, args):
    cmd = "python3 bench/run.py " + shlex.join(argv)
    text = f"""# heapscope benchmark results

Written by `bench/run.py --write-results`; see `bench/README.md` for what the columns mean
and how to read them.  Timings are wall times of whole processes with a warm page cache,
best of {args.runs} runs, interleaved with the baseline (`wc -l` / `zcat > /dev/null`) in the same run.

Command: `{cmd.strip()}`
{("" if not args.note else chr(10) + "Note: " + args.note + chr(10))}
| | |
|---|---|
| date | {info['date']} |
| CPUs (nproc) | {info['nproc']} × {info['cpu']} |
| RAM | {info['ram']} |
| kernel | {info['kernel']} |
| heapscope | {info['heapscope']} |
| build | {info['build']} |
| source (git commit) | {info['commit']} |
| sha256 of what ran | {info['hashes']} |
| load average (1/5/15 min) before / after | {load_before} / {load_after} |
| baseline tools | {info['tools']} |

{table}

Each set is `{GENERATED_BY[args.generator]} --seed {SEED}` at the scale in the README; the file measured is its
`heap_3.json` (or the `gzip -6 -n` copy of it).
"""
    with open(path, "w") as f:
        f.write(text)
    log(f"wrote {path}")


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


# ---------------------------------------------------------------- main

def main(argv):
    ap = argparse.ArgumentParser(
        prog="bench/run.py",
        description="Benchmark heapscope on generated Ruby heap dumps of about 10 MB, 100 MB and 1 GB: "
                    "parse+index time, MB/s, ratio to a wc -l / zcat baseline measured in the same run, "
                    "peak RSS, model bytes per object, tally time, and cost per MB relative to the "
                    "smallest file. Prints one markdown table on stdout (progress on stderr).",
        epilog="Data sets are generated once with our own workload, examples/workloads/leak_series.rb "
               "(needs ruby), and cached in the data directory; generating 1G takes a few minutes and "
               "2.7 GB of disk. --generator corpus uses ../shared/corpus/gen_leak.rb instead (100M and 1G "
               "also need ruby-activesupport). Example: python3 bench/run.py --sizes 10M,100M --gzip "
               "--write-results",
    )
    ap.add_argument("--sizes", default="10M,100M,1G",
                    help="comma-separated sizes of heap_3.json; presets 10M, 100M, 1G, or any NNM/NNG "
                         "(scale estimated by a linear fit); default 10M,100M,1G")
    ap.add_argument("--data", default=os.environ.get("HEAPSCOPE_BENCH_DATA", DEFAULT_DATA),
                    help="cache directory for generated dumps, one subdirectory per size; keep it outside "
                         "the repository (default: $HEAPSCOPE_BENCH_DATA or %s)" % DEFAULT_DATA)
    ap.add_argument("--heapscope", default=DEFAULT_HEAPSCOPE, help="heapscope binary to measure (default: build/heapscope in this repository)")
    ap.add_argument("--generator", choices=("ours", "corpus"), default="ours",
                    help="ours: examples/workloads/leak_series.rb (default); corpus: the shared corpus's "
                         "gen_leak.rb, which the results before this option were measured with")
    ap.add_argument("--corpus", default=os.environ.get("HEAPSCOPE_CORPUS", DEFAULT_CORPUS),
                    help="with --generator corpus: the directory holding gen_leak.rb (default: "
                         "$HEAPSCOPE_CORPUS or ../shared/corpus)")
    ap.add_argument("--gzip", action="store_true",
                    help="also measure a gzip -6 -n copy of each file (baseline: zcat FILE > /dev/null)")
    ap.add_argument("--runs", type=int, default=3, help="runs per command; the best (minimum) time is reported (default 3)")
    ap.add_argument("--reuse", action="append", default=[], metavar="DIR",
                    help="existing output directory of the generator to use instead of generating, if "
                         "its truth.json has the same scale/gems/seed (symlinked into --data); repeatable")
    ap.add_argument("--write-results", nargs="?", const=DEFAULT_RESULTS, metavar="FILE",
                    help="also write the table with machine info to FILE (default bench/RESULTS.md)")
    ap.add_argument("--note", help="a sentence to add to the results file (e.g. what was measured and why)")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="run heapscope in place instead of from a private copy (see README: rebuilds "
                         "during a run)")
    ap.add_argument("--json", metavar="FILE", help="also write every measurement (all runs) as JSON to FILE")
    args = ap.parse_args(argv)

    try:
        if args.runs < 1:
            raise BenchError("--runs must be at least 1")
        labels = [s.strip().upper() for s in args.sizes.split(",") if s.strip()]
        if not labels:
            raise BenchError("--sizes is empty")
        for lab in labels:
            generator_params(lab, args.generator)  # validate early
        args.data = os.path.abspath(args.data)
        if os.path.commonpath([args.data, REPO]) == REPO:
            raise BenchError(f"--data {args.data} is inside the repository; use a directory outside it")
        if not (os.path.isfile(args.heapscope) and os.access(args.heapscope, os.X_OK)):
            raise BenchError(f"heapscope is not built: {args.heapscope} does not exist or is not executable.\n"
                             f"Build it with `meson setup build && ninja -C build` in {REPO}, "
                             f"or pass --heapscope PATH.")
        if sh([args.heapscope, "--version"], default="") == "":
            raise BenchError(f"{args.heapscope} --version failed; is it a working heapscope binary?")
        if not os.access(TIME_BIN, os.X_OK):
            raise BenchError(f"{TIME_BIN} not found (peak RSS is measured with GNU time): apt-get install time")
        for tool in ("wc", "zcat", "gzip"):
            if not shutil.which(tool):
                raise BenchError(f"{tool} not found in PATH")

        checked = {}

        def ruby_ok(gems):
            if gems in checked:
                return
            if not shutil.which("ruby"):
                raise BenchError("ruby is missing: it is needed to generate the heap dumps (apt-get install ruby)")
            if args.generator == "corpus":
                gen = os.path.join(args.corpus, "gen_leak.rb")
                if not os.path.isfile(gen):
                    raise BenchError(f"corpus generator not found: {gen} (pass --corpus DIR, or use "
                                     f"--generator ours)")
            if gems != "none":
                for g in gems.split(","):
                    lib = {"activesupport": "active_support"}.get(g, g)
                    r = subprocess.run(["ruby", "-e", f"require '{lib}'"], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
                    if r.returncode != 0:
                        raise BenchError(f"ruby cannot load {g}, needed for this size: "
                                         f"apt-get install ruby-{g}")
            checked[gems] = True

        load_before = loadavg()
        files = []
        for lab in labels:
            plain = prepare_set(lab, args, ruby_ok)
            files.append((lab, plain, "plain", plain))
            if args.gzip:
                files.append((lab, prepare_gzip(plain, lab, args), "gzip", plain))

        original = args.heapscope
        # bench/mempeak, built beside heapscope: the library's own bytes
        # (allocator hooks) for a load and a dominator tree
        mp = os.path.join(os.path.dirname(os.path.realpath(original)), "bench", "mempeak")
        args.mempeak = mp if os.access(mp, os.X_OK) else None
        if not args.mempeak:
            log(f"note: {mp} is not built; the dominator memory columns stay empty")
        if args.no_snapshot:
            snapdir, run_bin, args.hashes = None, original, {"heapscope": sha12(original)}
        else:
            snapdir, run_bin, args.hashes = snapshot_heapscope(original)
        results = []
        try:
            args.heapscope = run_bin
            args.version = sh([run_bin, "--version"])
            for lab, path, kind, plain in files:
                log(f"{lab} {kind}: {path}")
                r = bench_file(path, os.path.getsize(plain), kind, args)
                r["label"] = lab
                results.append(r)
        finally:
            args.heapscope = original
            if snapdir:
                shutil.rmtree(snapdir, ignore_errors=True)
        load_after = loadavg()

        table = make_table(results, args.runs)
        print(table, flush=True)
        info = machine_info(args)
        if args.write_results:
            write_results(args.write_results, table, info, argv, load_before, load_after, args)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"machine": info, "argv": argv, "load_before": load_before,
                           "load_after": load_after, "results": results}, f, indent=1)
            log(f"wrote {args.json}")
    except BenchError as e:
        print(f"bench/run.py: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench/run.py: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
