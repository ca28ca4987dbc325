#!/usr/bin/env python3
"""`heapscope serve` at the HTTP level (suite 'serve'):

  - the URL is the first line of stdout; --port 0 gives a real port;
  - the token: 401 without, 403 with a wrong one; the first visit's
    redirect sets the cookie, which is then enough;
  - the Host check (DNS rebinding): another name is refused (421);
  - every answer carries the Content-Security-Policy and nosniff;
  - read-only: POST, PUT, DELETE are 405;
  - escaping: a hand-built dump whose class, file and method names and
    string value are HTML and </script>: the JSON gives them back exactly,
    the value only with --values, and the page's script never parses a
    string as HTML;
  - bad requests: unknown address 404, malformed parameters 400, huge
    pages clamped, unknown paths 404; the server keeps serving;
  - concurrent clients (threads, and idle connections held open);
  - the answers equal the CLI's --json and the dump read here in Python;
  - an object referenced by many: its lists paged, with their counts;
  - SIGTERM stops it (exit 0); bad --port / --host are refused.

Exit 77 (skipped) when heapscope was built without libmicrohttpd.
"""
import concurrent.futures
import json
import os
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_util  # noqa: E402
from serve_util import HEAPSCOPE, Server  # noqa: E402

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
EVIL_CLASS = "</script><script>alert(1)</script>"
EVIL_FILE = "<img src=x onerror=alert(2)>.rb"
EVIL_METHOD = "<b>m</b>&amp;"
EVIL_VALUE = "secret</script><script>alert(3)</script>"

failures = []


def check(cond, what):
    print("%s %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        failures.append(what)


def hostile_dump(d):
    recs = [
        {"type": "ROOT", "root": "vm", "references": ["0x1000", "0x2000", "0x2200"]},
        {"address": "0x3000", "type": "CLASS", "name": "Class", "memsize": 50},
        {"address": "0x1000", "type": "CLASS", "class": "0x3000", "name": EVIL_CLASS, "memsize": 100},
        {"address": "0x4000", "type": "CLASS", "class": "0x3000", "name": "String", "memsize": 10},
        {"address": "0x2000", "type": "OBJECT", "class": "0x1000", "references": ["0x2100"],
         "file": EVIL_FILE, "line": 3, "method": EVIL_METHOD, "generation": 5, "memsize": 40},
        {"address": "0x2100", "type": "STRING", "class": "0x4000", "value": EVIL_VALUE,
         "bytesize": len(EVIL_VALUE), "memsize": 60, "file": "a.rb", "line": 1, "generation": 5},
        {"address": "0x2200", "type": "OBJECT", "class": "0x1000", "file": EVIL_FILE, "line": 3,
         "method": EVIL_METHOD, "generation": 5, "memsize": 40},
    ]
    p = os.path.join(d, "hostile.json")
    with open(p, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    return p, recs


def check_token_and_headers(s):
    st, hd, body = s.request("/api/summary", token=None)
    check(st == 401, "no token: 401 (got %d)" % st)
    check(json.loads(body)["error"].startswith("no token"), "401 says why, as JSON")
    check(hd.get("content-security-policy") == CSP, "401 carries the CSP")
    st, _, _ = s.request("/api/summary", token="0" * 32)
    check(st == 403, "wrong token: 403 (got %d)" % st)
    st, _, _ = s.request("/api/summary", token=s.token[:-1])
    check(st == 403, "a token one digit short: 403 (got %d)" % st)
    st, _, _ = s.request("/?token=" + "f" * 32, token=None)
    check(st == 403, "first visit with a wrong token: 403 (got %d)" % st)
    st, hd, _ = s.request("/?token=" + s.token, token=None)
    cookie = hd.get("set-cookie", "")
    check(st == 303 and hd.get("location") == "/", "first visit: redirect to / (got %d)" % st)
    check(cookie.startswith("hs_token=%s;" % s.token) and "HttpOnly" in cookie
          and "SameSite=Strict" in cookie, "first visit sets an HttpOnly SameSite cookie")
    st, hd, body = s.request("/", token=None, headers={"Cookie": "hs_token=" + s.token})
    check(st == 200 and b"<script src=\"/app.js\"" in body, "the cookie opens the page")
    check(hd.get("content-security-policy") == CSP, "the page carries the CSP (%s)"
          % hd.get("content-security-policy"))
    check(hd.get("x-content-type-options") == "nosniff", "nosniff")
    check("no-store" in hd.get("cache-control", ""), "no-store")
    check(b"<script>" not in body and b"style=" not in body, "the page has no inline script or style")
    for path in ("/app.js", "/style.css"):
        st, hd, _ = s.request(path, token=None)
        check(st == 401, "%s needs the token too (got %d)" % (path, st))
        st, hd, _ = s.request(path)
        check(st == 200 and hd.get("content-security-policy") == CSP, "%s served with the CSP" % path)
    st, hd, body = s.request("/api/info")
    check(st == 200 and hd.get("content-type") == "application/json", "API answers are JSON")


def check_host(s):
    for host in ("evil.example:%d" % s.port, "evil.example", "127.0.0.1:%d" % (s.port + 1),
                 "127.0.0.1", ""):
        st, _, _ = s.request("/api/summary", host=host)
        check(st == 421, "Host %r refused: 421 (got %d)" % (host, st))
    st, _, _ = s.request("/?token=" + s.token, token=None, host="rebind.example:%d" % s.port)
    check(st == 421, "the first visit checks Host too (got %d)" % st)
    st, _, _ = s.request("/api/info", host="localhost:%d" % s.port)
    check(st == 200, "Host localhost:PORT accepted (got %d)" % st)


def check_read_only(s):
    for m in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        st, hd, _ = s.request("/api/summary", method=m, body=b"x=1" if m != "OPTIONS" else None)
        check(st == 405 and hd.get("allow") == "GET, HEAD", "%s: 405 with Allow (got %d)" % (m, st))
    st, _, body = s.request("/api/info", method="HEAD")
    check(st == 200 and body == b"", "HEAD: 200 without a body")


def check_escaping(s, recs, valued):
    st, t = s.get_json("tally?by=class&limit=50")
    keys = {g["key"] for g in t["groups"]}
    check(st == 200 and EVIL_CLASS in keys, "class name with </script> given back exactly")
    st, o = s.get_json("object?addr=0x2000")
    ob = o["objects"][0]
    check(ob["class"] == EVIL_CLASS and ob["file"] == EVIL_FILE and ob["method"] == EVIL_METHOD,
          "object: class, file, method given back exactly")
    st, hd, raw = s.request("/api/object?addr=0x2100")
    v = json.loads(raw)["objects"][0]
    if valued:
        check(v.get("value") == EVIL_VALUE, "--values: the value given back exactly")
    else:
        check("value" not in v and b"secret" not in raw, "without --values no value is sent")
    st, m = s.get_json("members?by=class&key=" + serve_util_quote(EVIL_CLASS))
    want = sorted(r["address"] for r in recs if r.get("class") == "0x1000")
    check(st == 200 and sorted(o["address"] for o in m["objects"]) == want,
          "members of the hostile class: %s" % want)
    st, sr = s.get_json("search?q=" + serve_util_quote("<script>"))
    check(st == 200 and [r["key"] for r in sr["rows"]["class"]] == [EVIL_CLASS],
          "search finds the hostile class")
    st, sr = s.get_json("search?q=" + serve_util_quote(EVIL_FILE))
    check(st == 200 and any(EVIL_FILE in r["key"] for r in sr["rows"]["file:line:class"]),
          "search finds the hostile site")


def serve_util_quote(x):
    import urllib.parse
    return urllib.parse.quote(x, safe="")


def check_ui_source(s):
    _, _, js = s.request("/app.js")
    js = js.decode()
    for bad in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                "new Function"):
        check(bad not in js, "app.js never uses %s" % bad)
    check("textContent" in js and "createTextNode" in js, "app.js writes strings as text")


def check_bad_requests(s, n_objects):
    cases = [
        ("/api/object?addr=0xdeadbeef", 404), ("/api/object?addr=zzz", 400),
        ("/api/object", 400), ("/api/object?addr=0x", 400),
        ("/api/object?addr=0x12345678901234567890", 400), ("/api/paths?addr=-1", 400),
        ("/api/tally?by=nope", 400), ("/api/tally?limit=abc", 400), ("/api/tally?sort=x", 400),
        ("/api/tally?limit=-5", 400), ("/api/domtree?depth=x", 400),
        ("/api/members?by=class", 400),
        ("/api/search", 400), ("/api/search?q=" + "x" * 300, 400),
        ("/api/nope", 404), ("/nope", 404), ("/../../etc/passwd", 404), ("/api/", 404),
        ("/api/suspects", 404), ("/api/timeline", 404),
    ]
    for path, want in cases:
        st, hd, body = s.request(path)
        ok = st == want
        try:
            ok = ok and json.loads(body)["status"] == want
        except ValueError:
            ok = False
        check(ok, "%s: %d with a JSON error (got %d)" % (path, want, st))
    st, m = s.get_json("members?by=class&key=NoSuchClass")  # a row is looked for once: 202 first
    check(st == 404 and m["status"] == 404, "members of a class not in the dump: 404 (got %d)" % st)
    st, t = s.get_json("tally?by=class&limit=99999999999999999999999")
    check(st == 200 and len(t["groups"]) == t["group_count"], "a huge limit is clamped, not an error")
    st, m = s.get_json("members?by=type&key=OBJECT&offset=99999999999999999999&limit=99999999")
    check(st == 200 and m["objects"] == [] and m["offset"] == m["count"],
          "a huge offset: the empty last page (offset %s, count %s)" % (m.get("offset"), m.get("count")))
    st, _ = s.get_json("summary")
    check(st == 200, "still serving after the bad requests")


def check_concurrent(s, addrs):
    idle = []
    for _ in range(8):  # connections that send nothing must not block the others
        c = socket.create_connection((s.addr, s.port))
        c.sendall(b"GET /api/summary HTTP/1.1\r\nHost: ")  # and never finishes
        idle.append(c)
    paths = ["summary", "tally?by=class", "tally?by=file:line:class&sort=count", "retained",
             "domtree?depth=2"] + ["object?addr=" + a for a in addrs] + \
            ["paths?addr=" + a for a in addrs] + ["domtree?addr=" + a for a in addrs]

    def one(i):
        st, d = s.get_json(paths[i % len(paths)])
        return st, d.get("kind")
    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        res = list(ex.map(one, range(160)))
    bad = [r for r in res if r[0] != 200]
    check(not bad, "160 requests on 16 threads (8 idle connections held): all 200 (%d not)" % len(bad))
    for c in idle:
        c.close()


def check_against_cli(s, dump, addrs):
    def cli(*a):
        return json.loads(subprocess.run([HEAPSCOPE, *a], capture_output=True, text=True,
                                         check=True).stdout)
    st, summ = s.get_json("summary")
    ref = cli("summary", "--json", dump)
    check(summ["total"] == ref["total"] and summ["by_type"] == ref["by_type"],
          "summary == summary --json")
    st, ret = s.get_json("retained?limit=5")
    ref = cli("retained", "--json", "--top", "5", dump)
    check(ret["objects"] == ref["objects"], "retained == retained --json")
    st, t = s.get_json("tally?by=file:line:class&limit=10")
    ref = cli("tally", "--json", "--by", "file:line:class", "--sort", "memsize", "--top", "10", dump)
    check(t["groups"] == ref["groups"], "tally == tally --json")
    full = cli("tally", "--json", "--by", "type", "--sort", "memsize", "--top", "0", dump)["groups"]
    ok = True
    for lim in range(1, 71):  # more questions than the server keeps answers of (64)
        st, t = s.get_json("tally?by=type&sort=memsize&limit=%d" % lim)
        ok = ok and st == 200 and t["groups"] == full[:lim]
    check(ok, "70 tallies of different limits: each == tally --json's first rows")
    a = addrs[0]
    st, p = s.get_json("paths?addr=" + a)
    ref = cli("root", "--json", dump, a)
    check(p["paths"] == ref["paths"], "paths == root --json")
    st, d = s.get_json("domtree?addr=%s&depth=1&limit=20" % a)
    ref = cli("dominators", "--json", "--depth", "1", "--top", "20", dump, a)
    check(d["chain"] == ref["chain"] and d["tree"] == ref["tree"], "domtree == dominators --json")
    st, o = s.get_json("object?addr=" + a)
    ref = cli("show", "--json", "--no-index", dump, a)
    for k in ("references", "referrers", "class", "memsize", "file", "line"):
        check(o["objects"][0][k] == ref["objects"][0][k], "object %s == show --json" % k)


def check_timeline(work):
    """Five dumps of the timeline workload: the timeline == timeline --json,
    its chart an SVG; only the last dump is loaded."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "workloads"))
    import shutil
    if not shutil.which("ruby"):
        print("skip the timeline: no ruby to make the dumps")
        return
    import workloads
    tl = workloads.ensure_set("tl_s1")
    steps = sorted(os.path.join(tl, f) for f in os.listdir(tl) if f.startswith("step_"))[:5]
    s = Server(*steps)
    try:
        st, info = s.get_json("info")
        last = sum(1 for r in workloads.records(steps[-1]) if r.get("type") not in workloads.NOT_OBJECTS)
        check(info["timeline"] and not info["leaks"] and info["objects"] == last,
              "5 dumps: timeline on, leaks off, the last dump loaded (%d objects)" % last)
        st, t = s.get_json("timeline?by=class&limit=10")
        ref = json.loads(subprocess.run([HEAPSCOPE, "timeline", "--json", "--by", "class", "--top",
                                         "10", *steps], capture_output=True, text=True).stdout)
        check(st == 200 and t["groups"] == ref["groups"], "timeline == timeline --json")
        st, hd, body = s.request("/api/timeline?by=class&format=svg")
        check(st == 200 and hd.get("content-type") == "image/svg+xml" and body.startswith(b"<svg")
              or b"<svg" in body[:200], "the timeline's chart is an SVG")
        st, _ = s.get_json("suspects")
        check(st == 404, "5 dumps: no suspects (404)")
    finally:
        s.stop()


def check_object_pages(work):
    """An object referenced by many: /api/object gives the first `limit`
    references and referrers and their counts; list=&offset=&limit= pages
    through them; the pages put together are show --json's lists, the
    counts those of the hand-built dump."""
    d = tempfile.mkdtemp(prefix="serve-hub-", dir=work)
    hub, n_in, n_out = 0x90000, 250, 130
    outs = ["0x%x" % (0xA0000 + 0x28 * i) for i in range(n_out)]
    ins = ["0x%x" % (0xB0000 + 0x28 * i) for i in range(n_in)]
    recs = [{"type": "ROOT", "root": "vm", "references": ins}]
    recs.append({"address": "0x%x" % hub, "type": "ARRAY", "references": outs, "memsize": 1000})
    recs += [{"address": a, "type": "STRING", "memsize": 40} for a in outs]
    recs += [{"address": a, "type": "OBJECT", "references": ["0x%x" % hub], "memsize": 56}
             for a in ins]
    # more strings than the server groups at a time (65536 objects a slice)
    more = ["0x%x" % (0x1000000 + 0x28 * i) for i in range(70000)]
    recs += [{"address": a, "type": "STRING", "memsize": 40 + i % 3} for i, a in enumerate(more)]
    dump = os.path.join(d, "hub.json")
    with open(dump, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    ref = json.loads(subprocess.run([HEAPSCOPE, "show", "--json", "--no-index", dump, "0x%x" % hub],
                                    capture_output=True, text=True, check=True).stdout)["objects"][0]
    s = Server(dump)
    try:
        a = "0x%x" % hub
        st, o = s.get_json("object?addr=" + a)
        ob = o["objects"][0]
        check(st == 200 and ob["references_count"] == n_out and ob["referrers_count"] == n_in,
              "object: counts %s/%s == %d/%d of the dump" % (ob.get("references_count"),
                                                           ob.get("referrers_count"), n_out, n_in))
        check(ob["references"] == ref["references"][:100] and
              ob["referrers"] == ref["referrers"][:100], "object: the first 100 of show --json's lists")
        st, o = s.get_json("object?addr=%s&limit=3" % a)
        check(st == 200 and len(o["objects"][0]["referrers"]) == 3 and
              o["objects"][0]["referrers_count"] == n_in, "object?limit=3: 3 referrers, the count")
        for lst, want, n in (("referrers", ins, n_in), ("references", outs, n_out)):
            got, off, ok = [], 0, True
            while True:
                st, pg = s.get_json("object?addr=%s&list=%s&offset=%d&limit=70" % (a, lst, off))
                ok = ok and st == 200 and pg["count"] == n and pg["offset"] == off
                if not pg["objects"] or not ok:
                    break
                got += pg["objects"]
                off += len(pg["objects"])
            check(ok and got == ref[lst] and sorted(o["address"] for o in got) == sorted(want),
                  "%s in pages of 70 == show --json's %d (got %d)" % (lst, n, len(got)))
        st, pg = s.get_json("object?addr=%s&list=referrers&offset=99999999999&limit=5" % a)
        check(st == 200 and pg["objects"] == [] and pg["offset"] == n_in,
              "a page past the end of the referrers: empty, offset = count")
        strings = {r["address"]: r["memsize"] for r in recs if r["type"] == "STRING"}
        got, off = [], 0
        while True:
            st, m = s.get_json("members?by=type&key=STRING&offset=%d&limit=1000" % off, wait=300)
            if st != 200 or not m["objects"]:
                break
            got += [o["address"] for o in m["objects"]]
            off += len(m["objects"])
        check(st == 200 and m["count"] == len(strings) == len(got) and set(got) == set(strings) and
              m["memsize"] == sum(strings.values()),
              "members of type STRING across slices: %d objects, %s bytes == the dump's %d, %d"
              % (len(got), m.get("memsize"), len(strings), sum(strings.values())))
        for q in ("list=bogus", "list=referrers&offset=x", "limit=-1", "offset=5",
                  "list=references&limit=1e3"):
            st, hd, body = s.request("/api/object?addr=%s&%s" % (a, q))
            check(st == 400 and json.loads(body)["status"] == 400, "object?%s: 400 (got %d)" % (q, st))
    finally:
        s.stop()


def check_leaks():
    """Three dumps of the leak workload: suspects and the diff by a key ==
    the CLI's, the truth's holders among the suspects."""
    import shutil
    if not shutil.which("ruby"):
        print("skip the leak views: no ruby to make the dumps")
        return
    import workloads
    d = workloads.ensure_set("leak_s1")
    h = [os.path.join(d, "heap_%d.json" % i) for i in (1, 2, 3)]

    def cli(*a):
        return json.loads(subprocess.run([HEAPSCOPE, *a], capture_output=True, text=True).stdout)
    s = Server(*h)
    try:
        st, info = s.get_json("info")
        check(info["leaks"] and info["timeline"], "3 dumps: leak views and timeline on")
        st, sus = s.get_json("suspects?limit=10")
        ref = cli("suspects", "--json", "--top", "10", *h)
        check(st == 200 and sus["leaked"] == ref["leaked"] and sus["suspects"] == ref["suspects"],
              "suspects == suspects --json")
        holders = {v["holder"]["address"] for v in workloads.truth(d)["leaks"].values()}
        check(holders <= {x.get("address") for x in sus.get("suspects", [])},
              "the truth's holders among the suspects")
        st, df = s.get_json("diff?by=class&limit=10")
        ref = cli("diff", "--json", "--by", "class", "--top", "10", *h)
        check(st == 200 and df["groups"] == ref["groups"], "diff?by=class == diff --json --by class")
        st, _ = s.get_json("diff?by=bogus")
        check(st == 400, "diff?by=bogus: 400")
    finally:
        s.stop()


def main():
    if not HEAPSCOPE:
        raise SystemExit("set HEAPSCOPE to the heapscope binary")
    r = subprocess.run([HEAPSCOPE, "serve", "/nonexistent"], capture_output=True, text=True)
    if "without libmicrohttpd" in r.stderr:
        print("SKIP: heapscope built without libmicrohttpd (Debian: libmicrohttpd-dev)")
        return 77
    work = os.environ.get("HEAPSCOPE_WORK") or tempfile.gettempdir()
    os.makedirs(work, exist_ok=True)
    d = tempfile.mkdtemp(prefix="serve-", dir=work)
    dump, recs = hostile_dump(d)
    n_objects = sum(1 for r in recs if r["type"] != "ROOT")

    r = subprocess.run([HEAPSCOPE, "serve", "--port", "70000", dump], capture_output=True, text=True)
    check(r.returncode == 2, "--port 70000: usage error (exit %d)" % r.returncode)
    r = subprocess.run([HEAPSCOPE, "serve", "--host", "not-an-address", dump],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "--host" in r.stderr, "--host not-an-address refused: %s"
          % r.stderr.strip()[-120:])
    r = subprocess.run([HEAPSCOPE, "serve", "/nonexistent.json"], capture_output=True, text=True)
    check(r.returncode == 1 and r.stdout == "", "a missing dump: exit 1, no URL")

    s = Server("--port", "0", dump)
    try:
        check(s.port > 0 and s.addr == "127.0.0.1", "URL first, on 127.0.0.1, real port %d" % s.port)
        st, info = s.get_json("info")
        check(st == 200 and info["objects"] == n_objects,
              "info: %s objects == %d in the dump" % (info.get("objects"), n_objects))
        check_token_and_headers(s)
        check_host(s)
        check_read_only(s)
        check_escaping(s, recs, valued=False)
        check_ui_source(s)
        check_bad_requests(s, n_objects)
    finally:
        rc, err = s.stop()
    check(rc == 0, "SIGTERM: exit 0 (got %s)" % rc)

    s = Server("--values", dump)
    try:
        check_escaping(s, recs, valued=True)
    finally:
        s.stop()

    s = Server("--host", "0.0.0.0", dump)
    try:
        st, _, _ = s.request("/api/info")
        check(st == 200, "--host 0.0.0.0 serves")
    finally:
        _, err = s.stop()
    check("warning" in err and "not a loopback" in err, "--host 0.0.0.0 warns on stderr")

    sample = os.path.join(os.environ.get("HEAPSCOPE_TEST_DATA", "tests/data"), "ruby31-sample.jsonl")
    addrs = ["0x7fbc9afdeba8", "0x7fbc9afdeb08", "0x7fbc9afdee00"]
    s = Server(sample)
    try:
        check_against_cli(s, sample, addrs)
        check_concurrent(s, addrs)
    finally:
        rc, _ = s.stop()
    check(rc == 0, "stopped after the concurrent clients")

    check_object_pages(work)
    check_timeline(work)
    check_leaks()
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
