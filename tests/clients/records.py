#!/usr/bin/env python3
"""Reads the mock server's request records (DIR/NNNN.json, see mock/server.py).

  records.py last-main DIR         the path of the newest main-agent request
  records.py main DIR              the paths of every main-agent request, oldest first
  records.py after DIR MARKER      the first main-agent request whose body contains MARKER
"""
import glob
import json
import os
import sys


def mains(d):
    out = []
    for p in sorted(glob.glob(os.path.join(d, "*.json"))):
        with open(p) as f:
            rec = json.load(f)
        if rec.get("main"):
            out.append((p, rec))
    return out


def main():
    cmd, d = sys.argv[1], sys.argv[2]
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
    else:
        sys.exit("usage: records.py last-main|main|after DIR [MARKER]")


if __name__ == "__main__":
    main()
