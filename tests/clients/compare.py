#!/usr/bin/env python3
"""Compares a request a client really sent with ctxfold's render of the same moment, item by item.

Usage: compare.py --request REC.json --request-protocol P --render BODY.json --render-protocol Q
                  [--label TEXT]
REC.json is a record the mock server wrote (its "body" is the request); BODY.json is what
`ctxfold render --body` printed. Both are reduced to neutral items by the protocol modules in
mock/ (to_items):
  {"msg": index of the message or input item it came from,
   "role": "system" | "developer" | "user" | "assistant" | "tool",
   "kind": "text" | "tool_use" | "tool_result" | "thinking" | "reasoning" | "image" | "compaction" | ...,
   "value": the text for text-like kinds, the call id for tool_use / tool_result, a short
            descriptor otherwise}
and aligned with difflib's longest matching blocks on (role, kind, value). Prints one JSON object:
  {"label", "equal": N, "total": max(len(request), len(render)), "request_items", "render_items",
   "diffs": [{"op": "missing" | "extra", "role", "kind", "value", "at"}]}
"missing" is an item the client sent that the render lacks; "extra" one the render has that the
client did not send.
"""
import argparse
import difflib
import importlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "mock"))


def items_of(protocol, body):
    return importlib.import_module(protocol).to_items(body)


def key(it):
    return (it["role"], it["kind"], it["value"])


def compare(req_items, ren_items):
    sm = difflib.SequenceMatcher(a=[key(i) for i in req_items], b=[key(i) for i in ren_items],
                                 autojunk=False)
    equal = sum(b.size for b in sm.get_matching_blocks())
    diffs = []
    for op, a0, a1, b0, b1 in sm.get_opcodes():
        if op == "equal":
            continue
        for i in range(a0, a1):
            diffs.append(dict(op="missing", at=i, **{k: req_items[i][k] for k in ("role", "kind", "value")}))
        for j in range(b0, b1):
            diffs.append(dict(op="extra", at=j, **{k: ren_items[j][k] for k in ("role", "kind", "value")}))
    return {"equal": equal, "total": max(len(req_items), len(ren_items)),
            "request_items": len(req_items), "render_items": len(ren_items), "diffs": diffs}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--request", required=True)
    ap.add_argument("--request-protocol", required=True)
    ap.add_argument("--render", required=True)
    ap.add_argument("--render-protocol", required=True)
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    with open(a.request) as f:
        rec = json.load(f)
    with open(a.render) as f:
        ren = json.load(f)
    out = compare(items_of(a.request_protocol, rec["body"]), items_of(a.render_protocol, ren))
    out = {"label": a.label, **out}
    json.dump(out, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
