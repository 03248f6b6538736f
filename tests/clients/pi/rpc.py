#!/usr/bin/env python3
"""Drives pi in RPC mode (`pi --mode rpc`, the package's docs/rpc.md): JSON commands on stdin, one
per line; responses and events as JSON lines on stdout.

Usage: rpc.py TIMEOUT COMMAND_JSON... -- PI_ARGV...
Sends each COMMAND in turn and waits for its response; after a "prompt" it also waits for the
agent_end event (the turn finished). Exits 1 with the reason when a response says success: false,
pi exits early, or TIMEOUT seconds pass. Closes pi's stdin at the end and waits for it to exit.
"""
import json
import subprocess
import sys
import threading
import queue


def main():
    timeout = float(sys.argv[1])
    split = sys.argv.index("--")
    commands = [json.loads(c) for c in sys.argv[2:split]]
    argv = sys.argv[split + 1:]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    lines = queue.Queue()

    def reader():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=reader, daemon=True).start()

    def wait_for(pred, what):
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                raise SystemExit(f"rpc.py: no {what} within {timeout}s")
            if line is None:
                raise SystemExit(f"rpc.py: pi exited before {what}")
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if pred(ev):
                return ev

    try:
        for n, cmd in enumerate(commands):
            cmd.setdefault("id", f"req-{n}")
            proc.stdin.write(json.dumps(cmd) + "\n")
            proc.stdin.flush()
            # A prompt's response comes before its turn runs; agent_end closes the turn.
            resp = wait_for(lambda e: e.get("type") == "response" and e.get("id") == cmd["id"], f"response to {cmd['type']}")
            if not resp.get("success", False):
                raise SystemExit(f"rpc.py: {cmd['type']} failed: {resp.get('error')}")
            if cmd["type"] == "prompt":
                wait_for(lambda e: e.get("type") == "agent_end", "agent_end")
            print(json.dumps(resp))
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
