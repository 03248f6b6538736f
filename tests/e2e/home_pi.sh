#!/usr/bin/env bash
# `import --from pi` (docs/formats/pi.md): pi's session files under PI_CODING_AGENT_DIR (or
# PI_CODING_AGENT_SESSION_DIR, which wins) are found, read as pi, re-read incrementally when they
# grow; the entry tree's branches stay branches with the file's last entry as HEAD; a compaction
# is a summary view node; usage, compactions, commands and files read the sessions; detection
# claims a file only when its records fit pi's. The entries are written here in the shape pi
# 0.73.1 writes (tests/clients/pi/ drives the real client).
source "$(dirname "$0")/lib.sh"
cd "$WORK"
S=0a1b2c3d-0000-7000-8000-000000000001
ent() { # ent ID PARENT TYPE REST
  local p=null; [ -n "$2" ] && p="\"$2\""
  printf '{"type":"%s","id":"%s","parentId":%s,"timestamp":"2026-12-05T10:00:00.000Z",%s}\n' "$3" "$1" "$p" "$4"
}
msg() { ent "$1" "$2" message "\"message\":$3"; }
usage='"usage":{"input":1200,"output":30,"cacheRead":800,"cacheWrite":0,"totalTokens":2030,"cost":{"total":0}}'
A=$WORK/agent; F=$A/sessions/--p--; mkdir -p "$F"
{
  printf '{"type":"session","version":3,"id":"%s","timestamp":"2026-12-05T10:00:00.000Z","cwd":"/p"}\n' "$S"
  ent m0 "" model_change '"provider":"mock","modelId":"mock-model"'
  msg u1 m0 '{"role":"user","content":[{"type":"text","text":"PROMPT one"}],"timestamp":1}'
  msg a1 u1 '{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"echo hi"}},{"type":"toolCall","id":"call_2","name":"read","arguments":{"path":"notes.txt"}}],"api":"openai-completions","provider":"mock","model":"mock-model",'"$usage"',"stopReason":"toolUse","timestamp":2}'
  msg r1 a1 '{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{"type":"text","text":"hi\n"}],"isError":false,"timestamp":3}'
  msg r2 r1 '{"role":"toolResult","toolCallId":"call_2","toolName":"read","content":[{"type":"text","text":"alpha\n"}],"isError":false,"timestamp":4}'
  msg a2 r2 '{"role":"assistant","content":[{"type":"text","text":"REPLY one"}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":1300,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":1305},"stopReason":"stop","timestamp":5}'
  msg u2 a2 '{"role":"user","content":[{"type":"text","text":"PROMPT plan A"}],"timestamp":6}'
  msg a3 u2 '{"role":"assistant","content":[{"type":"text","text":"REPLY plan A"}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15},"stopReason":"stop","timestamp":7}'
  # /tree: back to the first reply, with a summary of the branch left behind.
  ent b1 a2 branch_summary '"fromId":"a3","summary":"plan A was tried"'
  msg u3 b1 '{"role":"user","content":[{"type":"text","text":"PROMPT plan B"}],"timestamp":8}'
  msg a4 u3 '{"role":"assistant","content":[{"type":"text","text":"REPLY plan B"}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":20,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":25},"stopReason":"stop","timestamp":9}'
} > "$F/2026-12-05T10-00-00-000Z_$S.jsonl"
mkdir -p "$WORK/nohome"

expect_rc "import --from pi under PI_CODING_AGENT_DIR" 0 env HOME="$WORK/nohome" PI_CODING_AGENT_DIR="$A" "$CTXFOLD" --db p.db import --from pi
expect_eq "the root is PI_CODING_AGENT_DIR/sessions" "$A/sessions" "$(jq -r '.roots[0]' "$WORK/out")"
expect_eq "one file, new" "new" "$(jq -r '[.files[] | .outcome] | join(",")' "$WORK/out")"
expect_eq "read as pi" "pi" "$(db_sql p.db "select format from sessions where id='$S'")"
expect_eq "ten nodes (the branch summary one of them), no warning" "10 0" \
  "$(db_sql p.db 'select count(*) from nodes') $(jq '.warnings | length' "$WORK/out")"
expect_eq "HEAD is the file's last entry" "$S:a4" "$("$CTXFOLD" --db p.db --session "$S" log | jq -r 'select(.type=="node") | .id' | head -1)"
expect_eq "HEAD's spine: plan B after the branch summary, plan A not on it" "a4 u3 b1 a2" \
  "$("$CTXFOLD" --db p.db --session "$S" log | jq -r 'select(.type=="node") | .id | sub(".*:"; "")' | head -4 | xargs)"
expect_eq "the branch left behind stays in the ledger, a branch off the first reply" "$S:a2" \
  "$(db_sql p.db "select predecessor from nodes where id='$S:u2'")"
expect_eq "the branch summary as pi sends it" "The following is a summary of a branch that this conversation came back from:" \
  "$(db_sql p.db "select json_extract(content,'\$[0].text') from nodes where id='$S:b1'" | head -1)"

# The client resumes on plan B and compacts: the file grows.
{
  ent c1 a4 compaction '"summary":"## Goal\nthe facts","firstKeptEntryId":"u3","tokensBefore":25,"details":{"readFiles":[],"modifiedFiles":[]},"fromHook":false'
  msg u4 c1 '{"role":"user","content":[{"type":"text","text":"PROMPT two"}],"timestamp":10}'
  msg a5 u4 '{"role":"assistant","content":[{"type":"text","text":"REPLY two"}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":30,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":35},"stopReason":"stop","timestamp":11}'
} >> "$F/2026-12-05T10-00-00-000Z_$S.jsonl"
expect_rc "the grown file" 0 env HOME="$WORK/nohome" PI_CODING_AGENT_DIR="$A" "$CTXFOLD" --db p.db import --from pi
outcome=$(jq -r '.files[0].outcome' "$WORK/out")
[ "$outcome" = appended ] || [ "$outcome" = rewritten ] && ok || fail "the grown file's outcome is '$outcome'"
expect_eq "three nodes more (a summary and a turn), nothing twice" "13 3" \
  "$(db_sql p.db 'select count(*) from nodes') $(jq '.sessions[0].nodes_added' "$WORK/out")"
expect_eq "the summary covers HEAD's path before firstKeptEntryId" "u1 a1 r1 r2 a2 b1" \
  "$(db_sql p.db "select n.id from covers c join nodes s on s.seq=c.summary_seq join nodes n on n.id=c.node_id where s.id='$S:c1' order by c.pos" | sed 's/.*://' | xargs)"
expect_rc "render" 0 "$CTXFOLD" --db p.db --session "$S" render --format openai --body
expect_eq "the render: the summary, then the kept turn and the new one" "user:The conversation history before this point was compacted into the following summary: user:PROMPT plan B assistant:REPLY plan B user:PROMPT two assistant:REPLY two" \
  "$(jq -r '.messages[] | "\(.role):\(if (.content|type)=="string" then .content else .content[0].text end | split("\n")[0])"' "$WORK/out" | xargs -d '\n')"

# PI_CODING_AGENT_SESSION_DIR wins over PI_CODING_AGENT_DIR.
mkdir -p "$WORK/sd"
expect_rc "PI_CODING_AGENT_SESSION_DIR" 0 env HOME="$WORK/nohome" PI_CODING_AGENT_DIR="$A" PI_CODING_AGENT_SESSION_DIR="$WORK/sd" "$CTXFOLD" --db s.db import --from pi
expect_eq "the root is PI_CODING_AGENT_SESSION_DIR" "$WORK/sd" "$(jq -r '.roots[0]' "$WORK/out")"
mkdir -p "$WORK/nohome/.pi/agent/sessions"
expect_rc "the default home" 0 env HOME="$WORK/nohome" "$CTXFOLD" --db h.db import --from pi
expect_eq "the root is ~/.pi/agent/sessions" "$WORK/nohome/.pi/agent/sessions" "$(jq -r '.roots[0]' "$WORK/out")"

expect_rc "compactions" 0 "$CTXFOLD" --db p.db --session "$S" compactions
expect_eq "the compaction, its client's figure (the usage of the reply before it)" "pi 25 measured 6" \
  "$(jq -r 'select(.type=="compaction") | "\(.origin) \(.tokens_before.tokens) \(.tokens_before.label) \(.covers.count)"' "$WORK/out")"
expect_rc "usage" 0 "$CTXFOLD" --db p.db usage
expect_eq "usage: input, cache reads, output summed over the five replies" "2560 800 50" \
  "$(jq -r "select(.type==\"usage\" and .key==\"$S\") | .tokens | \"\(.input) \(.cache_read) \(.output)\"" "$WORK/out")"
expect_rc "commands" 0 "$CTXFOLD" --db p.db --session "$S" commands
expect_eq "the shell command" "echo hi success" "$(jq -r 'select(.type=="command") | "\(.command) \(.result)"' "$WORK/out")"
expect_rc "files" 0 "$CTXFOLD" --db p.db --session "$S" files
expect_eq "the file read" "read notes.txt" "$(jq -r 'select(.type=="file") | "\(.action) \(.path_as_written)"' "$WORK/out")"

# Detection: pi's envelope is claimed only when the content fits; an empty record is a warning.
hdr() { printf '{"type":"session","version":3,"id":"%s","timestamp":"2026-12-05T10:00:00.000Z","cwd":"/p"}\n' "$1"; }
{ hdr d1; msg u1 "" '{"role":"user","content":"hello"}'; } > fits.jsonl
expect_rc "a pi file is detected" 0 "$CTXFOLD" --db d.db import fits.jsonl
expect_eq "as pi" "pi" "$(jq -r '.sessions[0].format' "$WORK/out")"
{ hdr d2; msg u1 "" '{"role":"user","content":"hello"}'; msg a1 u1 '{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"x","input":{}}]}'; } > misfit.jsonl
expect_rc "a block pi never writes" 3 "$CTXFOLD" --db m.db import misfit.jsonl
grep -q "misfit.jsonl:3: .*content block type 'tool_use' is not one pi writes" "$WORK/err" && ok || fail "no file:line and reason: $(cat "$WORK/err")"
expect_eq "nothing written" "0" "$(db_sql m.db 'select count(*) from nodes' 2>/dev/null || echo 0)"
{ hdr d3; msg u1 "" '{"role":"model","parts":[{"text":"hi"}]}'; } > role.jsonl
expect_rc "a role pi never writes" 3 "$CTXFOLD" --db r.db import role.jsonl
grep -q "role.jsonl:2: .*message role 'model' is not one pi writes" "$WORK/err" && ok || fail "no file:line and reason: $(cat "$WORK/err")"
{ hdr d4; msg u1 "" '{"role":"user","content":[]}'; } > empty.jsonl
expect_rc "an empty message" 0 "$CTXFOLD" --db e.db import empty.jsonl
expect_eq "node.empty at empty.jsonl:2" "empty.jsonl 2" \
  "$(jq -r '.warnings[] | select(.code=="node.empty") | "\(.file) \(.line)"' "$WORK/out")"
finish
