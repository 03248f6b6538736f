#!/usr/bin/env python3
"""Compares two render bodies item by item after the leading system run (the client's own).

Usage: writeback_items.py PROTOCOL SOURCE.json EXPORTED.json
PROTOCOL is anthropic or responses (tests/clients/mock/*.py reduce a body to neutral items:
role, kind, value). The leading items whose role is system or developer are left out of both
sides (a written-back session carries no system prompt: the client sends its own). Prints
"EQUAL TOTAL" and, on a difference, the first differing items on stderr; exit 1 when they differ.
"""
import importlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "mock"))


def items(protocol, path):
    with open(path) as f:
        body = json.load(f)
    its = importlib.import_module(protocol).to_items(body)
    k = 0
    while k < len(its) and its[k]["role"] in ("system", "developer"):
        k += 1
    return [(i["role"], i["kind"], i["value"]) for i in its[k:]]


def images(path):
    """The base64 payloads of every image in the body, in order (the items name only their type)."""
    out = []

    def walk(v):
        if isinstance(v, dict):
            if v.get("type") == "base64" and isinstance(v.get("data"), str):
                out.append(v["data"])
            elif isinstance(v.get("image_url"), str):
                out.append(v["image_url"])
            for w in v.values():
                walk(w)
        elif isinstance(v, list):
            for w in v:
                walk(w)
    with open(path) as f:
        walk(json.load(f))
    return out


def main():
    protocol, a, b = sys.argv[1], sys.argv[2], sys.argv[3]
    x, y = items(protocol, a), items(protocol, b)
    x += [("image", "data", d) for d in images(a)]
    y += [("image", "data", d) for d in images(b)]
    equal = sum(1 for p, q in zip(x, y) if p == q)
    print(equal, max(len(x), len(y)))
    if equal != max(len(x), len(y)):
        for n, (p, q) in enumerate(zip(x + [None] * (len(y) - len(x)), y + [None] * (len(x) - len(y)))):
            if p != q:
                print(f"item {n}: source {str(p)[:200]} / exported {str(q)[:200]}", file=sys.stderr)
                break
        sys.exit(1)


if __name__ == "__main__":
    main()
