#!/usr/bin/env python3
"""Prints the conformance figures and fails on any difference the allow-list does not explain.

Usage: report.py [--results DIR] [--client NAME]... [--json]
Reads DIR/CLIENT.jsonl (one comparison record per line, written by lib.sh's compare_to) and
ALLOWLIST beside this file. For each client prints
  CLIENT VERSION: EQUAL/TOTAL request items equal (P%), A allow-listed, U unexplained, in N checkpoints
and, for each unexplained difference, one line naming its scenario, checkpoint and item.
Exit 0 when every difference is allow-listed and at least one checkpoint was compared; 1 otherwise.
"""
import argparse
import fnmatch
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGES = {"claude-code": "@anthropic-ai/claude-code-linux-x64", "codex": "@openai/codex",
            "gemini": "@google/gemini-cli", "qwen": "@qwen-code/qwen-code", "pi": "@mariozechner/pi-coding-agent",
            "copilot": "@github/copilot", "cline": "cline",
            "opencode": "opencode-ai", "kilo": "@kilocode/cli",
            # the write-back suite (writeback/run.sh) keeps its results apart from the clients' own
            "writeback-claude-code": "@anthropic-ai/claude-code-linux-x64", "writeback-codex": "@openai/codex"}


def load_allowlist(path):
    entries = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                e = json.loads(line)
            except ValueError as err:
                sys.exit("%s:%d: not JSON: %s" % (path, n, err))
            if "client" not in e or not e.get("reason"):
                sys.exit("%s:%d: an entry needs a client and a reason" % (path, n))
            e["_line"] = n
            entries.append(e)
    return entries


def allowed(entry, rec, d):
    if entry["client"] != rec["client"]:
        return False
    for field, have in (("scenario", rec["scenario"]), ("checkpoint", rec["checkpoint"])):
        if field in entry and not fnmatch.fnmatchcase(have, entry[field]):
            return False
    for field in ("op", "role", "kind"):
        if field in entry and entry[field] != d[field]:
            return False
    if "value" in entry and not re.search(entry["value"], d["value"] or "", re.S):
        return False
    return True


def version(client):
    pkg = os.path.join(HERE, "node_modules", PACKAGES.get(client, client), "package.json")
    try:
        with open(pkg) as f:
            return json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        return "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", default=os.environ.get("CTXFOLD_CLIENTS_RESULTS", os.path.join(HERE, "results")))
    ap.add_argument("--client", action="append")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    allow = load_allowlist(os.path.join(HERE, "ALLOWLIST"))
    clients = a.client or sorted(os.path.basename(p)[:-6] for p in glob.glob(os.path.join(a.results, "*.jsonl")))
    ok = bool(clients)
    summary = []
    for c in clients:
        path = os.path.join(a.results, c + ".jsonl")
        recs = []
        if os.path.exists(path):
            with open(path) as f:
                recs = [json.loads(l) for l in f if l.strip()]
        equal = sum(r["equal"] for r in recs)
        total = sum(r["total"] for r in recs)
        n_allowed, unexplained = 0, []
        for r in recs:
            for d in r["diffs"]:
                if any(allowed(e, r, d) for e in allow):
                    n_allowed += 1
                else:
                    unexplained.append((r, d))
        pct = 100.0 * equal / total if total else 0.0
        print("%s %s: %d/%d request items equal (%.1f%%), %d allow-listed, %d unexplained, in %d checkpoints"
              % (c, version(c), equal, total, pct, n_allowed, len(unexplained), len(recs)))
        for r, d in unexplained[:200]:
            v = (d["value"] or "").replace("\n", "\\n")
            print("  %s/%s: %s %s %s #%d %r" % (r["scenario"], r["checkpoint"], d["op"], d["role"],
                                               d["kind"], d["at"], v[:160]))
        if not recs or unexplained:
            ok = False
        summary.append({"client": c, "version": version(c), "equal": equal, "total": total,
                        "allow_listed": n_allowed, "unexplained": len(unexplained), "checkpoints": len(recs)})
    if a.json:
        json.dump(summary, sys.stdout)
        print()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
