#!/usr/bin/env bash
# Gemini CLI 0.61 JSON Lines chats found by `import --from gemini`: a session resumed (header
# written again, the whole history rewritten with $set.messages and a rebuilt "<id>_response"
# tool result) and compressed (a <state_snapshot> replacing the early turns) keeps every turn,
# the compression is a summary view node, and `render --format gemini --body` reads what the CLI
# would send next. The fixture is written here in the shape the real client writes.
source "$(dirname "$0")/lib.sh"
H=$WORK/home; chats=$H/.gemini/tmp/proj/chats; mkdir -p "$chats"
f=$chats/session-2026-12-01T09-00-5e55a1b2.jsonl
hdr='{"sessionId":"5e55a1b2-0000-4000-8000-000000000001","projectHash":"ab12","startTime":"2026-12-01T09:00:00.000Z","lastUpdated":"2026-12-01T09:00:00.000Z","kind":"main"}'
ctx='{"id":"ctx0","timestamp":"t","type":"user","content":[{"text":"<session_context>env</session_context>"}]}'
u1='{"id":"u1","timestamp":"t","type":"user","content":[{"text":"PROMPT one"}]}'
c1='{"id":"m1","timestamp":"t","type":"gemini","content":"","thoughts":[],"model":"gemini-2.5-flash","toolCalls":[{"id":"read_file__c1","name":"read_file","args":{"file_path":"a.txt"},"status":"success"}]}'
c1p='{"id":"m1","timestamp":"t","type":"gemini","content":[{"functionCall":{"id":"read_file__c1","name":"read_file","args":{"file_path":"a.txt"}}}]}'
r1='{"id":"r1","timestamp":"t","type":"user","content":[{"functionResponse":{"id":"read_file__c1","name":"read_file","response":{"output":"alpha"}}}]}'
r1s='{"id":"m1_response","timestamp":"t","type":"user","content":[{"functionResponse":{"id":"read_file__c1","name":"read_file","response":{"output":"alpha"}}}]}'
m2='{"id":"m2","timestamp":"t","type":"gemini","content":"REPLY one"}'
u3='{"id":"u3","timestamp":"t","type":"user","content":[{"text":"PROMPT two"}]}'
s1='{"id":"s1","timestamp":"t","type":"user","content":[{"text":"<state_snapshot>early work</state_snapshot>"}]}'
g1='{"id":"g1","timestamp":"t","type":"gemini","content":[{"text":"Got it. Thanks for the additional context!"}]}'
m3='{"id":"m3","timestamp":"t","type":"gemini","content":"REPLY two"}'
{
  echo "$hdr"; echo "{\"\$set\":{\"messages\":[$ctx]}}"; echo "$u1"; echo "$c1"; echo "$r1"; echo "$m2"
  echo "$hdr"; echo "{\"\$set\":{\"messages\":[$ctx,$u1,$c1p,$r1s,$r1,$m2]}}"
  echo "$u3"; echo "$s1"; echo "$g1"; echo "{\"\$set\":{\"messages\":[$ctx,$s1,$g1,$u3]}}"; echo "$m3"
} > "$f"
db=$WORK/g.db
C() { "$CTXFOLD" --db "$db" "$@"; }
expect_rc "import --from gemini finds the .jsonl chat" 0 env HOME="$H" "$CTXFOLD" --db "$db" import --from gemini
expect_eq "one file" "1" "$(jq .outcomes.new "$WORK/out")"
expect_eq "no warning" "0" "$(jq '.warnings | length' "$WORK/out")"
s=session-2026-12-01T09-00-5e55a1b2
expect_eq "every prompt and reply stored" "4" \
  "$(db_sql "$db" "select count(distinct json_extract(content,'\$[0].text')) from nodes where session='$s' and json_extract(content,'\$[0].text') in ('PROMPT one','REPLY one','PROMPT two','REPLY two')")"
expect_eq "the compression is a summary covering the turns it replaced" "summary 5 u1 m2~r2" \
  "$(db_sql "$db" "select kind||' '||covers_count||' '||covers_first||' '||covers_last from nodes where session='$s' and kind='summary'")"
expect_rc "render --format gemini --body" 0 C --session "$s" render --format gemini --body
expect_eq "the render reads context+snapshot, the ack, then the kept turns" \
  "user:<session_context>env</session_context>|<state_snapshot>early work</state_snapshot> model:Got it. Thanks for the additional context! user:PROMPT two model:REPLY two" \
  "$(jq -r '[.contents[] | .role + ":" + ([.parts[].text] | join("|"))] | join(" ")' "$WORK/out")"
expect_rc "render --format gemini (JSON) names its contents" 0 C --session "$s" render --format gemini
expect_eq "format gemini" "gemini 4" "$(jq -r '"\(.format) \(.contents | length)"' "$WORK/out")"
expect_rc "verify" 0 C verify-invariants --all-sessions
expect_rc "importing again adds nothing" 0 env HOME="$H" "$CTXFOLD" --db "$db" import --from all
expect_eq "unchanged" "0" "$(jq .outcomes.new "$WORK/out")"
finish
