#!/usr/bin/env python3
"""Helpers of the opencode / Kilo CLI conformance run (suite.sh), reading the mock's records, the
agent's own SQLite store and the ctxfold database directly (sqlite3), independently of ctxfold.

  checks.py session-of STORE MARKER       the id of the newest top-level session (no parent_id)
                                          whose parts hold MARKER
  checks.py message-of STORE MARKER       the id of the newest message with a text part holding
                                          MARKER
  checks.py compactions REC_DIR           for each summarizer request (a side request carrying the
                                          conversation to summarise), the first main request after it
  checks.py every-turn REC_DIR STORE DB SESSION COMPACTIONS
      every scripted prompt and reply the mock saw and every text part the agent stored is in the
      db, and SESSION holds at least COMPACTIONS imported summary nodes with covers; prints a JSON
      report, exit 1 if not.
  checks.py sidechain STORE DB
      every child session of the store (parent_id set) is a sidechain session of the db whose
      parent_node is the node holding the task call; prints a JSON report, exit 1 if not.
"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "mock"))
sys.path.insert(0, os.path.join(HERE, ".."))
import chat  # noqa: E402
import records  # noqa: E402

SUMMARIZER = "Here is the conversation so far"


def cmd_session_of(store, marker):
    row = records.connect(store).execute(
        "SELECT s.id FROM session s JOIN part p ON p.session_id = s.id WHERE s.parent_id IS NULL AND p.data LIKE ? "
        "ORDER BY s.time_created DESC LIMIT 1", ("%" + marker + "%",)).fetchone()
    if row:
        print(row[0])


def cmd_message_of(store, marker):
    """The id of the newest user message with a text part holding MARKER."""
    found = None
    for mid, data in records.connect(store).execute(
            "SELECT m.id, p.data FROM part p JOIN message m ON m.id = p.message_id ORDER BY m.id"):
        part = json.loads(data)
        if part.get("type") == "text" and marker in (part.get("text") or ""):
            found = mid
    if found:
        print(found)


def cmd_compactions(rec_dir):
    pending = False
    for p in sorted(glob.glob(os.path.join(rec_dir, "*.json"))):
        with open(p) as f:
            r = json.load(f)
        if not r.get("main"):
            texts = [it["value"] for it in chat.to_items(r.get("body") or {}) if it["kind"] == "text"]
            pending = pending or any(SUMMARIZER in t for t in texts)
        elif pending:
            print(p)
            pending = False


def cmd_every_turn(rec_dir, store, db, session, want_compactions):
    expected = records.turn_texts(rec_dir, chat.to_items)
    for rowid, data in records.connect(store).execute("SELECT rowid, data FROM part ORDER BY id"):
        part = json.loads(data)
        if part.get("type") == "text" and not part.get("ignored") and (part.get("text") or "").strip():
            expected.setdefault(part["text"], "part row %d" % rowid)
    blob = records.stored_texts(db)
    missing = [{"text": t[:120], "from": src} for t, src in expected.items() if t not in blob]
    con = records.connect(db)
    good = []
    for sid, in con.execute("SELECT id FROM nodes WHERE session=? AND kind='summary' ORDER BY seq", (session,)):
        n_cov = con.execute("SELECT count(*) FROM covers c JOIN nodes n ON n.seq = c.summary_seq WHERE n.id=?",
                            (sid,)).fetchone()[0]
        if n_cov:
            good.append({"id": sid, "covers": n_cov})
    report = {"expected_texts": len(expected), "missing": missing, "summaries": good,
              "want_summaries": int(want_compactions)}
    print(json.dumps(report))
    sys.exit(0 if not missing and len(good) >= int(want_compactions) else 1)


def cmd_sidechain(store, db):
    children = records.connect(store).execute("SELECT id, parent_id FROM session WHERE parent_id IS NOT NULL").fetchall()
    con = records.connect(db)
    bad, good = [], []
    for sid, parent in children:
        row = con.execute("SELECT kind, parent_session, parent_node FROM sessions WHERE id=?", (sid,)).fetchone()
        calls = row and row[2] and con.execute(
            "SELECT count(*) FROM nodes, json_each(nodes.content) b WHERE nodes.id=? AND "
            "json_extract(b.value,'$.type')='tool_use' AND json_extract(b.value,'$.name')='task'", (row[2],)).fetchone()[0]
        entry = {"session": sid, "parent": parent, "stored": list(row) if row else None}
        (good if row and row[0] == "sidechain" and row[1] == parent and calls else bad).append(entry)
    print(json.dumps({"children": good, "bad": bad}))
    sys.exit(0 if children and not bad else 1)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"session-of": cmd_session_of, "compactions": cmd_compactions, "every-turn": cmd_every_turn,
     "sidechain": cmd_sidechain, "message-of": cmd_message_of}[cmd](*args)


if __name__ == "__main__":
    main()
