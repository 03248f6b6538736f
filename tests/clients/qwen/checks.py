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
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mock"))
import chat  # noqa: E402

SNAP = "<state_snapshot>"


def mains(d):
    out = []
    for p in sorted(glob.glob(os.path.join(d, "*.json"))):
        with open(p) as f:
            r = json.load(f)
        if r.get("main"):
            out.append((p, r))
    return out


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


def texts_of_block(b):
    if not isinstance(b, dict):
        return []
    out = [b[k] for k in ("text", "thinking") if isinstance(b.get(k), str)]
    c = b.get("content")
    if isinstance(c, str):
        out.append(c)
    elif isinstance(c, list):
        for x in c:
            out.extend(texts_of_block(x))
    return out


def cmd_node_for(rec_path, db, session):
    with open(rec_path) as f:
        body = json.load(f)["body"]
    last = body["messages"][-1]
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    rows = con.execute("SELECT id, seq, content FROM nodes WHERE session=? AND kind='message' ORDER BY seq",
                       (session,)).fetchall()
    want_text = None
    if last.get("role") != "tool":
        c = last.get("content")
        texts = [c] if isinstance(c, str) else [x.get("text") for x in c or [] if isinstance(x, dict)]
        want_text = texts[-1] if texts else None
    for nid, seq, content in rows:
        for b in json.loads(content):
            if last.get("role") == "tool":
                if b.get("type") == "tool_result" and b.get("tool_use_id") == last.get("tool_call_id"):
                    print(nid, seq)
                    return
            elif b.get("type") == "text" and b.get("text") == want_text:
                print(nid, seq)
                return
    sys.exit("no stored node ends %s" % rec_path)


def cmd_every_turn(rec_dir, projects, db, session, want_compactions):
    expected = {}
    for p, r in mains(rec_dir):
        for it in chat.to_items(r["body"]):
            if it["role"] in ("user", "assistant") and it["kind"] == "text" and it["value"].strip() \
                    and ("PROMPT-" in it["value"] or "REPLY-" in it["value"]):
                expected.setdefault(it["value"], "request " + os.path.basename(p))
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
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    stored = []
    for (content,) in con.execute("SELECT content FROM nodes"):
        for b in json.loads(content):
            stored.extend(texts_of_block(b))
    blob = "\x00".join(stored)
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
