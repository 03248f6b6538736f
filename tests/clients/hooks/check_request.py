#!/usr/bin/env python3
"""The first main-agent request a client sent after a compaction (the first whose body holds
the compaction summary's preamble: Claude Code's, or with --after TEXT another) must hold every
given text: the context `ctxfold hook` injected. Prints that request's file; exit 1 naming what is
missing.

  check_request.py RECORD_DIR [--after PREAMBLE] TEXT...
"""
import glob
import json
import os
import sys

PREAMBLE = "This session is being continued from a previous conversation"


def main():
    d, wanted = sys.argv[1], sys.argv[2:]
    preamble = PREAMBLE
    if wanted[:1] == ["--after"]:
        preamble, wanted = wanted[1], wanted[2:]
    for p in sorted(glob.glob(os.path.join(d, "*.json"))):
        with open(p) as f:
            rec = json.load(f)
        body = json.dumps(rec.get("body"), ensure_ascii=False)
        if not rec.get("main") or preamble not in body:
            continue
        missing = [w for w in wanted if w not in body]
        if missing:
            print(f"{p}: the first request after the compaction lacks {missing}", file=sys.stderr)
            sys.exit(1)
        print(p)
        return
    print(f"{d}: no request after a compaction", file=sys.stderr)
    sys.exit(1)


if __name__ == "__main__":
    main()
