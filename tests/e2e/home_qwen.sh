#!/usr/bin/env bash
# `import --from qwen` (docs/formats/qwen-code.md): Qwen Code's chats under QWEN_HOME (or
# QWEN_RUNTIME_DIR, which wins) are found, read as qwen, re-read incrementally when they grow, and
# their compression, usage and shell commands reach `compactions`, `usage` and `commands`. The
# records are written here in the shape Qwen Code 0.24.4 writes (tests/clients/qwen/ drives the
# real client).
source "$(dirname "$0")/lib.sh"
cd "$WORK"
rec() { # rec UUID PARENT TYPE REST
  local p=null; [ -n "$2" ] && p="\"$2\""
  printf '{"uuid":"%s","parentUuid":%s,"sessionId":"q-1","timestamp":"2026-12-05T10:00:00Z","type":"%s","cwd":"/p","version":"0.24.4",%s}\n' \
    "$1" "$p" "$3" "$4"
}
Q=$WORK/qhome; C=$Q/projects/-p/chats; mkdir -p "$C"
{
  rec u1 "" user '"message":{"role":"user","parts":[{"text":"PROMPT one"}]}'
  rec t1 u1 system '"subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_response"}}'
  rec a1 t1 assistant '"model":"mock-model","message":{"role":"model","parts":[{"functionCall":{"id":"call_1","name":"run_shell_command","args":{"command":"echo hi"}}}]},"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":30,"thoughtsTokenCount":0,"totalTokenCount":1230,"cachedContentTokenCount":0}'
  rec r1 a1 tool_result '"message":{"role":"user","parts":[{"functionResponse":{"id":"call_1","name":"run_shell_command","response":{"output":"Command: echo hi\nOutput: hi\nExit Code: 0"}}}]}'
  rec a2 r1 assistant '"model":"mock-model","message":{"role":"model","parts":[{"text":"said hi"}]},"usageMetadata":{"promptTokenCount":1300,"candidatesTokenCount":5,"totalTokenCount":1305,"cachedContentTokenCount":1000}'
} > "$C/q-1.jsonl"
echo '{"status":"idle"}' > "$C/q-1.runtime.json"
mkdir -p "$WORK/nohome"

expect_rc "import --from qwen under QWEN_HOME" 0 env HOME="$WORK/nohome" QWEN_HOME="$Q" "$CTXFOLD" --db q.db import --from qwen
expect_eq "the root is QWEN_HOME/projects" "$Q/projects" "$(jq -r '.roots[0]' "$WORK/out")"
expect_eq "one file, new, the status file not taken" "new" "$(jq -r '[.files[] | .outcome] | join(",")' "$WORK/out")"
expect_eq "read as qwen" "qwen" "$(db_sql q.db "select format from sessions where id='q-1'")"
expect_eq "four nodes, no warning" "4 0" "$(db_sql q.db 'select count(*) from nodes') $(jq '.warnings | length' "$WORK/out")"

# The client resumes the session and compresses it: the file grows.
{
  rec c1 a2 system '"subtype":"chat_compression","systemPayload":{"info":{"originalTokenCount":1305,"newTokenCount":200,"newTokenCountIsEstimated":true,"originalTokenCountIsEstimated":false,"triggerReason":"manual"},"compressedHistory":[{"role":"user","parts":[{"text":"<state_snapshot>s</state_snapshot>"}]},{"role":"model","parts":[{"text":"Got it."}]}]}'
  rec u2 c1 user '"message":{"role":"user","parts":[{"text":"PROMPT two"}]}'
  rec a3 u2 assistant '"model":"mock-model","message":{"role":"model","parts":[{"text":"two"}]}'
} >> "$C/q-1.jsonl"
expect_rc "the grown file" 0 env HOME="$WORK/nohome" QWEN_HOME="$Q" "$CTXFOLD" --db q.db import --from qwen
outcome=$(jq -r '.files[0].outcome' "$WORK/out")
[ "$outcome" = appended ] || [ "$outcome" = rewritten ] && ok || fail "the grown file's outcome is '$outcome'"
expect_eq "three nodes more (a summary and a turn), nothing twice" "7 3" \
  "$(db_sql q.db 'select count(*) from nodes') $(jq '.sessions[0].nodes_added' "$WORK/out")"
expect_eq "HEAD is the last reply" "a3" "$("$CTXFOLD" --db q.db --session q-1 log | jq -r 'select(.type=="node") | .id' | head -1)"

# QWEN_RUNTIME_DIR wins over QWEN_HOME.
mkdir -p "$WORK/rt/projects"
expect_rc "QWEN_RUNTIME_DIR" 0 env HOME="$WORK/nohome" QWEN_HOME="$Q" QWEN_RUNTIME_DIR="$WORK/rt" "$CTXFOLD" --db r.db import --from qwen
expect_eq "the root is QWEN_RUNTIME_DIR/projects" "$WORK/rt/projects" "$(jq -r '.roots[0]' "$WORK/out")"

expect_rc "compactions" 0 "$CTXFOLD" --db q.db --session q-1 compactions
expect_eq "the compression, its client's figures" "qwen manual 1305 measured 200 estimated" \
  "$(jq -r 'select(.type=="compaction") | "\(.origin) \(.trigger) \(.tokens_before.tokens) \(.tokens_before.label) \(.tokens_after.tokens) \(.tokens_after.label)"' "$WORK/out")"
expect_rc "usage" 0 "$CTXFOLD" --db q.db usage
expect_eq "usage: input less cached, cache reads, output" "1500 1000 35" \
  "$(jq -r 'select(.type=="usage" and .key=="q-1") | .tokens | "\(.input) \(.cache_read) \(.output)"' "$WORK/out")"
expect_rc "commands" 0 "$CTXFOLD" --db q.db --session q-1 commands
expect_eq "the shell command and its exit code" "echo hi 0" \
  "$(jq -r 'select(.type=="command") | "\(.command) \(.exit_code)"' "$WORK/out")"
finish
