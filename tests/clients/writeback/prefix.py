#!/usr/bin/env python3
"""Checks that the first request a client sent after resuming a written-back session begins with
ctxfold's render of the source session, item by item, and that what follows is the new turn.

Usage: prefix.py --request REC.json --protocol P --source BODY.json --marker TEXT [--label L]
Both sides are reduced to neutral items by mock/P.py (compare.py's items) and their leading
system / developer run is left out (the client sends its own system prompt and instructions:
a written-back session carries none). Item i of the request must equal item i of the source
render for every i below the render's length; the items after it (the client's new turn: its
context reminders and the prompt) must be user or developer items and hold MARKER. Prints one
JSON object in compare.py's shape: {"label","equal","total","request_items","render_items","diffs"}
where total is the render's item count plus one for the new turn.
"""
import argparse
import importlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mock"))


def items(protocol, body):
    its = importlib.import_module(protocol).to_items(body)
    k = 0
    while k < len(its) and its[k]["role"] in ("system", "developer"):
        k += 1
    return its[k:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--request", required=True)
    ap.add_argument("--protocol", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--marker", required=True)
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    with open(a.request) as f:
        req = items(a.protocol, json.load(f)["body"])
    with open(a.source) as f:
        src = items(a.protocol, json.load(f))
    key = lambda it: (it["role"], it["kind"], it["value"])  # noqa: E731
    diffs, equal = [], 0
    for i, s in enumerate(src):
        r = req[i] if i < len(req) else None
        if r is not None and key(r) == key(s):
            equal += 1
            continue
        if r is not None:
            diffs.append(dict(op="missing", at=i, role=r["role"], kind=r["kind"], value=r["value"]))
        diffs.append(dict(op="extra", at=i, role=s["role"], kind=s["kind"], value=s["value"]))
    rest = req[len(src):]
    bad = [it for it in rest if it["role"] not in ("user", "developer")]
    for it in bad:
        diffs.append(dict(op="missing", at=req.index(it), role=it["role"], kind=it["kind"], value=it["value"]))
    if any(a.marker in (it["value"] or "") for it in rest) and not bad:
        equal += 1
    elif not bad:
        diffs.append(dict(op="missing", at=len(src), role="user", kind="text", value="the new turn holding " + a.marker))
    out = {"label": a.label, "equal": equal, "total": len(src) + 1, "request_items": len(req),
           "render_items": len(src), "diffs": diffs}
    json.dump(out, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
