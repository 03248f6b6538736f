#!/usr/bin/env python3
"""Loads a ctxfold HTML report in headless Chromium over the DevTools protocol and checks it.

Dependency-free: Chromium runs with --remote-debugging-pipe, reading protocol messages on fd 3 and
writing them on fd 4, each a JSON text ended by a NUL byte. Every process started here is stopped
before exit (the browser's whole process group).

Usage: report_browser.py CHROMIUM PAGE.html [options]
  --screenshot FILE       keep a PNG of the first screen
  --search WORD           type WORD into the search box: some node must match, and --node must show
  --node ID               a node inside a capsule: hidden until its capsule opens
  --hostile               the page holds hostile text: exactly one <script>, no dialog
  --js-off                load with JavaScript disabled: the text and the capsules' contents are there
Prints one line per check ("ok: ..." / "FAIL: ...") and exits 1 when any check failed.
"""
import argparse
import base64
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self, chromium, profile):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def wire():
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)
            os.setsid()  # its own process group: stopped whole at the end

        self.proc = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--remote-debugging-pipe", "--user-data-dir=" + profile,
             "--no-first-run", "--no-default-browser-check", "--disable-gpu", "--disable-extensions",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--window-size=1280,900", "--hide-scrollbars", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, pass_fds=(3, 4))
        os.close(to_child_r)
        os.close(from_child_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            ready, _, _ = select.select([self.from_child], [], [], left)
            if ready:
                chunk = os.read(self.from_child, 1 << 20)
                if not chunk:
                    raise EOFError("chromium closed the pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=True, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e["method"] == method:
                    return self.events.pop(i)
            m = self._read_message(deadline)
            if "method" in m:
                self.events.append(m)

    def drain(self, seconds):
        deadline = time.monotonic() + seconds
        try:
            while True:
                m = self._read_message(deadline)
                if "method" in m:
                    self.events.append(m)
        except TimeoutError:
            pass

    def js(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluate {expr[:60]}: {r['exceptionDetails']}")
        return r["result"].get("value")


failures = 0


def check(what, cond, detail=""):
    global failures
    if cond:
        print(f"ok: {what}")
    else:
        failures += 1
        print(f"FAIL: {what}" + (f": {detail}" if detail else ""))


def click(b, selector):
    """A real mouse click at the centre of the element (scrolled into view)."""
    box = b.js(f"(function(){{var e=document.querySelector({json.dumps(selector)});if(!e)return null;"
               "e.scrollIntoView({block:'center'});var r=e.getBoundingClientRect();"
               "return [r.left+Math.min(r.width/2,20), r.top+r.height/2];})()")
    if box is None:
        return False
    for kind in ("mousePressed", "mouseReleased"):
        b.call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1})
    return True


def load(b, url, js_off):
    target = b.call("Target.getTargets", session=False)["targetInfos"]
    page = next(t for t in target if t["type"] == "page")
    b.session = b.call("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}, session=False)["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        b.call(domain + ".enable")
    if js_off:
        b.call("Emulation.setScriptExecutionDisabled", {"value": True})
    start = time.monotonic()
    b.call("Page.navigate", {"url": url})
    b.wait_event("Page.loadEventFired", timeout=120)
    elapsed = time.monotonic() - start
    b.drain(0.5)
    return elapsed


def problems(b, url):
    """Console errors, uncaught exceptions, log errors, dialogs and requests that leave the file."""
    errors, requests = [], []
    for e in b.events:
        m, p = e["method"], e.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            errors.append("console." + p["type"] + ": " + json.dumps(p.get("args", []))[:200])
        elif m == "Runtime.exceptionThrown":
            errors.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:200])
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            errors.append("log: " + p["entry"].get("text", "")[:200])
        elif m == "Page.javascriptDialogOpening":
            errors.append("dialog: " + p.get("message", "")[:200])
        elif m == "Network.requestWillBeSent":
            u = p.get("request", {}).get("url", "")
            if u != url and not u.startswith("data:"):
                requests.append(u[:200])
    return errors, requests


def run(args):
    url = "file://" + os.path.abspath(args.page)
    profile = tempfile.mkdtemp(prefix="ctxfold-chromium-")
    b = Browser(args.chromium, profile)
    try:
        elapsed = load(b, url, args.js_off)
        print(f"load: {elapsed:.2f} s ({os.path.getsize(args.page)} bytes)")
        check("the page has a title", bool(b.js("document.title")))
        if args.screenshot:
            shot = b.call("Page.captureScreenshot", {"format": "png"})
            with open(args.screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        if args.js_off:
            check("js off: the search box stays hidden", b.js("document.getElementById('search').hidden") is True)
            check("js off: capsules are there", b.js("document.querySelectorAll('details.covered').length") > 0)
            if args.node:
                inside = b.js(f"(function(){{var n=document.getElementById({json.dumps('node-' + args.node)});"
                              "return !!n && !!n.closest('details.covered') && n.textContent.length > 0;})()")
                check("js off: the covered node's text is in the capsule", inside)
            if args.search:
                check("js off: the known word is in the text",
                      args.search.lower() in b.js("document.body.textContent.toLowerCase()"))
        else:
            interact(b, args)
        if args.hostile:
            check("hostile: only the page's own script", b.js("document.scripts.length") == 1)
            text = b.js("document.body.textContent")
            check("hostile: <script> shows as text", "<script>alert(" in text)
            check("hostile: </textarea> shows as text", "</textarea>" in text)
            check("hostile: the RTL override is shown, not applied", "\u202e" not in text and "[U+202E]" in text)
        errors, requests = problems(b, url)
        check("no console error", not errors, "; ".join(errors[:5]))
        check("no request leaves the file", not requests, "; ".join(requests[:5]))
    finally:
        b.stop()
        shutil.rmtree(profile, ignore_errors=True)


def interact(b, args):
    check("js on: the search box shows", b.js("document.getElementById('search').hidden") is False)
    # checkVisibility: false inside a closed <details> (its content is content-visibility: hidden)
    visible = "(function(){var n=document.getElementById(%s);if(!n)return null;return n.checkVisibility();})()"
    if args.node:
        sel = json.dumps("node-" + args.node)
        check("the covered node is on the page", b.js(visible % sel) is not None)
        check("the covered node is hidden while its capsule is closed", b.js(visible % sel) is False)
        capsule = b.js(f"(function(){{var d=document.getElementById({sel}).closest('details.covered');"
                       "d.id=d.id||'capsule-under-test';return '#'+d.id;})()")
        check("click opens the capsule", click(b, capsule + " > summary") and b.js(
            f"document.querySelector({json.dumps(capsule)}).open") is True)
        check("the covered node shows once its capsule is open", b.js(visible % sel) is True)
        click(b, capsule + " > summary")  # closed again: search must open it
        check("a second click closes it", b.js(f"document.querySelector({json.dumps(capsule)}).open") is False)
    if args.search:
        b.js("document.getElementById('q').focus()")
        b.call("Input.insertText", {"text": args.search})
        time.sleep(0.6)
        hits = b.js("document.getElementById('hits').textContent")
        check(f"search finds {args.search!r}", hits and not hits.startswith("0 "), repr(hits))
        if args.node:
            check("search opens the capsule holding the covered node", b.js(visible % json.dumps("node-" + args.node)) is True)
        check("search hides nodes that do not match", b.js("document.querySelectorAll('.node.miss').length") > 0)
        b.js("(function(){var q=document.getElementById('q');q.value='';q.dispatchEvent(new Event('input'));})()")
        time.sleep(0.4)
        check("clearing the search shows every node again", b.js("document.querySelectorAll('.node.miss').length") == 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("chromium")
    ap.add_argument("page")
    ap.add_argument("--screenshot")
    ap.add_argument("--search")
    ap.add_argument("--node")
    ap.add_argument("--hostile", action="store_true")
    ap.add_argument("--js-off", action="store_true")
    args = ap.parse_args()
    try:
        run(args)
    except Exception as e:  # a protocol failure is a failed check, never a pass
        check("the browser session ran", False, f"{type(e).__name__}: {e}")
    print(f"{failures} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
