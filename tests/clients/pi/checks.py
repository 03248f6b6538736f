#!/usr/bin/env python3
"""Helpers of the pi conformance run (run.sh), reading the mock's records, pi's session files and
the ctxfold database directly (sqlite3), independently of ctxfold's own output. The request-side
helpers are records.py's (node-for, carrying).

  checks.py session-of SESSIONS_DIR MARKER   the session id (header id) of the file holding MARKER
  checks.py leaf SESSIONS_DIR SESSION        the id of the file's last entry (pi's leaf)
  checks.py entry-of SESSIONS_DIR SESSION TEXT
                                             the id of the first message entry holding TEXT
  checks.py every-turn REC_DIR SESSIONS_DIR DB SESSION COMPACTIONS
      every prompt and reply the mock saw or pi wrote (PROMPT-/REPLY- texts) is in the database,
      every entry of the session's file that pi sends as a message is a node of the session, and
      the session holds at least COMPACTIONS imported summary nodes covering something; prints a
      JSON report, exit 1 if not.
"""
import glob
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mock"))
import chat  # noqa: E402
import records  # noqa: E402

# What pi writes before a compaction summary it sends (its dist/core/messages.js).
COMPACTED = "The conversation history before this point was compacted"


def session_files(sessions):
    return glob.glob(os.path.join(sessions, "**", "*.jsonl"), recursive=True)


def entries(path):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                yield n, json.loads(line)
            except ValueError:
                continue


def header_id(path):
    for _, e in entries(path):
        return e.get("id") if e.get("type") == "session" else None


def file_of(sessions, session):
    for p in session_files(sessions):
        if header_id(p) == session:
            return p
    sys.exit("no session file of %s" % session)


def cmd_session_of(sessions, marker):
    found = records.largest_with(session_files(sessions), marker)
    if found:
        print(header_id(found))


def cmd_leaf(sessions, session):
    last = None
    for _, e in entries(file_of(sessions, session)):
        if e.get("type") != "session":
            last = e.get("id")
    print(last)


def message_texts(content):
    if isinstance(content, str):
        return [content]
    return [b.get("text") for b in content or [] if isinstance(b, dict) and isinstance(b.get("text"), str)]


def cmd_entry_of(sessions, session, text):
    for _, e in entries(file_of(sessions, session)):
        m = e.get("message") if e.get("type") == "message" else None
        if isinstance(m, dict) and any(text in t for t in message_texts(m.get("content"))):
            print(e["id"])
            return
    sys.exit("no entry holds %r" % text)


def cmd_every_turn(rec_dir, sessions, db, session, want_compactions):
    expected = {}
    for p, r in records.mains(rec_dir):
        for it in chat.to_items(r["body"]):
            if it["role"] in ("user", "assistant") and it["kind"] == "text" \
                    and ("PROMPT-" in it["value"] or "REPLY-" in it["value"]):
                expected.setdefault(it["value"], "request " + os.path.basename(p))
    sent = []  # entries pi sends as messages: each must be a node
    for p in session_files(sessions):
        for n, e in entries(p):
            m = e.get("message") if e.get("type") == "message" else None
            if isinstance(m, dict):
                for t in message_texts(m.get("content")):
                    if t.strip():
                        expected.setdefault(t, "%s:%d" % (os.path.basename(p), n))
            if header_id(p) == session and e.get("type") in ("message", "custom_message", "branch_summary"):
                sent.append(e["id"])
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    stored = []
    for (content,) in con.execute("SELECT content FROM nodes"):
        for b in json.loads(content):
            stored.extend(records.texts_of_block(b))
    blob = "\x00".join(stored)
    missing = [{"text": t[:120], "from": src} for t, src in expected.items() if t not in blob]
    ids = {i for (i,) in con.execute("SELECT id FROM nodes WHERE session=?", (session,))}
    no_node = [e for e in sent if "%s:%s" % (session, e) not in ids]
    good = []
    for sid, content in con.execute("SELECT id, content FROM nodes WHERE session=? AND kind='summary' ORDER BY seq",
                                    (session,)).fetchall():
        text = "".join(t for b in json.loads(content) for t in records.texts_of_block(b))
        n_cov = con.execute("SELECT count(*) FROM covers c JOIN nodes n ON n.seq = c.summary_seq WHERE n.id=?",
                            (sid,)).fetchone()[0]
        if COMPACTED in text and n_cov:
            good.append({"id": sid, "covers": n_cov})
    report = {"expected_texts": len(expected), "missing": missing, "entries": len(sent), "entries_without_node": no_node,
              "summaries": good, "want_summaries": int(want_compactions)}
    print(json.dumps(report))
    sys.exit(0 if not missing and not no_node and len(good) >= int(want_compactions) else 1)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"session-of": cmd_session_of, "leaf": cmd_leaf, "entry-of": cmd_entry_of,
     "every-turn": cmd_every_turn}[cmd](*args)


if __name__ == "__main__":
    main()
