"""Starting and asking `heapscope serve` from the tests (Python standard
library only)."""
import http.client
import json
import os
import re
import select
import signal
import subprocess
import time

HEAPSCOPE = os.environ.get("HEAPSCOPE")
URL_RE = re.compile(r"^http://(127\.0\.0\.1|\[::1\]|[0-9.]+):(\d+)/\?token=([0-9a-f]{32})$")


class Server:
    """A running `heapscope serve ARGS...`: url, host, port, token."""

    def __init__(self, *args, timeout=120):
        self.proc = subprocess.Popen([HEAPSCOPE, "serve", "--no-progress", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        t0 = time.monotonic()
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        self.first_line = self.proc.stdout.readline().rstrip("\n") if r else ""
        self.url_seconds = time.monotonic() - t0
        m = URL_RE.match(self.first_line)
        if not m:
            self.proc.kill()
            err = self.proc.stderr.read()
            raise RuntimeError("no URL as the first line (%r); stderr: %s" % (self.first_line, err))
        self.url = self.first_line
        self.addr, self.port, self.token = m.group(1), int(m.group(2)), m.group(3)
        self.host = "%s:%d" % (self.addr, self.port)

    def request(self, path, method="GET", headers=None, token=True, host=None, body=None):
        """(status, headers dict (lower-case names), body bytes)."""
        c = http.client.HTTPConnection(self.addr.strip("[]"), self.port, timeout=60)
        h = {"Host": self.host if host is None else host}
        if token is True:
            h["X-Heapscope-Token"] = self.token
        elif token:
            h["X-Heapscope-Token"] = token
        h.update(headers or {})
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        hd = {k.lower(): v for k, v in r.getheaders()}
        c.close()
        return r.status, hd, data

    def get_json(self, path, wait=120):
        """The document at /api/PATH, waiting while it is being computed (202)."""
        t0 = time.monotonic()
        while True:
            st, hd, data = self.request("/api/" + path)
            if st != 202 or time.monotonic() - t0 > wait:
                return st, json.loads(data.decode("utf-8"))
            time.sleep(0.2)

    def stop(self):
        """SIGTERM; the exit status and stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
            return None, err
        return self.proc.returncode, err
