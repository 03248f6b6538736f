#!/usr/bin/env python3
"""Checks the mock's recorded requests after Claude Code called ctxfold's grep over MCP.

Usage: check_request.py RECORD_DIR HIT_ID SUMMARY_ID
Finds the first main-agent request whose messages hold the answer to the mcp__ctxfold__grep call
(a tool_result whose tool_use_id is that call's id) and checks the result's text starts with
ctxfold's grep document (Claude Code may append a <system-reminder> of its own) naming the hit HIT_ID covered by SUMMARY_ID, and that the request's tools list offered
mcp__ctxfold__grep with its input schema. Prints what it found; exit 1 on the first failed check.
"""
import glob
import json
import os
import sys


def text_of(content):
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def main():
    rec_dir, hit, summary = sys.argv[1:4]
    for path in sorted(glob.glob(os.path.join(rec_dir, "*.json"))):
        with open(path) as f:
            rec = json.load(f)
        body = rec.get("body") or {}
        if not rec.get("main") or not isinstance(body, dict):
            continue
        calls = {}
        for m in body.get("messages") or []:
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                if b.get("type") == "tool_use" and b.get("name") == "mcp__ctxfold__grep":
                    calls[b["id"]] = b
                if b.get("type") == "tool_result" and b.get("tool_use_id") in calls:
                    text = text_of(b.get("content"))
                    tools = {t.get("name"): t for t in body.get("tools") or []}
                    problems = []
                    if b.get("is_error"):
                        problems.append("the tool result is an error: " + text[:300])
                    try:  # the document leads; Claude Code may append a <system-reminder> after it
                        doc = json.JSONDecoder().raw_decode(text.lstrip())[0]
                    except ValueError:
                        doc = None
                        problems.append("the tool result is not ctxfold's JSON document: " + text[:300])
                    if doc is not None:
                        ids = [(x.get("id"), x.get("covered_by")) for x in doc.get("matches", [])]
                        if (hit, summary) not in ids:
                            problems.append("the hit %s covered by %s is not in %s" % (hit, summary, ids))
                    grep = tools.get("mcp__ctxfold__grep")
                    if not grep:
                        problems.append("the request's tools do not offer mcp__ctxfold__grep: %s" % sorted(tools))
                    elif (grep.get("input_schema") or {}).get("required") != ["pattern"]:
                        problems.append("mcp__ctxfold__grep's schema is not ctxfold's: %s" % grep.get("input_schema"))
                    print("%s: tool_result for %s: %s" % (os.path.basename(path), b["tool_use_id"], text[:200]))
                    for p in problems:
                        print("FAIL: " + p, file=sys.stderr)
                    sys.exit(1 if problems else 0)
    print("FAIL: no recorded request answers an mcp__ctxfold__grep call", file=sys.stderr)
    sys.exit(1)


if __name__ == "__main__":
    main()
