#!/usr/bin/env python3
"""`heapscope serve` in a real browser (suite 'serve'): headless Chromium
(Debian's), driven over the DevTools protocol (cdp.py), on the leak
workload's three dumps (tests/workloads/workloads.py: dumps and truth):

  overview   the object count == summary --json of C; the leak verdict ==
             diff --json's leaked count; the waste total == the server's
             waste document, and with --values == waste --json's
             recoverable bytes
  classes    the rows == tally --json --by class; click the class of a
             planted leak (Desk::Subscription)
  class      its object count == the tally's; click a leaked object (truth)
  object     its class and site as the truth says; the path from the roots
             == root --json and passes through the truth's holder; the
             dominator chain == dominators --json
  domtree    the roots == dominators --json; opening a node loads its
             children == dominators --json ADDR --depth 1
  leaks      the truth's holders are among the suspects
  search     an address finds its object
  more       an object with 300 references: the first 100 and the count,
             "more" brings the rest (== show --json)
  keyboard   Tab reaches the links, Enter follows one
  escaping   a dump of HTML and </script> shown as text: no script of the
             dump runs, no element of it is made
The page must log no error and break no CSP rule.  Screenshots of each view
go to the work dir (serve-*.png).  Exit 77 without chromium, ruby or
libmicrohttpd.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "workloads"))
import cdp  # noqa: E402
import workloads  # noqa: E402
from serve_util import HEAPSCOPE, Server  # noqa: E402

failures = []
WORK = os.environ.get("HEAPSCOPE_WORK") or tempfile.gettempdir()


def check(cond, what):
    print("%s %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        failures.append(what)


def cli(*a):
    r = subprocess.run([HEAPSCOPE, *a], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def js_str(s):
    return json.dumps(s)


def texts(b, sel):
    return b.eval("[...document.querySelectorAll(%s)].map(e => e.textContent)" % js_str(sel))


def click(b, sel):
    return b.eval("(() => { const e = document.querySelector(%s); if (!e) return false; "
                  "e.click(); return true; })()" % js_str(sel))


def shot(b, name):
    b.screenshot(os.path.join(WORK, "serve-%s.png" % name))


def overview(b, h, diff):
    cards = b.wait("document.querySelector('#summary-cards') && "
                   "[...document.querySelectorAll('#summary-cards .card')].map(c => c.textContent)")
    summ = cli("summary", "--json", h[2])
    want = "{:,}".format(summ["total"]["count"])
    check(bool(cards) and cards[0] == want + "objects", "overview: objects %s == summary --json %s"
          % (cards and cards[0], want))
    verdict = b.wait("document.querySelector('#leak-verdict') && "
                     "document.querySelector('#leak-verdict').textContent")
    check(bool(verdict) and verdict.startswith("{:,} objects".format(diff["leaked"]["count"])),
          "overview: leak verdict %r says diff --json's %d" % (verdict, diff["leaked"]["count"]))
    b.wait("document.querySelectorAll('section table').length >= 3")
    shot(b, "overview")


def fmt_bytes(n):
    """The page's bytes() (app.js), to compare its text."""
    v, i, units = float(n), 0, ["B", "KB", "MB", "GB", "TB"]
    while abs(v) >= 1024 and i < len(units) - 1:
        v /= 1024
        i += 1
    return "%.1f %s" % (v, units[i]) if i else "%d B" % n


def waste_total(b, what):
    """The overview's waste line: (data-bytes as int, text), or (None, None)."""
    got = b.wait("document.querySelector('#waste-total') && "
                 "[document.querySelector('#waste-total').dataset.bytes, "
                 "document.querySelector('#waste-total').textContent]", timeout=600)
    if not got:
        check(False, "%s: the overview shows a waste total" % what)
        return None, None
    if got[0] is None:  # no data-bytes: a page that does not say the number
        return None, got[1]
    return int(got[0]), got[1]


def overview_waste(b, s, h):
    """The overview's waste line says the waste document's recoverable
    bytes, not the heap's memsize.  The server has no values (no
    --values): duplicate strings are not compared, the page says so and its
    total is that of the server's own waste document, which is the CLI's
    without the duplicates.  A second server with --values shows exactly
    `heapscope waste --json`'s recoverable.memsize."""
    cli_w = cli("waste", "--json", "--no-progress", h[2])
    want = cli_w["recoverable"]["memsize"]
    check(want != cli_w["total"]["memsize"], "waste --json: recoverable %d != heap memsize" % want)
    got, text = waste_total(b, "overview (no values)")
    st, _, body = s.request("/api/waste?limit=5")
    api = json.loads(body) if st == 200 else {}
    api_want = api.get("recoverable", {}).get("memsize")
    check(got is not None and got == api_want,
          "overview (no values): waste %s == /api/waste recoverable.memsize %s" % (got, api_want))
    no_dup = want - cli_w["findings"]["duplicate"]["memsize"]
    check(got == no_dup, "overview (no values): waste %s == waste --json's %d less its duplicates %d"
          % (got, want, cli_w["findings"]["duplicate"]["memsize"]))
    note = b.eval("!!document.querySelector('#waste-no-values')")
    check(note, "overview (no values): says duplicates were not compared")
    sv = Server("--values", h[2])
    try:
        b.navigate(sv.url)
        got, text = waste_total(b, "overview (--values)")
        check(got == want, "overview (--values): waste %s == waste --json recoverable.memsize %d"
              % (got, want))
        check(bool(text) and text.startswith("could shrink by " + fmt_bytes(want) + " ("),
              "overview (--values): text %r shows %s" % (text, fmt_bytes(want)))
        check(not b.eval("!!document.querySelector('#waste-no-values')"),
              "overview (--values): no 'not compared' note")
        shot(b, "overview-values")
    finally:
        sv.stop()


def classes(b, h, cls):
    click(b, "nav a[href='#/tally/class']")
    b.wait("document.body.dataset.view == 'tally' && document.querySelector('table.tally tbody tr')")
    keys = texts(b, "table.tally tbody tr td:first-child")
    ref = cli("tally", "--json", "--by", "class", "--sort", "memsize", "--top", "2000", h[2])
    check(keys == [g["key"] for g in ref["groups"]],
          "classes: %d rows in tally --json's order" % len(keys))
    shot(b, "classes")
    # the filter narrows the rows
    b.eval("(() => { const f = document.querySelector('#filter'); f.value = %s; "
           "f.dispatchEvent(new Event('input')); })()" % js_str(cls))
    keys = texts(b, "table.tally tbody tr td:first-child")
    check(cls in keys and all(cls.lower() in k.lower() for k in keys), "classes: the filter keeps %s" % cls)
    check(click(b, "a.cls[href='#/class/%s']" % cls.replace(":", "%3A")), "classes: click %s" % cls)
    count = b.wait("document.querySelector('#members-count') && "
                   "document.querySelector('#members-count').textContent")
    n = next(g["count"] for g in ref["groups"] if g["key"] == cls)
    check(bool(count) and count.startswith("{:,} objects".format(n)), "class %s: %r == tally's %d"
          % (cls, count, n))
    shot(b, "class")


def find_member(b, leaked):
    """Click the first leaked object on the class's pages."""
    for _ in range(50):
        addrs = texts(b, "table.members a.addr")
        hit = [a for a in addrs if a in leaked]
        if hit:
            click(b, "table.members a.addr[href='#/object/%s']" % hit[0])
            return hit[0]
        before = b.eval("location.hash")
        if not click(b, ".pager a:last-child") or b.eval("location.hash") == before:
            return None
        b.wait("document.querySelector('#members-count')")
    return None


def object_view(b, h, addr, leak):
    rec = b.wait("document.querySelector('#record') && Object.fromEntries([...document."
                 "querySelectorAll('#record tr')].map(r => [r.cells[0].textContent, "
                 "r.cells[1].textContent]))")
    truth_obj = next(o for o in leak["objects"] if o[0] == addr)
    check(bool(rec) and rec["class"] == truth_obj[2] and rec["type"] == truth_obj[1],
          "object %s: %s %s as the truth" % (addr, rec and rec.get("type"), rec and rec.get("class")))
    check(bool(rec) and rec["allocated at"] == "%s:%d" % (truth_obj[3], truth_obj[4]),
          "object: allocated at the truth's site")
    paths = b.wait("document.querySelector('ol.path') && [...document.querySelectorAll("
                   "'section')].find(s => s.querySelector('h2') && s.querySelector('h2')."
                   "textContent == 'Paths from the roots') && [...[...document.querySelectorAll("
                   "'section')].find(s => s.querySelector('h2') && s.querySelector('h2')."
                   "textContent == 'Paths from the roots').querySelectorAll('ol.path')[0]."
                   "querySelectorAll('a.addr')].map(a => a.textContent)")
    ref = cli("root", "--json", h[2], addr)["paths"][0]
    check(paths == [o["address"] for o in ref["path"]],
          "object: the path from the roots == root --json (%d steps)" % len(ref["path"]))
    check(bool(paths) and leak["holder"]["address"] in paths,
          "object: the path passes through the truth's holder %s" % leak["holder"]["address"])
    chain = b.wait("document.querySelector('#chain') && [...document.querySelectorAll("
                   "'#chain a.addr')].map(a => a.textContent)")
    ref = cli("dominators", "--json", "--depth", "1", h[2], addr)
    check(chain == [o["address"] for o in ref["chain"]], "object: dominator chain == dominators --json")
    shot(b, "object")


def object_more(b, h, holder):
    """The truth's holder with 300 entries: the page shows its first 100
    references and the count; "more" twice brings the rest, in the order
    of show --json."""
    addr, n = holder["address"], holder["entries"]
    b.navigate(b.base + "#/object/" + addr)
    rows = "[...document.querySelectorAll('table.refs tbody a.addr')].map(a => a.textContent)"
    # only the hash changes: until the route runs, the page is still the
    # object seen before, whose references table would do
    first = b.wait("[...document.querySelectorAll('h2 span.mono')].some(s => s.textContent == "
                   "'%s') && document.querySelector('table.refs') && %s" % (addr, rows))
    heads = texts(b, "section h3")
    check(("References (%d)" % n) in heads and len(first or []) == 100,
          "object %s: References (%d) of the truth, the first 100 shown (%s, %d)"
          % (addr, n, heads, len(first or [])))
    clicks = 0
    while clicks < 10 and b.eval("!!document.querySelector('#refs-more')"):
        have = len(b.eval(rows))
        click(b, "#refs-more")
        b.wait("%s.length > %d" % (rows, have))
        clicks += 1
    ref = cli("show", "--json", h[2], addr)["objects"][0]["references"]
    check(clicks == 2 and b.eval(rows) == [o["address"] for o in ref],
          "object: 'more' twice shows all %d references == show --json" % n)


def domtree(b, h):
    b.navigate(b.base + "#/domtree")
    b.wait("document.querySelector('#domtree')", timeout=120)
    roots = texts(b, "#domtree > li > strong")
    ref = cli("dominators", "--json", "--depth", "1", "--top", "50", h[2])
    check(roots == [r["root"] for r in ref["top"]], "domtree: the roots == dominators --json")
    first = next(c for r in ref["top"] for c in r["children"] if c["retained"]["count"] > 1)
    check(click(b, "#domtree button[aria-label='expand %s']" % first["address"]),
          "domtree: open %s" % first["address"])
    sel = "#domtree button[aria-label='expand %s'] ~ ul.tree" % first["address"]
    kids = b.wait("document.querySelector(%s) && document.querySelector(%s).querySelector("
                  "'li') && [...document.querySelector(%s).querySelectorAll(':scope > section "
                  "> div > ul > li > span > a.addr')].map(a => a.textContent)"
                  % (js_str(sel), js_str(sel), js_str(sel)))
    ref = cli("dominators", "--json", "--depth", "1", "--top", "50", h[2], first["address"])
    check(kids == [c["address"] for c in ref["tree"]["children"]],
          "domtree: its children == dominators --json ADDR (%d)" % len(ref["tree"]["children"]))
    shot(b, "domtree")


def leaks(b, truth):
    b.navigate(b.base + "#/leaks")
    shown = b.wait("document.querySelector('#suspects li') && [...document.querySelectorAll("
                   "'#suspects > li > span > a.addr')].map(a => a.textContent)", timeout=120)
    holders = {v["holder"]["address"] for v in truth["leaks"].values()}
    check(bool(shown) and holders <= set(shown), "leaks: the truth's holders among the suspects "
          "(missing %s)" % sorted(holders - set(shown or [])))
    b.wait("document.querySelectorAll('table.tally tbody tr').length > 0")
    shot(b, "leaks")


def search_and_keyboard(b, addr):
    b.eval("document.querySelector('#q').value = %s" % js_str(addr))
    click(b, "#search button")
    got = b.wait("document.body.dataset.view == 'search' && document.querySelector('#view a.addr')"
                 " && document.querySelector('#view a.addr').textContent")
    check(got == addr, "search: the address finds its object")
    b.navigate(b.base + "#/overview")
    b.wait("document.querySelector('#summary-cards')")
    b.eval("document.activeElement && document.activeElement.blur(); "
           "document.querySelector('#home').focus()")
    b.key("Tab", "Tab", 9)
    focused = b.eval("document.activeElement.getAttribute('href')")
    check(focused == "#/overview", "keyboard: Tab from the title reaches the first view link")
    b.key("Tab", "Tab", 9)
    b.key("Enter", "Enter", 13)
    check(b.wait("document.body.dataset.view == 'tally'") is not None,
          "keyboard: Enter follows the focused link (Classes)")


def escaping(b):
    d = tempfile.mkdtemp(prefix="serve-b-", dir=WORK)
    p = os.path.join(d, "hostile.json")
    evil = "</script><script>window.__xss=1</script>"
    evil_file = "<img src=x onerror=\"window.__xss=2\">.rb"
    recs = [{"type": "ROOT", "root": "vm", "references": ["0x1000", "0x2000"]},
            {"address": "0x3000", "type": "CLASS", "name": "Class", "memsize": 50},
            {"address": "0x1000", "type": "CLASS", "class": "0x3000", "name": evil, "memsize": 100},
            {"address": "0x2000", "type": "OBJECT", "class": "0x1000", "file": evil_file,
             "line": 3, "method": "<b>x</b>", "memsize": 40}]
    with open(p, "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in recs))
    s = Server(p)
    try:
        b.navigate(s.url)
        b.wait("document.querySelector('#summary-cards')")
        b.navigate(s.url.split("?")[0] + "#/tally/class")
        keys = b.wait("document.querySelector('table.tally tbody tr') && "
                      "[...document.querySelectorAll('table.tally tbody tr td:first-child')]"
                      ".map(e => e.textContent)")
        check(bool(keys) and evil in keys, "escaping: the class name shown as text")
        b.navigate(s.url.split("?")[0] + "#/object/0x2000")
        rec = b.wait("document.querySelector('#record') && document.querySelector('#record')"
                     ".textContent")
        check(bool(rec) and evil_file in rec, "escaping: the file name shown as text")
        b.navigate(s.url.split("?")[0] + "#/members/file:line:class/"
                   + "%3Cimg%20src%3Dx%20onerror%3D%22window.__xss%3D2%22%3E.rb%3A3%3A"
                   + "%3C%2Fscript%3E%3Cscript%3Ewindow.__xss%3D1%3C%2Fscript%3E")
        b.wait("document.querySelector('#members-count')")
        check(b.eval("window.__xss === undefined"), "escaping: no script of the dump ran")
        check(b.eval("document.scripts.length") == 1 and b.eval("document.images.length") == 0,
              "escaping: no element made of the dump's strings")
        shot(b, "escaping")
    finally:
        s.stop()


def main():
    if not HEAPSCOPE:
        raise SystemExit("set HEAPSCOPE to the heapscope binary")
    r = subprocess.run([HEAPSCOPE, "serve", "/nonexistent"], capture_output=True, text=True)
    if "without libmicrohttpd" in r.stderr:
        print("SKIP: heapscope built without libmicrohttpd (Debian: libmicrohttpd-dev)")
        return 77
    if not cdp.CHROMIUM or not os.access(cdp.CHROMIUM, os.X_OK):
        print("SKIP: chromium not installed (Debian package: chromium)")
        return 77
    if not shutil.which("ruby"):
        print("SKIP: ruby not installed (needed to generate the dumps)")
        return 77
    os.makedirs(WORK, exist_ok=True)
    leak_dir = workloads.ensure_set("leak_s1")
    truth = workloads.truth(leak_dir)
    h = [os.path.join(leak_dir, "heap_%d.json" % i) for i in (1, 2, 3)]
    diff = cli("diff", "--json", *h)
    leak = truth["leaks"]["subscriptions"]
    cls = "Desk::Subscription"
    leaked = {o[0] for o in leak["objects"] if o[2] == cls}
    s = Server(*h)
    b = cdp.Browser(WORK)
    try:
        b.call("Page.addScriptToEvaluateOnNewDocument", source=(
            "window.__csp = []; document.addEventListener('securitypolicyviolation', "
            "e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"))
        b.navigate(s.url)
        b.base = s.url.split("?")[0]
        overview(b, h, diff)
        overview_waste(b, s, h)
        b.navigate(s.url)
        b.wait("document.querySelector('#summary-cards .card')")
        classes(b, h, cls)
        addr = find_member(b, leaked)
        check(addr is not None, "class: a leaked object of the truth is listed")
        if addr:
            object_view(b, h, addr, leak)
        object_more(b, h, truth["leaks"]["audit"]["holder"])
        domtree(b, h)
        leaks(b, truth)
        if addr:
            search_and_keyboard(b, addr)
        csp = b.eval("window.__csp")
        check(csp == [], "no CSP violation (%s)" % csp)
        escaping(b)
        errs = b.errors()
        check(not errs, "no script error or console error (%s)" % errs[:3])
    finally:
        b.close()
        s.stop()
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
