#!/usr/bin/env python3
"""Finds, in a ctxfold database, the node a Claude Code client had as its HEAD when it sent a
recorded request: the predecessor of the assistant node that holds the mock's reply to it.

Usage: heads.py head DB REC.json          prints that node's session and id, tab-separated (nothing,
                                            exit 1, when no reply was stored)
       heads.py first-holds RECDIR MARKER   the last main request whose first message holds MARKER
                                            (a sub-agent's own conversation)
       heads.py after-compaction RECDIR     the first request after each compaction request (the
                                            client's summarizer call), one path a line
The mock names each reply message "msg_mock" + a digest of the request body (mock/anthropic.py);
the importer keeps it as the node's metadata.message_id.
"""
import glob
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mock"))
import anthropic  # noqa: E402


def is_compaction(body):
    """The client's summarizer call: its last user turn asks for a summary of the conversation."""
    msgs = body.get("messages") or []
    if not msgs or msgs[-1].get("role") != "user":
        return False
    return "create a detailed summary" in json.dumps(msgs[-1].get("content"), ensure_ascii=False)


def after_compaction(d):
    paths = sorted(glob.glob(os.path.join(d, "*.json")))
    pending = False
    for p in paths:
        with open(p) as f:
            rec = json.load(f)
        body = rec.get("body")
        if not isinstance(body, dict) or "messages" not in body:
            continue
        if is_compaction(body):
            pending = True
        elif pending and rec.get("main"):
            print(p)
            pending = False


def head(db, rec):
    with open(rec) as f:
        body = json.load(f)["body"]
    mid = anthropic._msg_id(body)
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    row = con.execute("SELECT session, predecessor FROM nodes WHERE kind='message' AND role='assistant' "
                      "AND json_extract(metadata,'$.message_id')=? ORDER BY seq LIMIT 1", (mid,)).fetchone()
    if not row or not row[1]:
        sys.exit(1)
    print("%s\t%s" % (row[0], row[1]))


def first_holds(d, marker):
    last = None
    for p in sorted(glob.glob(os.path.join(d, "*.json"))):
        with open(p) as f:
            rec = json.load(f)
        body = rec.get("body")
        if rec.get("main") and isinstance(body, dict) and body.get("messages"):
            if marker in json.dumps(body["messages"][0], ensure_ascii=False):
                last = p
    if last:
        print(last)


def main():
    if sys.argv[1] == "head":
        head(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "first-holds":
        first_holds(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "after-compaction":
        after_compaction(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
