#!/usr/bin/env python3
"""Helpers of the Qwen Code conformance run (run.sh), reading the mock's records, the client's
chat files and the ctxfold database directly (sqlite3), independently of ctxfold's own output.

  checks.py session-of PROJECTS_DIR MARKER      the sessionId of the chat file holding MARKER
  checks.py compactions REC_DIR                 for each chat compression, in order, the first main
                                                request that carries its <state_snapshot>
  checks.py node-for REC.json DB SESSION        "ID SEQ": the stored node that ends the request (the
                                                last message: a tool result by its call id, else a
                                                user text; the first placed, lowest seq)
  checks.py every-turn REC_DIR PROJECTS_DIR DB SESSION COMPACTIONS
      every user prompt and model reply the mock saw or the client wrote appears in the db, and the
      session holds at least COMPACTIONS imported summary nodes whose text is a <state_snapshot>;
      prints a JSON report, exit 1 if not.
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mock"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import chat  # noqa: E402
import records  # noqa: E402
from records import texts_of_block  # noqa: E402

SNAP = "<state_snapshot>"


mains = records.mains


def chat_files(projects):
    return glob.glob(os.path.join(projects, "*", "chats", "*.jsonl"))


def cmd_session_of(projects, marker):
    best = None
    for p in chat_files(projects):
        with open(p, encoding="utf-8", errors="replace") as f:
            data = f.read()
        if marker in data and (best is None or len(data) > best[1]):
            best = (p, len(data))
    if best:
        print(os.path.basename(best[0]).rsplit(".", 1)[0])


def cmd_compactions(rec_dir):
    seen = set()
    for p, r in mains(rec_dir):
        snaps = {it["value"] for it in chat.to_items(r["body"]) if it["kind"] == "text" and SNAP in it["value"]}
        if snaps - seen:
            print(p)
            seen |= snaps


def cmd_node_for(rec_path, db, session):
    found = records.node_for(rec_path, db, session)
    if not found:
        sys.exit("no stored node ends %s" % rec_path)
    print(*found)


def cmd_every_turn(rec_dir, projects, db, session, want_compactions):
    expected = records.turn_texts(rec_dir, chat.to_items)
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
    con = records.connect(db)
    blob = records.stored_texts(db)
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
    {"session-of": cmd_session_of, "compactions": cmd_compactions, "node-for": cmd_node_for,
     "every-turn": cmd_every_turn}[cmd](*args)


if __name__ == "__main__":
    main()
