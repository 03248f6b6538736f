#!/usr/bin/env bash
# Memory of the read commands follows what a render holds, not what the ledger stores
# (docs/render.md "Memory"): a Claude Code session whose 1,000 Edit results each carry a 40 KB
# `toolUseResult` (the client's structured patch, stored in the node's metadata) but only a short
# tool_result text. render, context and tokens read the history's content, so their peak RSS
# (getrusage ru_maxrss of the child) stays under 64 MB, verify-invariants (one render at a time
# beside its bounded node cache) under 128 MB; holding every node's stored metadata (51 MB stored,
# 140-430 MB peak before) exceeds both. After `compact`, render and context of the compacted session
# stay under 64 MB as well. Memory is not noisy like time: each bound is 2.5x or more what is used
# (render 23 MB, context 19, tokens 23, verify 50, compacted render and context 13).
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is required"

python3 - "$WORK/s.jsonl" <<'PY'
import json, sys
out = open(sys.argv[1], "w")
base = {"isSidechain": False, "userType": "external", "cwd": "/tmp/proj", "sessionId": "mem-1",
        "version": "2.1.15", "gitBranch": ""}
prev = None
def line(kind, uuid, message, **extra):
    global prev
    rec = dict(base, parentUuid=prev, type=kind, message=message, uuid=uuid,
               timestamp="2026-01-01T00:%02d:%02d.000Z" % (len(uuid) % 60, 0), **extra)
    out.write(json.dumps(rec) + "\n")
    prev = uuid
patch = ["    line %04d of the edited file, unchanged context" % k for k in range(900)]
for i in range(1000):
    line("user", "u-%d" % i, {"role": "user", "content": "request %d: edit src/f%d.txt" % (i, i)})
    usage = {"input_tokens": 100 + 40 * i, "output_tokens": 20}
    line("assistant", "a-%d" % i, {"model": "claude-sonnet-4-5-20250929", "id": "msg_a%d" % i, "type": "message",
         "role": "assistant", "stop_reason": "tool_use", "usage": usage,
         "content": [{"type": "tool_use", "id": "toolu_%d" % i, "name": "Edit",
                      "input": {"file_path": "/tmp/proj/src/f%d.txt" % i, "old_string": "a", "new_string": "b"}}]},
         requestId="req_a%d" % i)
    line("user", "r-%d" % i, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_%d" % i,
         "content": "The file /tmp/proj/src/f%d.txt has been updated." % i}]},
         toolUseResult={"filePath": "/tmp/proj/src/f%d.txt" % i, "oldString": "a", "newString": "b",
                        "structuredPatch": [{"oldStart": 1, "oldLines": 900, "newStart": 1, "newLines": 900,
                                             "lines": patch}]},
         sourceToolAssistantUUID="a-%d" % i)
    line("assistant", "b-%d" % i, {"model": "claude-sonnet-4-5-20250929", "id": "msg_b%d" % i, "type": "message",
         "role": "assistant", "stop_reason": "end_turn", "usage": usage,
         "content": [{"type": "text", "text": "Edited src/f%d.txt." % i}]}, requestId="req_b%d" % i)
PY
db=$WORK/m.db
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$WORK/s.jsonl"

meta=$(sqlite3 "$db" "SELECT sum(length(metadata)) FROM nodes" 2>/dev/null || echo 0)
echo "stored metadata: $((meta / 1000000)) MB" >&2
check_peak "render" 64 "$CTXFOLD" --db "$db" render --format anthropic
check_peak "context" 64 "$CTXFOLD" --db "$db" context
check_peak "tokens" 64 "$CTXFOLD" --db "$db" tokens
check_peak "verify-invariants" 128 "$CTXFOLD" --db "$db" verify-invariants

expect_rc "compact" 0 "$CTXFOLD" --db "$db" compact --force --window 20000
expect_eq "compacted" compacted "$(jq -r .status "$WORK/out")"
check_peak "render (compacted)" 64 "$CTXFOLD" --db "$db" render --format anthropic
check_peak "context (compacted)" 64 "$CTXFOLD" --db "$db" context
finish
