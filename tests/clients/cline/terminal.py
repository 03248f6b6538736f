#!/usr/bin/env python3
"""Runs a command on a pseudo-terminal and drives it by steps, for a client that only resumes a
session interactively (Cline's `cline --id ID` opens its terminal UI and refuses a pipe).

Usage: terminal.py LOG TIMEOUT STEPS_JSON -- CMD [ARG...]

STEPS_JSON is a JSON array run in order; each step waits until it holds, then the next begins:
  ["output", TEXT]        the terminal output so far contains TEXT
  ["file", PATH, TEXT]    the file PATH exists and contains TEXT
  ["pause", SECONDS]      SECONDS have passed since the step before
  ["type", TEXT]          types TEXT (one character at a time, as a person would)
  ["key", TEXT]           sends TEXT at once ("\\r" is Enter)
Everything the terminal prints is appended to LOG. When the steps are done the command gets a few
seconds to exit; then (or at TIMEOUT seconds) its whole session is killed, whatever it started in
it included. Exit status: 0 when every step was done, 124 when TIMEOUT came first.
"""
import json
import os
import pty
import select
import signal
import sys
import time

GRACE = 10.0


def holds(step, seen):
    """True when a waiting step is satisfied."""
    kind = step[0]
    if kind == "output":
        return step[1].encode() in seen
    if kind == "file":
        try:
            with open(step[1], encoding="utf-8", errors="replace") as f:
                return step[2] in f.read()
        except OSError:
            return False
    return True


def main():
    sep = sys.argv.index("--")
    log, timeout, steps = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
    cmd = sys.argv[sep + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    deadline = time.monotonic() + timeout
    seen, i, since, done_at, status = b"", 0, time.monotonic(), None, None
    with open(log, "ab") as out:
        while time.monotonic() < deadline:
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    data = b""
                out.write(data)
                out.flush()
                seen += data
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                status = 0
                break
            if i < len(steps):
                step = steps[i]
                if step[0] == "pause" and time.monotonic() - since < float(step[1]):
                    continue
                if step[0] in ("type", "key"):
                    for ch in (step[1] if step[0] == "type" else [step[1]]):
                        os.write(fd, ch.encode())
                        time.sleep(0.02)
                elif not holds(step, seen):
                    continue
                i, since = i + 1, time.monotonic()
                if i == len(steps):
                    done_at = time.monotonic()
            elif time.monotonic() - done_at > GRACE:
                break
    if status is None:
        try:
            os.killpg(pid, signal.SIGKILL)  # pty.fork made the child a session and group leader
        except OSError:
            pass
        os.waitpid(pid, 0)
    if i < len(steps):
        print("terminal.py: step %d of %d (%s) never held" % (i + 1, len(steps), json.dumps(steps[i])), file=sys.stderr)
        sys.exit(124)


if __name__ == "__main__":
    main()
