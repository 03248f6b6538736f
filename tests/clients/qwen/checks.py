#!/usr/bin/env python3
"""Helpers of the Qwen Code conformance run (run.sh), reading the mock's records, the client's
chat files and the ctxfold database directly (sqlite3), independently of ctxfold's own output
(the parts every Chat Completions client shares are in ../chatchecks.py).

  checks.py session-of PROJECTS_DIR MARKER      the sessionId of the chat file holding MARKER
  checks.py every-turn REC_DIR PROJECTS_DIR DB SESSION COMPACTIONS
      every user prompt and model reply the mock saw or the client wrote appears in the db, and the
      session holds at least COMPACTIONS imported summary nodes whose text is a <state_snapshot>;
      prints a JSON report, exit 1 if not.
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import chatchecks  # noqa: E402
import records  # noqa: E402


def chat_files(projects):
    return glob.glob(os.path.join(projects, "*", "chats", "*.jsonl"))


def cmd_session_of(projects, marker):
    found = records.largest_with(chat_files(projects), marker)
    if found:
        print(os.path.basename(found).rsplit(".", 1)[0])


def cmd_every_turn(rec_dir, projects, db, session, want_compactions):
    expected = chatchecks.expected_from_requests(rec_dir)
    for p in chat_files(projects):
        with open(p, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                m = rec.get("message")
                if rec.get("type") not in ("user", "assistant") or not isinstance(m, dict):
                    continue
                for part in m.get("parts") or []:
                    t = part.get("text") if isinstance(part, dict) else None
                    if isinstance(t, str) and t.strip():
                        expected.setdefault(t, "%s:%d" % (os.path.basename(p), n))
    chatchecks.every_turn(expected, db, session, want_compactions)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"session-of": cmd_session_of, "compactions": chatchecks.cmd_compactions, "node-for": chatchecks.cmd_node_for,
     "every-turn": cmd_every_turn}[cmd](*args)


if __name__ == "__main__":
    main()
