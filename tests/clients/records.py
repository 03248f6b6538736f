#!/usr/bin/env python3
"""Reads the mock server's request records (DIR/NNNN.json, see mock/server.py).

  records.py last-main DIR         the path of the newest main-agent request
  records.py main DIR              the paths of every main-agent request, oldest first
  records.py after DIR MARKER      the first main-agent request whose body contains MARKER
  records.py carrying DIR MARKER   for each new text item holding MARKER (a compaction's summary as
                                   the client sends it), the first main-agent request carrying it
  records.py node-for REC.json DB SESSION
                                   "ID SEQ": the stored node that ends a Chat Completions request
                                   (its last message: a tool result by its call id, else a user
                                   text, the last that is stored; the first placed, lowest seq),
                                   read directly (sqlite3)
The functions are also imported by the clients' checks.py.
"""
import glob
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "mock"))
import chat  # noqa: E402


def mains(d):
    out = []
    for p in sorted(glob.glob(os.path.join(d, "*.json"))):
        with open(p) as f:
            rec = json.load(f)
        if rec.get("main"):
            out.append((p, rec))
    return out


def carrying(rec_dir, marker):
    """For each new Chat Completions text item holding MARKER, the first main request with it."""
    seen, out = set(), []
    for p, r in mains(rec_dir):
        found = {it["value"] for it in chat.to_items(r["body"]) if it["kind"] == "text" and marker in it["value"]}
        if found - seen:
            out.append(p)
            seen |= found
    return out


def largest_with(paths, marker):
    """The largest of the files PATHS whose text holds MARKER (a client's session file), or None."""
    best = None
    for p in paths:
        with open(p, encoding="utf-8", errors="replace") as f:
            data = f.read()
        if marker in data and (best is None or len(data) > best[1]):
            best = (p, len(data))
    return best[0] if best else None


def texts_of_block(b):
    """Every text a stored content block holds (text, thinking, a tool result's content)."""
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


def turn_texts(rec_dir, to_items):
    """{text: "request NNNN.json"}: every scripted prompt and reply (a user or assistant text holding
    PROMPT- or REPLY-) of the main requests, reduced to items by the protocol's to_items."""
    expected = {}
    for p, r in mains(rec_dir):
        for it in to_items(r["body"]):
            if it["role"] in ("user", "assistant") and it["kind"] == "text" and it["value"].strip() \
                    and ("PROMPT-" in it["value"] or "REPLY-" in it["value"]):
                expected.setdefault(it["value"], "request " + os.path.basename(p))
    return expected


def connect(db):
    return sqlite3.connect("file:%s?mode=ro" % db, uri=True)


def stored_texts(db):
    """Every text of every node of a ctxfold database, joined by NUL."""
    out = []
    for (content,) in connect(db).execute("SELECT content FROM nodes"):
        for b in json.loads(content):
            out.extend(texts_of_block(b))
    return "\x00".join(out)


def node_for(rec_path, db, session):
    """(id, seq) of the stored node that ends the recorded request, or None."""
    with open(rec_path) as f:
        body = json.load(f)["body"]
    last = body["messages"][-1]
    rows = connect(db).execute("SELECT id, seq, content FROM nodes WHERE session=? AND kind='message' ORDER BY seq",
                               (session,)).fetchall()
    if last.get("role") == "tool":
        for nid, seq, content in rows:
            if any(b.get("type") == "tool_result" and b.get("tool_use_id") == last.get("tool_call_id")
                   for b in json.loads(content)):
                return nid, seq
        return None
    # A user text, its last text part first: a client may add parts its files do not hold (Kilo's
    # <environment_details>, Qwen Code's <system-reminder>s) around the prompt, or parts it stores
    # in every such message (Kilo's agent-switch reminder): the first text only one node holds
    # decides, else the first node holding any.
    c = last.get("content")
    texts = [c] if isinstance(c, str) else [x.get("text") for x in c or [] if isinstance(x, dict)]
    first = None
    for want in reversed(texts):
        hits = [(nid, seq) for nid, seq, content in rows
                if any(b.get("type") == "text" and b.get("text") == want for b in json.loads(content))]
        if len(hits) == 1:
            return hits[0]
        first = first or (hits[0] if hits else None)
    return first


def main():
    cmd, d = sys.argv[1], sys.argv[2]
    if cmd == "node-for":
        found = node_for(d, sys.argv[3], sys.argv[4])
        if not found:
            sys.exit("no stored node ends %s" % d)
        print(*found)
        return
    if cmd == "carrying":
        for p in carrying(d, sys.argv[3]):
            print(p)
        return
    ms = mains(d)
    if cmd == "last-main":
        if ms:
            print(ms[-1][0])
    elif cmd == "main":
        for p, _ in ms:
            print(p)
    elif cmd == "after":
        marker = sys.argv[3]
        for p, rec in ms:
            if marker in json.dumps(rec["body"], ensure_ascii=False):
                print(p)
                break
    elif cmd == "node-for":
        found = node_for(d, sys.argv[3], sys.argv[4])
        if not found:
            sys.exit("no stored node ends %s" % d)
        print(*found)
    else:
        sys.exit("usage: records.py last-main|main|after|carrying DIR [MARKER] | node-for REC DB SESSION")


if __name__ == "__main__":
    main()
