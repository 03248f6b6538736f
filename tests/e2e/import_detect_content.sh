#!/usr/bin/env bash
# Detection never guesses silently (docs/import.md "Detection"): Claude Code's record envelope
# (uuid, parentUuid, sessionId, type) claims a file only when the records' content fits. Records
# holding Gemini-style parts in that envelope (Qwen Code's shape) are never imported as Claude
# Code; a file whose records fit two formats, or none, is exit 3 naming the file, the line and
# the reason, with nothing written; a record that converts to an empty node is a warning with its
# file and line.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
env='"uuid":"%s","parentUuid":%s,"sessionId":"s1","timestamp":"2026-01-01T00:00:00Z"'
rec() { # rec UUID PARENT TYPE MESSAGE
  printf "{$env,\"type\":\"%s\",\"message\":%s}\n" "$1" "$2" "$3" "$4"
}
{
  rec u1 null user '{"role":"user","parts":[{"text":"hello"}]}'
  rec a1 '"u1"' assistant '{"role":"model","parts":[{"text":"hi there"}]}'
} > parts.jsonl
{
  rec u1 null user '{"role":"user","content":"hello"}'
  rec a1 '"u1"' assistant '{"role":"model","parts":[{"text":"hi there"}]}'
} > both.jsonl
{
  rec u1 null user '{"role":"user"}'
  rec a1 '"u1"' assistant '{"role":"assistant"}'
} > none.jsonl

"$CTXFOLD" --db p.db import parts.jsonl > p.out 2> p.err
fmt=$(jq -r '.sessions[0].format // empty' p.out 2>/dev/null)
[ "$fmt" != "claude-code" ] && ok || fail "records with parts were imported as claude-code: $(cat p.out)"

expect_rc "records fitting two formats" 3 "$CTXFOLD" --db b.db import both.jsonl
grep -q "both.jsonl:2: records fit two formats" "$WORK/err" && ok || fail "no file:line and reason: $(cat "$WORK/err")"
expect_eq "nothing written" "0" "$(db_sql b.db 'select count(*) from nodes' 2>/dev/null || echo 0)"

expect_rc "records fitting no format" 3 "$CTXFOLD" --db n.db import none.jsonl
grep -q "none.jsonl:1: .*neither content nor parts" "$WORK/err" && ok || fail "no file:line and reason: $(cat "$WORK/err")"

# Forced through the Claude Code importer, the parts record converts to an empty node: warned.
expect_rc "forced import" 0 "$CTXFOLD" --db f.db import --format claude-code both.jsonl
expect_eq "the empty node is a warning at both.jsonl:2" "both.jsonl 2" \
  "$(jq -r '.warnings[] | select(.code=="node.empty") | "\(.file) \(.line)"' "$WORK/out")"
grep -q "^ctxfold: warning: both.jsonl:2: .*(node.empty)" "$WORK/err" && ok || fail "no warning on stderr: $(cat "$WORK/err")"
expect_rc "--strict refuses it" 3 "$CTXFOLD" --db g.db import --strict --format claude-code both.jsonl
finish
