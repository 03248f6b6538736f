#!/usr/bin/env bash
# `import --from cline` (docs/formats/cline.md): Cline's session files under CLINE_DATA_DIR (or
# CLINE_DIR, or ~/.cline) are found, read as cline (not as a generic Anthropic message array),
# with the session file's metadata, structured tool results kept whole, the sub-agent as a
# sidechain session, and a rewritten file re-read without duplicates. The files are written here
# in the shape Cline CLI 3.0.65 writes (tests/clients/cline/ drives the real client).
source "$(dirname "$0")/lib.sh"
cd "$WORK"
D=$WORK/cdata; S=$D/sessions/17_ab; mkdir -p "$S"
msgs() { # msgs EXTRA_MESSAGES
  cat <<JSON
{"version":1,"agent":"lead","sessionId":"17_ab","origin":{"source":"cli","mode":"user","sessionId":"17_ab"},"messages":[
{"id":"u1","role":"user","content":[{"type":"text","text":"<user_input mode=\"act\">PROMPT one</user_input>"}],"ts":1796496731790},
{"id":"a1","role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"run_commands","input":{"commands":["echo hi"]}}],"ts":1796496732833,"modelInfo":{"id":"mock-model","provider":"openai-compatible"},"metrics":{"inputTokens":1200,"outputTokens":30,"cacheReadTokens":1000,"cacheWriteTokens":0}},
{"id":"r1","role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","name":"run_commands","content":[{"query":"echo hi","result":"hi\n","success":true}]}],"ts":1796496733003},
{"id":"a2","role":"assistant","content":[{"type":"tool_use","id":"call_2","name":"spawn_agent","input":{"systemPrompt":"You read.","task":"PROMPT sub"}}],"ts":1796496733187},
{"id":"r2","role":"user","content":[{"type":"tool_result","tool_use_id":"call_2","name":"spawn_agent","content":"{\"text\":\"sub done\"}"}],"ts":1796496733275},
{"id":"a3","role":"assistant","content":[{"type":"text","text":"said hi"}],"ts":1796496733952}$1],
"system_prompt":"You are Cline."}
JSON
}
msgs "" > "$S/17_ab.messages.json"
echo '{"version":1,"session_id":"17_ab","provider":"openai-compatible","model":"mock-model","cwd":"/p","status":"completed","metadata":{"title":"PROMPT one"}}' > "$S/17_ab.json"
echo '{"version":1,"agent":"subagent","sessionId":"17_ab__agent_9","origin":{"source":"cli","mode":"subagent","parentThreadId":"17_ab"},"messages":[{"id":"s1","role":"user","content":[{"type":"text","text":"PROMPT sub"}]},{"id":"s2","role":"assistant","content":[{"type":"text","text":"sub done"}]}]}' > "$S/agent_9.messages.json"
mkdir -p "$WORK/nohome"

expect_rc "auto-detected as cline, not anthropic" 0 "$CTXFOLD" --db one.db import "$S/17_ab.messages.json"
expect_eq "format" "cline" "$(jq -r '.sessions[0].format' "$WORK/out")"
expect_rc "import --from cline under CLINE_DATA_DIR" 0 env HOME="$WORK/nohome" CLINE_DATA_DIR="$D" "$CTXFOLD" --db c.db import --from cline
expect_eq "the root is CLINE_DATA_DIR/sessions" "$D/sessions" "$(jq -r '.roots[0]' "$WORK/out")"
expect_eq "two messages files, the session file not taken" "new,new" "$(jq -r '[.files[] | .outcome] | join(",")' "$WORK/out")"
expect_eq "eight nodes in two sessions, no warning" "8 2 0" \
  "$(db_sql c.db 'select count(*) from nodes') $(db_sql c.db 'select count(*) from sessions') $(jq '.warnings | length' "$WORK/out")"
expect_rc "sessions" 0 "$CTXFOLD" --db c.db sessions
expect_eq "the sub-agent is a sidechain launched by the spawn_agent call" "17_ab__agent_9 sidechain 17_ab a2" \
  "$(jq -r 'select(.type=="session" and .kind=="sidechain") | "\(.id) \(.kind) \(.parent_session) \(.parent_node)"' "$WORK/out")"
expect_eq "the lead's model and project from its session file" "mock-model /p" \
  "$(jq -r 'select(.type=="session" and .id=="17_ab") | "\(.models | join(",")) \(.project)"' "$WORK/out")"
expect_rc "render" 0 "$CTXFOLD" --db c.db --session 17_ab render --format openai --body
expect_eq "system prompt first, the prompt unwrapped" "You are Cline.|PROMPT one" \
  "$(jq -r '"\(.messages[0].content)|\(.messages[1].content)"' "$WORK/out")"
expect_eq "the structured tool result as the client sends it" '[{"query":"echo hi","result":"hi\n","success":true}]' \
  "$(jq -r '.messages[3].content' "$WORK/out")"

# The client rewrites the file with a new turn: read again, nothing twice.
msgs ',{"id":"u2","role":"user","content":[{"type":"text","text":"<user_input mode=\"act\">PROMPT two</user_input>"}]},{"id":"a4","role":"assistant","content":[{"type":"text","text":"two"}]}' > "$S/17_ab.messages.json"
expect_rc "the rewritten file" 0 env HOME="$WORK/nohome" CLINE_DATA_DIR="$D" "$CTXFOLD" --db c.db import --from cline
expect_eq "two nodes more" "10 2" "$(db_sql c.db 'select count(*) from nodes') $(jq '[.sessions[].nodes_added] | add' "$WORK/out")"

# A compaction written beside the file after its last change (docs/formats/cline.md "Compaction"):
# the messages file is untouched, the import still reads it, and the state becomes a summary of
# what it replaced (u1, a1, r1), the copies of a2 and r2 after it staying those nodes.
cat > "$S/17_ab.compaction.json" <<'JSON'
{"version":1,"updated_at":"2026-12-05T21:40:05.840Z","source_message_count":5,"source_last_message_key":"id:r2","messages":[
{"role":"user","content":[{"type":"text","text":"Context summary:\n\nsaid hi, spawned a helper"}],"metadata":{"kind":"compaction_summary","tokensBefore":900}},
{"id":"a2","role":"assistant","content":[{"type":"tool_use","id":"call_2","name":"spawn_agent","input":{"systemPrompt":"You read.","task":"PROMPT sub"}}],"ts":1796496733187},
{"id":"r2","role":"user","content":[{"type":"tool_result","tool_use_id":"call_2","name":"spawn_agent","content":"{\"text\":\"sub done\"}"}],"ts":1796496733275}]}
JSON
expect_rc "the compaction state" 0 env HOME="$WORK/nohome" CLINE_DATA_DIR="$D" "$CTXFOLD" --db c.db import --from cline
expect_eq "the messages file is read again, one node more, no warning" "appended 1 0" \
  "$(jq -r '"\([.files[] | select(.path | endswith("17_ab.messages.json")) | .outcome][0]) \([.sessions[].nodes_added] | add) \(.warnings | length)"' "$WORK/out")"
expect_eq "a summary covering u1 a1 r1" "summary|u1,a1,r1" \
  "$(db_sql c.db "select n.kind, c.node_id from nodes n join covers c on c.summary_seq = n.seq where n.session = '17_ab' order by n.seq, c.pos" |
     awk -F'|' '{k[$1]; ids = ids (NR > 1 ? "," : "") $2} END {for (x in k) printf "%s|%s", x, ids}')"
expect_rc "render after the compaction" 0 "$CTXFOLD" --db c.db --session 17_ab render --format openai --body
expect_eq "system, the summary, then the copies and what followed" "system|user:Context summary:|assistant:call_2|tool|assistant|user|assistant" \
  "$(jq -r '[.messages[] | .role + (if .role == "user" and (.content | startswith("Context")) then ":Context summary:" elif .tool_calls then ":" + .tool_calls[0].id else "" end)] | join("|")' "$WORK/out")"
expect_rc "compactions" 0 "$CTXFOLD" --db c.db compactions
expect_eq "one compaction listed" "1" "$(jq -s '[.[] | select(.type == "compaction")] | length' "$WORK/out")"

# CLINE_DIR replaces ~/.cline; without either the root is ~/.cline/data/sessions.
mkdir -p "$WORK/cdir/data/sessions" "$WORK/h2/.cline/data/sessions"
expect_rc "CLINE_DIR" 0 env HOME="$WORK/nohome" CLINE_DIR="$WORK/cdir" "$CTXFOLD" --db r.db import --from cline
expect_eq "the root is CLINE_DIR/data/sessions" "$WORK/cdir/data/sessions" "$(jq -r '.roots[0]' "$WORK/out")"
expect_rc "the default home" 0 env HOME="$WORK/h2" "$CTXFOLD" --db r2.db import --from cline
expect_eq "the root is ~/.cline/data/sessions" "$WORK/h2/.cline/data/sessions" "$(jq -r '.roots[0]' "$WORK/out")"

expect_rc "usage" 0 "$CTXFOLD" --db c.db usage
expect_eq "usage: input less cached, cache reads, output" "200 1000 30" \
  "$(jq -r 'select(.type=="usage" and .key=="17_ab") | .tokens | "\(.input) \(.cache_read) \(.output)"' "$WORK/out")"
expect_rc "commands" 0 "$CTXFOLD" --db c.db commands
expect_eq "the command's outcome from its {query, result, success} record" "echo hi success" \
  "$(jq -r 'select(.type=="command") | "\(.command) \(.result)"' "$WORK/out")"
expect_rc "verify-invariants" 0 "$CTXFOLD" --db c.db verify-invariants
finish
