#!/usr/bin/env bash
# `tokens` holds figures, not the history (docs/render.md "Memory", bench/README.md "Memory"): on a
# Claude Code session of 1,200 turns whose prompts carry 32 KB of text each (38 MB of content), raw
# and after `compact`, its peak RSS (getrusage ru_maxrss of the child) stays under 64 MB. Rendering
# the context of the last request before the first compaction whole (the whole history, which the
# table did before figures-only renders) holds the 38 MB of content at least twice (the items and
# their messages) and exceeds it (before: 95-99 MB raw and compacted; figures-only: 15-19 MB). The
# table itself is checked too: one row per measured response, the same before and after the
# walk reads it in figures (tests/unit/render/figures_test.cpp pins the values).
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is required"
command -v jq >/dev/null || skip "jq is required"

python3 - "$WORK/s.jsonl" <<'PY'
import json, random, sys
random.seed(7)
out = open(sys.argv[1], "w")
base = {"isSidechain": False, "userType": "external", "cwd": "/tmp/proj", "sessionId": "memtok-1",
        "version": "2.1.15", "gitBranch": ""}
prev = None
def line(kind, uuid, message, **extra):
    global prev
    rec = dict(base, parentUuid=prev, type=kind, message=message, uuid=uuid,
               timestamp="2026-01-01T00:00:00.000Z", **extra)
    out.write(json.dumps(rec) + "\n")
    prev = uuid
vocab = ["alpha", "beta", "gamma", "delta", "render", "spine", "node", "summary", "fold", "tail", "x1", "y22"]
measured = 1000
for i in range(1200):
    text = " ".join(random.choice(vocab) for _ in range(5400))  # ~32 KB
    line("user", "u-%d" % i, {"role": "user", "content": "prompt %d: %s" % (i, text)})
    measured += 9000
    usage = {"input_tokens": 3, "cache_read_input_tokens": measured, "output_tokens": 20}
    line("assistant", "a-%d" % i, {"model": "claude-sonnet-4-5-20250929", "id": "msg_a%d" % i, "type": "message",
         "role": "assistant", "stop_reason": "tool_use", "usage": usage,
         "content": [{"type": "tool_use", "id": "toolu_%d" % i, "name": "Edit",
                      "input": {"file_path": "/tmp/proj/f%d.txt" % i, "old_string": "a", "new_string": "b"}}]},
         requestId="req_a%d" % i)
    line("user", "r-%d" % i, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_%d" % i,
         "content": "The file /tmp/proj/f%d.txt has been updated." % i}]}, sourceToolAssistantUUID="a-%d" % i)
    measured += 60
    usage = dict(usage, cache_read_input_tokens=measured)
    line("assistant", "b-%d" % i, {"model": "claude-sonnet-4-5-20250929", "id": "msg_b%d" % i, "type": "message",
         "role": "assistant", "stop_reason": "end_turn", "usage": usage,
         "content": [{"type": "text", "text": "Edited f%d.txt." % i}]}, requestId="req_b%d" % i)
PY
db=$WORK/m.db
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$WORK/s.jsonl"

check_peak "tokens" 64 "$CTXFOLD" --db "$db" tokens --min-growth 0
expect_eq "one row per measured response" 2400 "$(jq '.requests | length' "$WORK/peak.out")"
expect_eq "one edit result in each prompt's turn" 1200 "$(jq '[.pairs[] | .edits] | add' "$WORK/peak.out")"
check_peak "tokens --text" 64 "$CTXFOLD" --db "$db" --text tokens
expect_eq "text rows" 2400 "$(grep -c '^b-\|^a-' "$WORK/peak.out")"

# One pass: it stops partial (the summarizer-call limit) but writes its summary.
"$CTXFOLD" --db "$db" compact --force --window 200000 > "$WORK/out" 2>/dev/null
case "$(jq -r .status "$WORK/out")" in compacted | partial) ok ;; *) fail "compact: $(head -c 300 "$WORK/out")" ;; esac
check_peak "tokens (compacted)" 64 "$CTXFOLD" --db "$db" tokens
expect_eq "rows after compact" 2400 "$(jq '.requests | length' "$WORK/peak.out")"
finish
