#!/usr/bin/env python3
"""Helpers of the Gemini CLI conformance run (run.sh), reading the mock's records, the client's
chat files and the ctxfold database directly (sqlite3), independently of ctxfold's own output.

  checks.py session-of CHATS_DIR MARKER        the stem of the chat file holding MARKER (the largest)
  checks.py compactions REC_DIR                 for each chat compression, in order, the first main
                                               request that carries its <state_snapshot>
  checks.py node-for REC.json DB SESSION        "ID SEQ": the stored node that ends the request
                                               (the first placed, lowest seq)
  checks.py every-turn REC_DIR CHATS_DIR DB SESSION COMPACTIONS
      every user prompt and model reply the mock saw or the client wrote appears in the db, and
      the session holds at least COMPACTIONS imported summary nodes whose text is a
      <state_snapshot> and whose covers_ids are stored nodes; prints a JSON report, exit 1 if not.
"""
import glob
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mock"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gemini  # noqa: E402
from records import texts_of_block  # noqa: E402

SNAP = "<state_snapshot>"


def records(d):
    out = []
    for p in sorted(glob.glob(os.path.join(d, "*.json"))):
        with open(p) as f:
            out.append((p, json.load(f)))
    return out


def mains(d):
    return [(p, r) for p, r in records(d) if r.get("main")]


def snapshot_texts(body):
    for it in gemini.to_items(body):
        if it["kind"] == "text" and SNAP in it["value"]:
            yield it["value"]


def cmd_session_of(chats, marker):
    best = None
    for p in glob.glob(os.path.join(chats, "**", "*.json*"), recursive=True):
        with open(p, encoding="utf-8", errors="replace") as f:
            data = f.read()
        if marker in data and (best is None or len(data) > best[1]):
            best = (p, len(data))
    if best:
        name = os.path.basename(best[0])
        print(name.rsplit(".", 1)[0])


def cmd_compactions(rec_dir):
    seen = set()
    for p, r in mains(rec_dir):
        snaps = set(snapshot_texts(r["body"]))
        new = snaps - seen
        if new:
            print(p)
            seen |= snaps


def cmd_node_for(rec_path, db, session):
    with open(rec_path) as f:
        body = json.load(f)["body"]
    last = body["contents"][-1]["parts"][-1]
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    rows = con.execute("SELECT id, seq, content FROM nodes WHERE session=? AND kind='message' ORDER BY seq",
                       (session,)).fetchall()
    for nid, seq, content in rows:
        blocks = json.loads(content)
        for b in blocks:
            if "functionResponse" in last:
                want = last["functionResponse"].get("id")
                got = b.get("tool_use_id", "")
                if b.get("type") == "tool_result" and (got == want or got.endswith("__" + want)):
                    print(nid, seq)
                    return
            elif "text" in last and b.get("type") == "text" and b.get("text") == last["text"]:
                print(nid, seq)
                return
    sys.exit("no stored node ends %s" % rec_path)


def cmd_every_turn(rec_dir, chats, db, session, want_compactions):
    expected = {}
    for p, r in mains(rec_dir):
        for it in gemini.to_items(r["body"]):
            if it["role"] in ("user", "assistant") and it["kind"] == "text" and it["value"].strip():
                expected.setdefault(it["value"], "request " + os.path.basename(p))
    for p in glob.glob(os.path.join(chats, "**", "*.jsonl"), recursive=True):
        with open(p, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                msgs = rec["$set"]["messages"] if isinstance(rec.get("$set"), dict) and "messages" in rec["$set"] else [rec]
                for m in msgs:
                    if not isinstance(m, dict) or m.get("type") not in ("user", "gemini"):
                        continue
                    c = m.get("content")
                    parts = [c] if isinstance(c, str) else [x.get("text") for x in c or [] if isinstance(x, dict)]
                    for t in parts:
                        if isinstance(t, str) and t.strip():
                            expected.setdefault(t, "%s:%d" % (os.path.basename(p), n))
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    stored = []
    for (content,) in con.execute("SELECT content FROM nodes"):
        for b in json.loads(content):
            stored.extend(texts_of_block(b))
    blob = "\x00".join(stored)
    missing = [{"text": t[:120], "from": src} for t, src in expected.items() if t not in blob]
    summaries = con.execute("SELECT id, content, metadata FROM nodes WHERE session=? AND kind='summary' ORDER BY seq",
                            (session,)).fetchall()
    good = []
    for sid, content, meta in summaries:
        text = "".join(t for b in json.loads(content) for t in texts_of_block(b))
        covers = json.loads(meta).get("covers") or {}
        n_cov = con.execute("SELECT covers_count FROM nodes WHERE id=?", (sid,)).fetchone()[0]
        first_ok = con.execute("SELECT count(*) FROM nodes WHERE id=(SELECT covers_first FROM nodes WHERE id=?)",
                               (sid,)).fetchone()[0]
        if SNAP in text and n_cov and first_ok:
            good.append({"id": sid, "covers": n_cov})
    prompts = sorted({t for t in expected if "PROMPT-" in t})
    replies = sorted({t for t in expected if t.startswith("REPLY-")})
    report = {"expected_texts": len(expected), "prompts": len(prompts), "replies": len(replies),
              "missing": missing, "summaries": good, "want_summaries": int(want_compactions)}
    print(json.dumps(report))
    ok = not missing and len(good) >= int(want_compactions)
    sys.exit(0 if ok else 1)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"session-of": cmd_session_of, "compactions": cmd_compactions, "node-for": cmd_node_for,
     "every-turn": cmd_every_turn}[cmd](*args)


if __name__ == "__main__":
    main()
