#!/usr/bin/env python3
"""Checks that a Codex scenario exercised what it is for, so a client that changed behaviour
cannot pass by sending less.

Usage: expect.py SCENARIO.json RECORD_DIR CHECKPOINT_NAMES...
The scenario's "expect" object (all optional):
  "types":       input item types the last main request must hold (message, reasoning,
                 function_call, custom_tool_call, function_call_output, ...)
  "kinds":       neutral item kinds (mock/responses.py to_items) it must hold (image, reasoning, ...)
  "parallel":    N: some model turn in it made at least N calls
  "text":        substrings some main request must contain (anywhere in its body)
  "checkpoints": checkpoint names that must have been compared (compact-1, ...)
  "min_requests": the least number of main requests
Prints nothing when every expectation holds; else one comparison record (report.py format) whose
diffs name each unmet expectation (op "missing", kind "scenario"), which report.py counts as
unexplained.
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mock"))
import responses  # noqa: E402


def main():
    scen_path, rec_dir = sys.argv[1:3]
    names = set(sys.argv[3:])
    with open(scen_path) as f:
        exp = json.load(f).get("expect") or {}
    mains = []
    for p in sorted(glob.glob(os.path.join(rec_dir, "*.json"))):
        with open(p) as f:
            r = json.load(f)
        if r.get("main"):
            mains.append(r["body"])
    unmet = []
    last = mains[-1] if mains else {}
    types = {it.get("type", "message") for it in last.get("input") or [] if isinstance(it, dict)}
    kinds = {it["kind"] for it in responses.to_items(last)}
    for t in exp.get("types", []):
        if t not in types:
            unmet.append("item type " + t)
    for k in exp.get("kinds", []):
        if k not in kinds:
            unmet.append("item kind " + k)
    if "parallel" in exp:
        best, run = 0, 0
        for it in last.get("input") or []:
            run = run + 1 if isinstance(it, dict) and it.get("type") in ("function_call", "custom_tool_call") else 0
            best = max(best, run)
        if best < exp["parallel"]:
            unmet.append("%d calls in one turn (saw %d)" % (exp["parallel"], best))
    for s in exp.get("text", []):
        if not any(s in json.dumps(b, ensure_ascii=False) for b in mains):
            unmet.append("text %r in a request" % s)
    for c in exp.get("checkpoints", []):
        if c not in names:
            unmet.append("checkpoint " + c)
    if len(mains) < exp.get("min_requests", 1):
        unmet.append("%d main requests (saw %d)" % (exp.get("min_requests", 1), len(mains)))
    if unmet:
        rec = {"label": "expectations", "equal": 0, "total": len(unmet), "request_items": len(unmet),
               "render_items": 0,
               "diffs": [{"op": "missing", "at": i, "role": "-", "kind": "scenario", "value": u}
                         for i, u in enumerate(unmet)]}
        print(json.dumps(rec))


if __name__ == "__main__":
    main()
