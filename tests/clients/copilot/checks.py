#!/usr/bin/env python3
"""Helpers of the Copilot CLI conformance run (run.sh) that read the client's own event logs
(<state>/<sessionId>/events.jsonl); the rest is ../chatchecks.py.

  checks.py session-of STATE_DIR MARKER     the session id (folder name) of the event log holding
                                            MARKER in a main-agent user message
  checks.py every-turn REC_DIR STATE_DIR DB SESSION COMPACTIONS
      every user prompt and model reply the mock saw or the client logged appears in the db, and
      the session holds at least COMPACTIONS imported summary nodes whose text is a
      <state_snapshot>; prints a JSON report, exit 1 if not.
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import chatchecks  # noqa: E402


def events(state):
    for p in sorted(glob.glob(os.path.join(state, "*", "events.jsonl"))):
        with open(p, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                try:
                    yield p, n, json.loads(line)
                except ValueError:
                    continue


def cmd_session_of(state, marker):
    for p, _, e in events(state):
        d = e.get("data") or {}
        if e.get("type") == "user.message" and not e.get("agentId") and marker in str(d.get("content")):
            print(os.path.basename(os.path.dirname(p)))
            return


def cmd_every_turn(rec_dir, state, db, session, want_compactions):
    expected = chatchecks.expected_from_requests(rec_dir)
    for p, n, e in events(state):
        if e.get("type") in ("user.message", "assistant.message"):
            t = (e.get("data") or {}).get("content")
            if isinstance(t, str) and t.strip():
                expected.setdefault(t, "%s:%d" % (os.path.relpath(p, state), n))
    chatchecks.every_turn(expected, db, session, want_compactions)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"session-of": cmd_session_of, "every-turn": cmd_every_turn}[cmd](*args)


if __name__ == "__main__":
    main()
