#!/usr/bin/env bash
# Importing a compaction costs memory for what the summary covers, not a multiple of it
# (bench/README.md "Import memory, step 3"): two Claude Code histories of the same 50,000 short
# records, the second ending in a compact boundary and a summary that covers all of them. Writing
# that summary node holds its covered ids once (~80 bytes each); it used to build a JSON array of
# them and two copies of its text for the digest as well (~4x that). The peak RSS of the second
# import may exceed the first's by at most 8 MB (4.5 MB measured; 16-17 MB before). Two imports of
# ~5 MB of JSONL: a few seconds.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is required"

python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
base = {"isSidechain": False, "userType": "external", "cwd": "/tmp/proj", "sessionId": "sum-mem",
        "version": "2.1.15", "gitBranch": ""}
def rec(kind, uuid, parent, **extra):
    return json.dumps(dict(base, parentUuid=parent, type=kind, uuid=uuid,
                           timestamp="2026-01-01T00:00:00.000Z", **extra)) + "\n"
lines, prev = [], None
for i in range(25000):
    u = "%08x-0000-4000-8000-%012x" % (i, 2 * i)
    lines.append(rec("user", u, prev, message={"role": "user", "content": "question %d" % i}))
    a = "%08x-0000-4000-8000-%012x" % (i, 2 * i + 1)
    lines.append(rec("assistant", a, u, message={"id": "msg_%d" % i, "type": "message", "role": "assistant",
                                                 "model": "claude-sonnet-4-5-20250929", "stop_reason": "end_turn",
                                                 "content": [{"type": "text", "text": "answer %d" % i}]}))
    prev = a
open(work + "/plain.jsonl", "w").writelines(lines)
b = "ffffffff-0000-4000-8000-000000000001"
s = "ffffffff-0000-4000-8000-000000000002"
lines.append(rec("system", b, None, subtype="compact_boundary", content="Conversation compacted",
                 logicalParentUuid=prev, compactMetadata={"trigger": "auto", "preTokens": 1000000}))
lines.append(rec("user", s, b, isCompactSummary=True,
                 message={"role": "user", "content": "This session is being continued. Summary: questions."}))
open(work + "/compacted.jsonl", "w").writelines(lines)
PY

read -r plain rc < <(peak_kb "$CTXFOLD" --db "$WORK/p.db" import "$WORK/plain.jsonl")
expect_eq "plain import exit" 0 "$rc"
read -r compacted rc < <(peak_kb "$CTXFOLD" --db "$WORK/c.db" import "$WORK/compacted.jsonl")
expect_eq "compacted import exit" 0 "$rc"
expect_eq "covered ids" 50000 "$(db_sql "$WORK/c.db" "SELECT count(*) FROM covers" 2>/dev/null)"
extra=$(((compacted - plain) / 1024))
echo "peak RSS: plain $((plain / 1024)) MB, compacted $((compacted / 1024)) MB (+$extra MB)" >&2
if [ "$extra" -le 8 ]; then ok; else fail "the summary covering 50,000 nodes added $extra MB to the import's peak RSS (bound 8 MB)"; fi
finish
