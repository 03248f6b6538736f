#!/usr/bin/env bash
# verify-invariants on an uncompacted session holds its content about twice, not five times
# (docs/invariants.md "Memory", bench/README.md "Memory"): a Claude Code session of 1,200 turns
# whose prompts carry 32 KB of text each (38 MB of content, the whole history on HEAD's spine)
# verifies ok with a peak RSS (getrusage ru_maxrss of the child) under 150 MB. The figure counts
# the pages of the database file the database-wide checks read through a memory map (80 MB
# here: the file keeps each record's source besides its content). The render I5 and I10 read holds
# the content once (its messages; the items' content is moved into them, render/moved.hpp), next to
# one request body or document at a time, whose digests are computed as they are serialized.
# Holding the items and the messages, then a document and its serialized text beside them (the
# render verify made before), exceeds the bound: before 238 MB, after 104 MB.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is required"
command -v jq >/dev/null || skip "jq is required"

python3 - "$WORK/s.jsonl" <<'PY'
import json, random, sys
random.seed(11)
out = open(sys.argv[1], "w")
base = {"isSidechain": False, "userType": "external", "cwd": "/tmp/proj", "sessionId": "memver-1",
        "version": "2.1.15", "gitBranch": ""}
prev = None
def line(kind, uuid, message, **extra):
    global prev
    rec = dict(base, parentUuid=prev, type=kind, message=message, uuid=uuid,
               timestamp="2026-01-01T00:00:00.000Z", **extra)
    out.write(json.dumps(rec) + "\n")
    prev = uuid
vocab = ["alpha", "beta", "gamma", "delta", "render", "spine", "node", "summary", "fold", "tail", "x1", "y22"]
for i in range(1200):
    text = " ".join(random.choice(vocab) for _ in range(5400))  # ~32 KB
    line("user", "u-%d" % i, {"role": "user", "content": "prompt %d: %s" % (i, text)})
    usage = {"input_tokens": 3, "cache_read_input_tokens": 1000 + 9000 * i, "output_tokens": 20}
    line("assistant", "a-%d" % i, {"model": "claude-sonnet-4-5-20250929", "id": "msg_a%d" % i, "type": "message",
         "role": "assistant", "stop_reason": "tool_use", "usage": usage,
         "content": [{"type": "tool_use", "id": "toolu_%d" % i, "name": "Read",
                      "input": {"file_path": "/tmp/proj/f%d.txt" % i}}]},
         requestId="req_a%d" % i)
    line("user", "r-%d" % i, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_%d" % i,
         "content": "contents of f%d.txt" % i}]}, sourceToolAssistantUUID="a-%d" % i)
    line("assistant", "b-%d" % i, {"model": "claude-sonnet-4-5-20250929", "id": "msg_b%d" % i, "type": "message",
         "role": "assistant", "stop_reason": "end_turn", "usage": usage,
         "content": [{"type": "text", "text": "Read f%d.txt." % i}]}, requestId="req_b%d" % i)
PY
db=$WORK/m.db
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$WORK/s.jsonl"
rm -f "$WORK/s.jsonl"
echo "database file: $(($(stat -c %s "$db") / 1000000)) MB" >&2

check_peak "verify-invariants" 150 "$CTXFOLD" --db "$db" verify-invariants
expect_eq "verified ok" true "$(jq -r .ok "$WORK/peak.out")"
expect_eq "I5 and I10 checked" "true true" "$(jq -r '[.checks[] | select(.id == "I5" or .id == "I10") | .ok] | map(tostring) | join(" ")' "$WORK/peak.out")"
finish
