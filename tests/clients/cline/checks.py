#!/usr/bin/env python3
"""Helpers of the Cline conformance run (run.sh) that read the client's own session files
(<sessions>/<id>/*.messages.json); the rest is ../chatchecks.py.

  checks.py session-of SESSIONS_DIR MARKER   the sessionId of the messages file whose first user
                                             message holds MARKER
  checks.py every-turn REC_DIR SESSIONS_DIR DB SESSION COMPACTIONS
      every user prompt and model reply the mock saw or the client stored appears in the db, and
      the session holds at least COMPACTIONS imported summary nodes; prints a JSON report, exit 1
      if not.
  checks.py once SESSIONS_DIR DB SESSION
      the session's messages file and the database hold the same messages, each once (a re-import
      of the grown file duplicated nothing and lost nothing); prints a JSON report, exit 1 if not.
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import chatchecks  # noqa: E402


def documents(sessions):
    for p in sorted(glob.glob(os.path.join(sessions, "*", "*.messages.json"))):
        with open(p, encoding="utf-8", errors="replace") as f:
            try:
                yield p, json.load(f)
            except ValueError:
                continue


def texts(message):
    c = message.get("content")
    if isinstance(c, str):
        return [c]
    return [b.get("text") for b in c or [] if isinstance(b, dict) and isinstance(b.get("text"), str)]


def cmd_session_of(sessions, marker):
    for _, d in documents(sessions):
        msgs = d.get("messages") or []
        if msgs and any(marker in t for t in texts(msgs[0])):
            print(d.get("sessionId"))
            return


def cmd_every_turn(rec_dir, sessions, db, session, want_compactions):
    expected = chatchecks.expected_from_requests(rec_dir)
    for p, d in documents(sessions):
        for i, m in enumerate(d.get("messages") or []):
            for t in texts(m):
                if t.strip() and m.get("role") == "assistant":
                    expected.setdefault(t, "%s message %d" % (os.path.basename(p), i))
    chatchecks.every_turn(expected, db, session, want_compactions)


def cmd_once(sessions, db, session):
    ids = []
    for _, d in documents(sessions):
        if d.get("sessionId") == session:
            ids = [m.get("id") for m in d.get("messages") or [] if isinstance(m, dict)]
    con = chatchecks.connect(db)
    stored = [r[0] for r in con.execute("SELECT id FROM nodes WHERE session=? AND kind='message' ORDER BY seq",
                                        (session,))]
    report = {"in_file": len(ids), "stored": len(stored), "distinct": len(set(stored)),
              "missing": sorted(set(ids) - set(stored))[:10], "extra": sorted(set(stored) - set(ids))[:10]}
    print(json.dumps(report))
    sys.exit(0 if ids and sorted(ids) == sorted(stored) else 1)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"session-of": cmd_session_of, "every-turn": cmd_every_turn, "once": cmd_once}[cmd](*args)


if __name__ == "__main__":
    main()
