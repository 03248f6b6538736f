#!/usr/bin/env python3
"""The conformance suite's mock model server: loopback only, standard library only.

Usage: server.py --scenario FILE --record DIR [--port-file FILE] [--idle SECONDS] [--watch-stdin]

Binds 127.0.0.1 on an ephemeral port (written to --port-file, and printed on stdout), and speaks
the wire protocols of the clients, one module each beside this file:
  anthropic.py   Anthropic Messages (POST /v1/messages, SSE when "stream": true)
  responses.py   OpenAI Responses (POST /v1/responses, SSE)
  gemini.py      Gemini (POST /v1beta/models/M:generateContent and :streamGenerateContent?alt=sse)
  chat.py        OpenAI Chat Completions (POST /v1/chat/completions, SSE when "stream": true)
Every request is recorded before it is answered, as DIR/NNNN.json:
  {"seq": N, "method", "path", "query", "protocol", "main": bool, "headers": {...}, "body": ...}
with lowercase header names and credentials replaced by "<redacted>".

A scenario file is JSON: {"prompts": {KEY: [REPLY, ...]}, "default": REPLY, "side": REPLY}.
For a main-agent request the server finds the newest user text that contains a KEY (searching
back from the end of the request's items), counts the assistant turns that follow it, and sends
REPLY number that count (the last one once the list is exhausted). The choice depends only on the
request body, so client retries and resumes get the same answer. Requests the protocol module
calls side requests (titles, topic checks, quota probes) get "side". A REPLY is neutral:
  {"text": STR, "thinking": STR, "tool_calls": [{"name", "input": {...}, "id"?}],
   "usage": {"input_tokens": N, "output_tokens": N}, "status": HTTP_STATUS, "error": STR}
each field optional. Each protocol module turns it into its own response shape.

Bounded: the server exits after --idle seconds without a request (default 300), on SIGTERM, and
with --watch-stdin when its stdin reaches end of file.
"""
import argparse
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import anthropic  # noqa: E402
import chat  # noqa: E402
import gemini  # noqa: E402
import responses  # noqa: E402

# chat before gemini, whose routes take anything under /v1/.
PROTOCOLS = [anthropic, chat, responses, gemini]
SECRET_HEADERS = {"authorization", "x-api-key", "x-goog-api-key", "cookie"}

lock = threading.Lock()
state = {"seq": 0, "last": time.monotonic()}


def choose_reply(scenario, items, is_main):
    """The scripted REPLY for a request whose neutral items are ITEMS (see compare.py)."""
    if not is_main:
        return scenario.get("side") or {"text": "ok"}
    prompts = scenario.get("prompts", {})
    for pos in range(len(items) - 1, -1, -1):
        it = items[pos]
        if it["role"] != "user" or it["kind"] != "text":
            continue
        for key, replies in prompts.items():
            if key in it["value"]:
                later = items[pos + 1:]
                turns = len({x["msg"] for x in later if x["role"] == "assistant"})
                return replies[min(turns, len(replies) - 1)]
    return scenario.get("default") or {"text": "Done."}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    scenario = {}
    record_dir = "."

    def log_message(self, fmt, *args):
        pass

    def send_json(self, status, payload):
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, data, event=None):
        """One server-sent event; DATA is JSON-encoded unless it is already a string."""
        chunk = ""
        if event:
            chunk += "event: " + event + "\n"
        chunk += "data: " + (data if isinstance(data, str) else json.dumps(data)) + "\n\n"
        try:
            self.wfile.write(chunk.encode())
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def handle_any(self, method):
        state["last"] = time.monotonic()
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length", "0") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        proto = next((p for p in PROTOCOLS if p.matches(method, url.path)), None)
        is_main = False
        if proto is not None and isinstance(body, dict):
            is_main = proto.is_main(body)
        with lock:
            state["seq"] += 1
            seq = state["seq"]
        headers = {k.lower(): ("<redacted>" if k.lower() in SECRET_HEADERS else v)
                   for k, v in self.headers.items()}
        rec = {"seq": seq, "method": method, "path": url.path, "query": url.query,
               "protocol": proto.__name__ if proto else None, "main": is_main,
               "headers": headers, "body": body}
        with open(os.path.join(self.record_dir, "%04d.json" % seq), "w") as f:
            json.dump(rec, f, ensure_ascii=False)
        if proto is None:
            if method == "GET" or method == "HEAD":
                self.send_json(200, {})
            else:
                self.send_json(404, {"error": {"message": "mock: no route for " + url.path}})
            return
        reply = choose_reply(self.scenario, proto.to_items(body) if isinstance(body, dict) else [],
                             is_main) if isinstance(body, dict) else {"text": "ok"}
        proto.respond(self, method, url, body, reply)

    def do_POST(self):
        self.handle_any("POST")

    def do_GET(self):
        self.handle_any("GET")

    def do_HEAD(self):
        self.handle_any("HEAD")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--port-file")
    ap.add_argument("--idle", type=float, default=300.0)
    ap.add_argument("--watch-stdin", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.record, exist_ok=True)
    with open(a.scenario) as f:
        Handler.scenario = json.load(f)
    Handler.record_dir = a.record
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write(str(port))
        os.replace(a.port_file + ".tmp", a.port_file)
    print(port, flush=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()

    def watch_stdin():
        try:
            while sys.stdin.read(65536):
                pass
        except (OSError, ValueError):
            return
        os._exit(0)
    if a.watch_stdin:
        threading.Thread(target=watch_stdin, daemon=True).start()
    while time.monotonic() - state["last"] < a.idle:
        time.sleep(0.5)
    os._exit(0)


if __name__ == "__main__":
    main()
