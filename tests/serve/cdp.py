"""A small Chrome DevTools protocol client (Python standard library only):
headless Chromium started with --remote-debugging-port=0, one page driven
over its WebSocket (RFC 6455 framing, client frames masked)."""
import base64
import json
import os
import re
import select
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request

CHROMIUM = os.environ.get("HEAPSCOPE_CHROMIUM") or shutil.which("chromium") \
    or shutil.which("chromium-browser")


def slow(t0, what):
    """Say which page waits took long (the test's time goes there)."""
    dt = time.monotonic() - t0
    if dt > 5:
        print("note: %.1f s waiting for %s" % (dt, what[:70].replace("\n", " ")))


class WebSocket:
    def __init__(self, url):
        m = re.match(r"ws://([^:/]+):(\d+)(/.*)", url)
        self.sock = socket.create_connection((m.group(1), int(m.group(2))), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n"
                           % (m.group(3), m.group(1), m.group(2), key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("websocket handshake: connection closed")
            head += chunk
        head, self.rest = head.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError("websocket handshake refused: %r" % head[:200])

    def _read(self, n):
        while len(self.rest) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise RuntimeError("websocket closed")
            self.rest += chunk
        out, self.rest = self.rest[:n], self.rest[n:]
        return out

    def send(self, text):
        data = text.encode()
        n = len(data)
        head = bytes([0x81])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def recv(self):
        msg = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            op = b0 & 0x0F
            if op == 0x9:  # ping: answer, keep reading
                continue
            if op == 0x8:
                raise RuntimeError("websocket closed by the browser")
            msg += payload
            if b0 & 0x80:
                return msg.decode("utf-8", "replace")


class Browser:
    """Headless Chromium with one page; eval() runs JS in it."""

    def __init__(self, workdir):
        self.profile = tempfile.mkdtemp(prefix="chromium-", dir=workdir)
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "--window-size=1280,1000",
             "--user-data-dir=" + self.profile, "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        t0 = time.monotonic()
        while port is None and time.monotonic() - t0 < 60:
            r, _, _ = select.select([self.proc.stderr], [], [], 1)
            if r:
                line = self.proc.stderr.readline()
                if not line and self.proc.poll() is not None:
                    break
                m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
                if m:
                    port = int(m.group(1))
        if port is None:
            self.close()
            raise RuntimeError("chromium did not start its DevTools endpoint")
        pages = []
        for _ in range(50):
            with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port) as f:
                pages = [p for p in json.load(f) if p.get("type") == "page"]
            if pages:
                break
            time.sleep(0.1)
        self.ws = WebSocket(pages[0]["webSocketDebuggerUrl"])
        self.next_id = 0
        self.events = []
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == my:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError("JS: %s" % r["exceptionDetails"].get("exception", {}).get(
                "description", r["exceptionDetails"]))
        return r["result"].get("value")

    def wait(self, expr, timeout=60):
        """Wait until expr is truthy in the page; its value (None on timeout).
        An element found is True: by value a DOM node comes back as {}, which
        is falsy here, and the wait would run to its timeout."""
        t0 = time.monotonic()
        probe = "(() => { const v = (%s); return v instanceof Node ? true : v; })()" % expr
        while time.monotonic() - t0 < timeout:
            try:
                v = self.eval(probe)
            except RuntimeError:
                v = None
            if v:
                slow(t0, expr)
                return v
            time.sleep(0.1)
        slow(t0, expr)
        return None

    def navigate(self, url):
        self.call("Page.navigate", url=url)

    def key(self, key, code, keycode):
        for t in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=t, key=key, code=code,
                      windowsVirtualKeyCode=keycode)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def errors(self):
        """Exceptions thrown and console errors seen so far."""
        out = []
        for e in self.events:
            if e["method"] == "Runtime.exceptionThrown":
                out.append(e["params"]["exceptionDetails"].get("text", "exception"))
            elif e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] == "error":
                out.append(" ".join(str(a.get("value", a.get("description")))
                                    for a in e["params"]["args"]))
        return out

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)
