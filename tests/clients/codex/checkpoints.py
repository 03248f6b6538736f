#!/usr/bin/env python3
"""Picks the Codex checkpoints to compare and the ctxfold node each one renders from.

Usage: checkpoints.py RECORD_DIR ROLLOUT_DIR LOG.jsonl
RECORD_DIR holds the mock server's records (mock/server.py); ROLLOUT_DIR is $CODEX_HOME/sessions;
LOG.jsonl is `ctxfold log` of the imported session (its node ids are SESSION:LINE, LINE the
rollout line the node starts at). Prints one line per main request (every model turn of the agent is checked), NAME REQUEST.json
HEAD_ID, NAME being
  last         the last main request
  compact-N    the first main request after the N-th compaction request (a side request: Codex's
               summarization prompt, or POST .../responses/compact)
  request-SEQ  any other main request (SEQ: the mock's record number)
HEAD_ID is the node the request was built from: the last node that starts before the first rollout
line holding the request's own output (the mock names its output items after a digest of the
request input, see mock/responses.py), or the session's HEAD when the output was never written.
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mock"))
import responses  # noqa: E402


def main():
    rec_dir, rollout_dir, log_path = sys.argv[1:4]
    recs = []
    for p in sorted(glob.glob(os.path.join(rec_dir, "*.json"))):
        with open(p) as f:
            recs.append((p, json.load(f)))
    names = {}
    mains = [p for p, r in recs if r.get("main")]
    n = 0
    for i, (p, r) in enumerate(recs):
        body = r.get("body")
        compaction = (r.get("path", "").rstrip("/").endswith("/responses/compact")
                      or (isinstance(body, dict) and responses.is_compaction_request(body)))
        if not compaction:
            continue
        n += 1
        after = next((q for q, s in recs[i + 1:] if s.get("main")), None)
        if after and after not in names:
            names[after] = "compact-%d" % n
    if mains:
        names.setdefault(mains[-1], "last")
    by_path = dict(recs)
    checkpoints = [(names.get(p, "request-%04d" % by_path[p]["seq"]), (p, by_path[p])) for p in mains]
    lines = []  # (session, line, payload)
    for path in sorted(glob.glob(os.path.join(rollout_dir, "**", "*.jsonl"), recursive=True)):
        with open(path) as f:
            for ln, raw in enumerate(f, 1):
                lines.append((ln, raw))
    node_lines = {}
    head = None
    with open(log_path) as f:
        for raw in f:
            o = json.loads(raw)
            if o.get("type") != "node":
                continue
            if head is None:
                head = o["id"]
            sess, _, ln = o["id"].rpartition(":")
            if ln.isdigit():
                node_lines[int(ln)] = o["id"]
    for name, (p, r) in checkpoints:
        seed = responses.request_seed(r["body"])
        first = next((ln for ln, raw in lines if seed in raw and '"response_item"' in raw), None)
        target = head
        if first is not None:
            before = [ln for ln in node_lines if ln < first]
            if before:
                target = node_lines[max(before)]
        print(name, p, target)


if __name__ == "__main__":
    main()
