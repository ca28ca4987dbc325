#!/usr/bin/env python3
"""heapscope report: render the HTML report in headless Chromium and check it.

  1 dump     (leak workload heap_3)  object count == `summary --json`, icicle drawn
  3 dumps    (leak workload)         leaked count == `diff --json`, first suspect ==
                                     `suspects --json`, the truth's holders among
                                     the suspects
  5 dumps    (timeline workload)     first growth row == `timeline --by class --json`
The dumps are our own workloads' (examples/workloads, via
tests/workloads/workloads.py).
  hostile    (hand-made dump)      HTML/script injection and invalid UTF-8 in
                                   class and file names are escaped; no string
                                   value in the page
For every page: no external assets, the page script ran without exceptions
(<body data-ok="1">, set by the script; window.onerror sets 0), no console
errors on Chromium's log, a screenshot (1280x2000) in the work dir.

Env: HEAPSCOPE (the CLI), HEAPSCOPE_WORK,
HEAPSCOPE_CHROMIUM (browser binary; default: chromium on PATH).
Exit 77 (skipped) when Chromium or Ruby is not installed.
"""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads"))
import workloads  # noqa: E402

HEAPSCOPE = os.environ.get("HEAPSCOPE")
WORK = os.path.join(os.environ.get("HEAPSCOPE_WORK", tempfile.gettempdir()), "report")
CHROMIUM = os.environ.get("HEAPSCOPE_CHROMIUM") or shutil.which("chromium") \
    or shutil.which("chromium-browser")
MAX_HTML = 5 * 1024 * 1024

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import checklib  # noqa: E402
from checklib import check, failures  # noqa: E402,F401
checklib.show_ok = True


def run(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, timeout=120, **kw)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise SystemExit("command failed (%d): %s" % (r.returncode, " ".join(args)))
    return r.stdout


def hs_json(*args):
    return json.loads(run([HEAPSCOPE] + list(args) + ["--json", "--no-progress"]))


def chromium(html, extra):
    prof = tempfile.mkdtemp(prefix="hs-chromium-")
    try:
        r = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--user-data-dir=" + prof,
             "--enable-logging=stderr", "--v=0"] + extra + ["file://" + os.path.abspath(html)],
            capture_output=True, text=True, timeout=60, errors="replace")
    finally:
        shutil.rmtree(prof, ignore_errors=True)
    return r


def render(name, html):
    """Static checks, --dump-dom, screenshot; returns the DOM text."""
    data = open(html, "rb").read()
    text = data.decode("utf-8")  # must be valid UTF-8
    check(len(data) < MAX_HTML, "%s: HTML is %d bytes (< 5 MB)" % (name, len(data)))
    ext = re.findall(r'(?:src|href)\s*=\s*"(?:https?:)?//|<link\b|@import|url\(\s*["\']?https?:',
                     text, re.I)
    check(not ext, "%s: no external assets %s" % (name, ext[:3]))
    r = chromium(html, ["--dump-dom"])
    dom = r.stdout
    check(r.returncode == 0 and "</html>" in dom, "%s: chromium --dump-dom ran" % name)
    m = re.search(r'<body[^>]*data-ok="(\d)"[^>]*>', dom)
    err = re.search(r'data-err="([^"]*)"', dom)
    check(m is not None and m.group(1) == "1",
          "%s: page script ran without exceptions (data-ok=%s%s)"
          % (name, m.group(1) if m else "missing", " " + err.group(1) if err else ""))
    bad = [l for l in r.stderr.splitlines()
           if re.search(r"Uncaught|CONSOLE[(:]\d+.*(error|Error)|SyntaxError|TypeError|ReferenceError", l)]
    check(not bad, "%s: no console errors %s" % (name, bad[:3]))
    png = os.path.join(WORK, name + ".png")
    if os.path.exists(png):
        os.unlink(png)
    chromium(html, ["--screenshot=" + png, "--window-size=1280,2000", "--hide-scrollbars"])
    check(os.path.exists(png) and os.path.getsize(png) > 20000,
          "%s: screenshot %s" % (name, png))
    return dom


def growth_rows(dom):
    """(key, first, last, objects first, objects last, growing) of each row
    of the report's growth table."""
    m = re.search(r'id="growth-table".*?<tbody>(.*?)</tbody>', dom, re.S)
    rows = []
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", m.group(1) if m else "", re.S):
        key = re.search(r'<td class="key mono">([^<]*)</td>', tr)
        v = re.findall(r'data-v="([^"]*)"', tr)
        if key and len(v) >= 9:
            rows.append((html.unescape(key.group(1)), int(v[2]), int(v[3]), int(v[7]),
                         int(v[8]), v[1] == "1"))
    return rows


def attr_of(dom, elem_id, attr):
    m = re.search(r'<[^>]*\bid="%s"[^>]*>' % re.escape(elem_id), dom)
    if not m:
        return None
    a = re.search(r'\b%s="([^"]*)"' % re.escape(attr), m.group(0))
    return a.group(1) if a else None


def report(out, dumps, *opts):
    r = subprocess.run([HEAPSCOPE, "report", "--out", out] + list(opts) + dumps,
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "report %s exits 0 (%s)" % (os.path.basename(out), r.stderr.strip()))
    return r.returncode == 0


def waste_rows(html):
    """(key, finding, objects, saving) of every row of the waste table."""
    m = re.search(r'<table class="sortable" id="waste-table">.*?</table>', html, re.S)
    if not m:
        return []
    return [(k, f, int(n), int(sv)) for k, f, n, sv in re.findall(
        r'<td class="key mono">([^<]*)</td><td>([^<]*)</td><td class="n" data-v="(\d+)">'
        r'[^<]*</td><td class="n" data-v="(\d+)">', m.group(0))]


def waste_section():
    """The waste section on our waste workload (examples/workloads/waste.rb):
    every planted set at its site with the count Ruby planted (its
    waste_truth.json), the same rows as `heapscope waste --json`, no value."""
    wd = os.path.join(WORK, "waste")
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(wd)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "workloads", "waste.rb")
    run(["ruby", "--disable-gems", src, wd])
    dump = os.path.join(wd, "waste.json")
    truth = json.load(open(os.path.join(wd, "waste_truth.json")))
    out = os.path.join(WORK, "waste.html")
    if not report(out, [dump]):
        return
    html = open(out, encoding="utf-8").read()
    rows = {(k, f): (n, sv) for k, f, n, sv in waste_rows(html)}
    plants = truth["plants"]
    for p in plants:
        key = "%s:%d" % (p["file"], p["line"])
        finding = "%s %s" % (p["kind"], p["type"])
        n = p["count"]
        if p["kind"] == "duplicate":
            # one copy stays at the site with the most copies of the value
            others = [q for q in plants if q is not p and q["kind"] == "duplicate"
                      and q["value"] == p["value"]]
            n -= 1 if not others or all(p["count"] > q["count"] for q in others) else 0
        got = rows.get((key, finding))
        check(got is not None and got[0] == n, "waste: planted %s at %s: %s objects, planted %d"
              % (finding, key, got[0] if got else None, n))
    doc = hs_json("waste", "--top", "0", dump)
    want = [(g["key"], "%s %s" % (g["finding"], g["type"]), g["count"], g["memsize"])
            for g in doc["groups"]]
    check(waste_rows(html) == want, "waste: the section's rows == waste --json's (%d rows)"
          % len(want))
    check(attr_of(html, "waste-saving", "data-v") == str(doc["recoverable"]["memsize"]),
          "waste: recoverable %s == waste --json %s" % (attr_of(html, "waste-saving", "data-v"),
                                                      doc["recoverable"]["memsize"]))
    values = [p["value"] for p in plants if p["kind"] == "duplicate"]
    check(not any(json.dumps(v)[1:-1] in html for v in values if len(v) > 3),
          "waste: no planted value in the page")
    render("waste", out)


def main():
    if not HEAPSCOPE:
        raise SystemExit("set HEAPSCOPE to the heapscope binary")
    if not CHROMIUM or not os.access(CHROMIUM, os.X_OK):
        print("SKIP: chromium not installed (Debian package: chromium)")
        return 77
    if not shutil.which("ruby"):
        print("SKIP: ruby not installed (needed to generate the dumps)")
        return 77
    os.makedirs(WORK, exist_ok=True)
    leak = workloads.ensure_set("leak_s1")
    tl = workloads.ensure_set("tl_s1")
    h = [os.path.join(leak, "heap_%d.json" % i) for i in (1, 2, 3)]

    # usage errors
    r = subprocess.run([HEAPSCOPE, "report"], capture_output=True, text=True)
    check(r.returncode == 2, "report without DUMP exits 2")
    r = subprocess.run([HEAPSCOPE, "report", "--bogus", h[0]], capture_output=True, text=True)
    check(r.returncode == 2, "report --bogus exits 2")
    r = subprocess.run([HEAPSCOPE, "report", "--out", os.path.join(WORK, "x.html"),
                        os.path.join(WORK, "nope.json")], capture_output=True, text=True)
    check(r.returncode == 1, "report of a missing file exits 1")

    # 1 dump
    one = os.path.join(WORK, "one.html")
    if report(one, [h[2]]):
        dom = render("one", one)
        summ = hs_json("summary", h[2])
        check(attr_of(dom, "sum-objects", "data-v") == str(summ["total"]["count"]),
              "one: object count %s == summary --json %s"
              % (attr_of(dom, "sum-objects", "data-v"), summ["total"]["count"]))
        ic = re.search(r'<svg id="icicle".*?</svg>', dom, re.S)
        nrect = len(re.findall(r"<rect", ic.group(0))) if ic else 0
        check(nrect >= 10, "one: icicle drawn (%d bars)" % nrect)
        for sec in ("summary", "histograms", "sites", "retainers", "dominators"):
            check('id="%s"' % sec in dom, "one: section %s" % sec)
        ret = hs_json("retained", "--top", "1", h[2])["objects"][0]["address"]
        check(re.search(r'id="retainers-table".*?<td class="mono">%s</td>' % ret, dom, re.S)
              is not None, "one: top retainer %s listed" % ret)

    # 3 dumps
    three = os.path.join(WORK, "three.html")
    if report(three, h):
        dom = render("three", three)
        diff = hs_json("diff", *h)
        check(attr_of(dom, "leaked-count", "data-v") == str(diff["leaked"]["count"]),
              "three: leaked count %s == diff --json %s"
              % (attr_of(dom, "leaked-count", "data-v"), diff["leaked"]["count"]))
        sus = hs_json("suspects", *h)
        first = sus["suspects"][0]["address"]
        check(attr_of(dom, "suspect-1", "data-addr") == first,
              "three: first suspect %s == suspects --json %s"
              % (attr_of(dom, "suspect-1", "data-addr"), first))
        shown = set(re.findall(r'<tr id="suspect-\d+" data-addr="(0x[0-9a-f]+)"', dom))
        truth = workloads.truth(leak)
        holders = {v["holder"]["address"] for v in truth["leaks"].values()}
        check(holders <= shown, "three: the truth's holders among the suspects (missing %s)"
              % sorted(holders - shown))
        for sec in ("diff", "suspects", "timeline"):
            check('id="%s"' % sec in dom, "three: section %s" % sec)
        # the timeline comes from the diff's reads of the dumps (riding its
        # passes, the last dump's loaded heap): every row as the timeline's
        # own folds of the same dumps
        tlj = hs_json("timeline", "--by", "class", "--top", "0", *h)
        want = {g["key"]: g for g in tlj["groups"]}
        rows = growth_rows(open(three, encoding="utf-8").read())
        check(len(rows) >= 10, "three: growth table has rows (%d)" % len(rows))
        bad = [r for r in rows if r[0] not in want or
               r[1:] != (want[r[0]]["memsize"][0], want[r[0]]["memsize"][-1],
                         want[r[0]]["count"][0], want[r[0]]["count"][-1], want[r[0]]["growing"])]
        check(not bad, "three: growth rows == timeline --by class --json (first mismatch %s)"
              % (bad[:1],))

    # timeline series
    steps = sorted(os.path.join(tl, f) for f in os.listdir(tl) if f.startswith("step_"))[:5]
    series = os.path.join(WORK, "series.html")
    if report(series, steps):
        dom = render("series", series)
        tlj = hs_json("timeline", "--by", "class", *steps)
        first = tlj["groups"][0]["key"]
        m = re.search(r'id="growth-table".*?<tbody>\s*<tr[^>]*>.*?<td class="key mono">([^<]*)</td>',
                      dom, re.S)
        check(m is not None and m.group(1) == first,
              "series: first growth row %s == timeline --json %s"
              % (m.group(1) if m else None, first))
        check(re.search(r'id="growth-table".*?<tr class="growing">', dom, re.S) is not None,
              "series: a growing group is flagged")

    # hostile names, invalid UTF-8, string values
    evil = os.path.join(WORK, "evil.json")
    with open(evil, "wb") as f:
        f.write(b'{"type":"ROOT","root":"vm","references":["0x1000","0x2000"]}\n')
        f.write(b'{"address":"0x2000","type":"CLASS","name":"</script><img src=x onerror=alert(1)>",'
                b'"references":[],"memsize":100}\n')
        f.write(b'{"address":"0x1000","type":"OBJECT","class":"0x2000","file":"a\xff\xfe<b>x.rb",'
                b'"line":3,"references":["0x3000"],"memsize":4000}\n')
        f.write(b'{"address":"0x3000","type":"STRING","class":"0x2000","value":"SECRET-TOKEN-5f3a9c",'
                b'"bytesize":19,"file":"x.rb","line":1,"memsize":40}\n')
    eh = os.path.join(WORK, "evil.html")
    if report(eh, [evil]):
        data = open(eh, "rb").read()
        text = data.decode("utf-8")
        check("<img src=x" not in text and "</script><img" not in text,
              "evil: injected markup is escaped")
        check("SECRET-TOKEN" not in text, "evil: no string value in the page")
        check("\ufffd" in text or "\\ufffd" in text, "evil: invalid UTF-8 replaced by U+FFFD")
        dom = render("evil", eh)
        check("<img" not in dom.split("<main>", 1)[-1], "evil: no injected element in the DOM")

    waste_section()

    if failures:
        print("\n%d check(s) failed" % len(failures))
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
