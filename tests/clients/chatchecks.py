#!/usr/bin/env python3
"""Checks shared by the conformance runs of the clients that speak OpenAI Chat Completions to the
mock (qwen/, copilot/): they read the mock's records, and the ctxfold database directly (sqlite3),
independently of ctxfold's own output. Each client's checks.py adds what reads its own files.

  chatchecks.py compactions REC_DIR            for each compaction, in order, the first main
                                               request that carries its <state_snapshot>
  chatchecks.py node-for REC.json DB SESSION   "ID SEQ": the stored node that ends the request (the
                                               last message: a tool result by its call id, else a
                                               user text; the first placed, lowest seq)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "mock"))
import chat  # noqa: E402
from records import carrying, connect, node_for, stored_texts, texts_of_block, turn_texts  # noqa: E402

SNAP = "<state_snapshot>"


def cmd_compactions(rec_dir):
    """The first main request carrying each new <state_snapshot> (records.carrying)."""
    for p in carrying(rec_dir, SNAP):
        print(p)


def cmd_node_for(rec_path, db, session):
    found = node_for(rec_path, db, session)
    if not found:
        sys.exit("no stored node ends %s" % rec_path)
    print(*found)


def expected_from_requests(rec_dir):
    """{text: where} for every user prompt and model reply (PROMPT-/REPLY- texts) the mock saw."""
    return turn_texts(rec_dir, chat.to_items)


def every_turn(expected, db, session, want_compactions):
    """Every expected text appears in the db (each may be part of a stored text: a client may wrap
    a prompt), and the session holds at least want_compactions imported summary nodes whose text
    is a <state_snapshot> and that cover something; prints a JSON report, exit 1 if not."""
    con = connect(db)
    blob = stored_texts(db)
    missing = [{"text": t[:120], "from": src} for t, src in expected.items() if t not in blob]
    good = []
    for sid, content in con.execute("SELECT id, content FROM nodes WHERE session=? AND kind='summary' ORDER BY seq",
                                    (session,)).fetchall():
        text = "".join(t for b in json.loads(content) for t in texts_of_block(b))
        n_cov = con.execute("SELECT count(*) FROM covers c JOIN nodes n ON n.seq = c.summary_seq WHERE n.id=?",
                            (sid,)).fetchone()[0]
        if SNAP in text and n_cov:
            good.append({"id": sid, "covers": n_cov})
    report = {"expected_texts": len(expected), "missing": missing, "summaries": good,
              "want_summaries": int(want_compactions)}
    print(json.dumps(report))
    sys.exit(0 if not missing and len(good) >= int(want_compactions) else 1)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"compactions": cmd_compactions, "node-for": cmd_node_for}[cmd](*args)


if __name__ == "__main__":
    main()
