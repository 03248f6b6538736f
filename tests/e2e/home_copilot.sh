#!/usr/bin/env bash
# `import --from copilot` (docs/formats/copilot-cli.md): GitHub Copilot CLI's event logs under
# COPILOT_HOME (default ~/.copilot) are found, read as copilot, re-read incrementally when they
# grow, and their compaction, usage, sub-agent and shell commands reach `compactions`, `usage`,
# `sessions` and `commands`. The events are written here in the shape Copilot CLI 1.0.102 writes
# (tests/clients/copilot/ drives the real client).
source "$(dirname "$0")/lib.sh"
cd "$WORK"
ev() { # ev ID TYPE DATA [AGENT]
  local agent=""; [ -n "${4:-}" ] && agent=",\"agentId\":\"$4\""
  printf '{"type":"%s","data":%s,"id":"%s","timestamp":"2026-12-05T10:00:00Z","parentId":null%s}\n' "$2" "$3" "$1" "$agent"
}
H=$WORK/chome; S=$H/session-state/cs-1; mkdir -p "$S/checkpoints"
{
  ev e0 session.start '{"sessionId":"cs-1","copilotVersion":"1.0.102","context":{"cwd":"/p"}}'
  ev u1 user.message '{"content":"PROMPT one","transformedContent":"<current_datetime>x</current_datetime>\n\nPROMPT one"}'
  ev s1 system.message '{"role":"system","content":"You are the CLI."}'
  ev g1 session.usage_record '{"usage":{"model":"mock-model","inputTokens":1200,"outputTokens":30,"cacheReadTokens":1000,"cacheWriteTokens":0}}'
  ev a1 assistant.message '{"model":"mock-model","content":"","toolRequests":[{"toolCallId":"call_1","name":"bash","arguments":{"command":"echo hi","description":"d"}},{"toolCallId":"call_2","name":"task","arguments":{"prompt":"PROMPT sub"}}]}'
  ev x1 tool.execution_start '{"toolCallId":"call_1","toolName":"bash","arguments":{"command":"echo hi"}}'
  ev r1 tool.execution_complete '{"toolCallId":"call_1","success":true,"result":{"content":"hi\n<shellId: 0 completed with exit code 0>"},"shellExecution":{"exitCode":0}}'
  ev sa subagent.started '{"toolCallId":"call_2","agentName":"explore"}' ag1
  ev su user.message '{"content":"PROMPT sub"}' ag1
  ev sm assistant.message '{"content":"sub done","toolRequests":[],"parentToolCallId":"call_2"}' ag1
  ev r2 tool.execution_complete '{"toolCallId":"call_2","success":true,"result":{"content":"sub done"}}'
  ev a2 assistant.message '{"model":"mock-model","content":"said hi","toolRequests":[]}'
} > "$S/events.jsonl"
echo 'id: cs-1' > "$S/workspace.yaml"
echo '# summary' > "$S/checkpoints/index.md"
mkdir -p "$WORK/nohome"

expect_rc "import --from copilot under COPILOT_HOME" 0 env HOME="$WORK/nohome" COPILOT_HOME="$H" "$CTXFOLD" --db c.db import --from copilot
expect_eq "the root is COPILOT_HOME/session-state" "$H/session-state" "$(jq -r '.roots[0]' "$WORK/out")"
expect_eq "one file, new, the workspace and checkpoint files not taken" "new" "$(jq -r '[.files[] | .outcome] | join(",")' "$WORK/out")"
expect_eq "read as copilot" "copilot" "$(db_sql c.db "select format from sessions where id='cs-1'")"
expect_eq "seven nodes in two sessions, no warning" "7 2 0" \
  "$(db_sql c.db 'select count(*) from nodes') $(db_sql c.db 'select count(*) from sessions') $(jq '.warnings | length' "$WORK/out")"
expect_rc "sessions" 0 "$CTXFOLD" --db c.db sessions
expect_eq "the sub-agent is a sidechain of the session" "cs-1/agent-ag1 sidechain cs-1 a1" \
  "$(jq -r 'select(.type=="session" and .kind=="sidechain") | "\(.id) \(.kind) \(.parent_session) \(.parent_node)"' "$WORK/out")"

# The client resumes the session and compacts it: the log grows.
{
  ev k0 session.compaction_start '{"trigger":"manual"}'
  ev k1 session.compaction_complete '{"success":true,"summaryContent":"S","preCompactionTokens":1305,"postCompactionTokens":200,"tokenAccountingBasis":"local_full_context_estimate","trigger":"manual"}'
  ev u2 user.message '{"content":"PROMPT two"}'
  ev a3 assistant.message '{"model":"mock-model","content":"two","toolRequests":[]}'
} >> "$S/events.jsonl"
expect_rc "the grown log" 0 env HOME="$WORK/nohome" COPILOT_HOME="$H" "$CTXFOLD" --db c.db import --from copilot
outcome=$(jq -r '.files[0].outcome' "$WORK/out")
[ "$outcome" = appended ] || [ "$outcome" = rewritten ] && ok || fail "the grown log's outcome is '$outcome'"
expect_eq "three nodes more (a summary and a turn), nothing twice" "10 3" \
  "$(db_sql c.db 'select count(*) from nodes') $(jq '[.sessions[].nodes_added] | add' "$WORK/out")"
expect_eq "HEAD is the last reply" "a3" "$("$CTXFOLD" --db c.db --session cs-1 log | jq -r 'select(.type=="node") | .id' | head -1)"
expect_rc "render after the compaction" 0 "$CTXFOLD" --db c.db --session cs-1 render --format openai --body
expect_eq "the system prompt, the summary message, the turn" "system user user assistant" \
  "$(jq -r '[.messages[].role] | join(" ")' "$WORK/out")"
expect_eq "the summary message names the typed prompt and the summary" "true true" \
  "$(jq -r '.messages[1].content | [contains("<user_message>\nPROMPT one\n</user_message>"), contains("<summary>\nS\n</summary>")] | map(tostring) | join(" ")' "$WORK/out")"

# Without COPILOT_HOME the root is ~/.copilot.
mkdir -p "$WORK/h2/.copilot/session-state/cs-1" && cp "$S/events.jsonl" "$WORK/h2/.copilot/session-state/cs-1/"
expect_rc "the default home" 0 env -u COPILOT_HOME HOME="$WORK/h2" "$CTXFOLD" --db d.db import --from copilot
expect_eq "the root is ~/.copilot/session-state" "$WORK/h2/.copilot/session-state 1" \
  "$(jq -r '"\(.roots[0]) \(.files | length)"' "$WORK/out")"

expect_rc "compactions" 0 "$CTXFOLD" --db c.db --session cs-1 compactions
expect_eq "the compaction, its client's figures" "copilot manual 1305 estimated 200 estimated" \
  "$(jq -r 'select(.type=="compaction") | "\(.origin) \(.trigger) \(.tokens_before.tokens) \(.tokens_before.label) \(.tokens_after.tokens) \(.tokens_after.label)"' "$WORK/out")"
expect_rc "usage" 0 "$CTXFOLD" --db c.db usage
expect_eq "usage: input less cached, cache reads, output" "200 1000 30" \
  "$(jq -r 'select(.type=="usage" and .key=="cs-1") | .tokens | "\(.input) \(.cache_read) \(.output)"' "$WORK/out")"
expect_rc "commands" 0 "$CTXFOLD" --db c.db --session cs-1 commands
expect_eq "the shell command" "echo hi" "$(jq -r 'select(.type=="command") | .command' "$WORK/out")"
expect_rc "verify-invariants" 0 "$CTXFOLD" --db c.db verify-invariants
finish
