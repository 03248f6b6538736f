#!/usr/bin/env bash
# `tokens --client-requests`: where a Claude Code transcript records the requests it sent
# (api-request + api-request-blob records), each is rebuilt and compared with the render at the
# node it was sent from; equal requests exit 0, a difference exits 1 and is listed.
source "$(dirname "$0")/lib.sh"

# transcript FILE LAST_USER_TEXT_ON_THE_WIRE: a two-turn session; the second request's recorded
# user message says $2 while the transcript's record says "more".
transcript() {
  cat > "$1" <<JSONL
{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}
{"type":"attachment","uuid":"a1","parentUuid":"u1","sessionId":"s","attachment":{"type":"date"},"rendered":[{"content":"<system-reminder>\ndate\n</system-reminder>"}],"renderedRole":"system"}
{"type":"api-request-shape","sessionId":"s","shapeHash":"h1","shape":{"system":[{"type":"text","text":"You are an agent."}],"tools":[]}}
{"type":"api-request-blob","sessionId":"s","hash":"b1","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>\ndate\n</system-reminder>\n"},{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}}
{"type":"api-request","sessionId":"s","id":"r1","shapeHash":"h1","keep":0,"tail":["b1"]}
{"type":"assistant","uuid":"m1","parentUuid":"a1","sessionId":"s","requestRef":"r1","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"hello"}]}}
{"type":"user","uuid":"u2","parentUuid":"m1","sessionId":"s","message":{"role":"user","content":"more"}}
{"type":"api-request-blob","sessionId":"s","hash":"b2","message":{"role":"user","content":[{"type":"text","text":"$2"}]}}
{"type":"api-request","sessionId":"s","id":"r2","shapeHash":"h1","keep":1,"tail":["ah","b2"]}
{"type":"assistant","uuid":"m2","parentUuid":"u2","sessionId":"s","requestRef":"r2","message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"sure"}]}}
JSONL
}

transcript "$WORK/same.jsonl" more
"$CTXFOLD" --db "$WORK/a.db" import "$WORK/same.jsonl" >/dev/null 2>&1 || fail "import same.jsonl"
expect_rc "equal requests exit 0" 0 "$CTXFOLD" --db "$WORK/a.db" tokens --client-requests
expect_eq "schema" "ctxfold.tokens.client_requests/1" "$(jq -r .schema "$WORK/out")"
expect_eq "two requests" "2" "$(jq '.summary.requests' "$WORK/out")"
expect_eq "three user messages compared (the assistant one has no body)" "3" "$(jq '.summary.compared' "$WORK/out")"
expect_eq "all equal" "3" "$(jq '.summary.equal' "$WORK/out")"
expect_eq "request 2 rendered at u2" "u2" "$(jq -r '.requests[1].head' "$WORK/out")"
expect_eq "request 2 has 3 messages" "3" "$(jq '.requests[1].messages' "$WORK/out")"

transcript "$WORK/differs.jsonl" "more, and a reminder the transcript lacks"
"$CTXFOLD" --db "$WORK/b.db" import "$WORK/differs.jsonl" >/dev/null 2>&1 || fail "import differs.jsonl"
expect_rc "a differing request exits 1" 1 "$CTXFOLD" --db "$WORK/b.db" tokens --client-requests
expect_eq "one request differs" "1" "$(jq '.summary.differing_requests' "$WORK/out")"
expect_eq "the difference names message 2, block 0" "2 0" "$(jq -r '.requests[1].differences[0] | "\(.message) \(.block)"' "$WORK/out")"
expect_eq "both sides are listed" "more, and a reminder the transcript lacks|more" \
  "$(jq -r '.requests[1].differences[0] | "\(.recorded.text)|\(.rendered.text)"' "$WORK/out")"
expect_rc "text view" 1 "$CTXFOLD" --db "$WORK/b.db" tokens --client-requests --text
grep -q "1 requests differ" "$WORK/out" && ok || fail "text view names the differing request: $(cat "$WORK/out")"

# A tool result as the client records it (tool_use_id before type, "is_error": false written out)
# is the same request as ctxfold's render of it.
cat > "$WORK/tool.jsonl" <<'JSONL'
{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"run it"}}
{"type":"assistant","uuid":"m1","parentUuid":"u1","sessionId":"s","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"true"}}]}}
{"type":"user","uuid":"r1","parentUuid":"m1","sessionId":"s","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"done","is_error":false}]}}
{"type":"api-request-blob","sessionId":"s","hash":"b1","message":{"role":"user","content":"run it"}}
{"type":"api-request-blob","sessionId":"s","hash":"b3","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"done","is_error":false}]}}
{"type":"api-request","sessionId":"s","id":"r2","keep":0,"tail":["b1","ah","b3"]}
{"type":"assistant","uuid":"m2","parentUuid":"r1","sessionId":"s","requestRef":"r2","message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"ok"}]}}
JSONL
"$CTXFOLD" --db "$WORK/d.db" import "$WORK/tool.jsonl" >/dev/null 2>&1 || fail "import tool.jsonl"
expect_rc "key order and is_error:false are no difference" 0 "$CTXFOLD" --db "$WORK/d.db" tokens --client-requests
expect_eq "both user messages equal" "2 2" "$(jq -r '"\(.summary.compared) \(.summary.equal)"' "$WORK/out")"

# A transcript with no request records: nothing to compare, exit 0.
printf '%s\n' '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}' > "$WORK/none.jsonl"
"$CTXFOLD" --db "$WORK/c.db" import "$WORK/none.jsonl" >/dev/null 2>&1 || fail "import none.jsonl"
expect_rc "no recorded requests exit 0" 0 "$CTXFOLD" --db "$WORK/c.db" tokens --client-requests
expect_eq "no requests" "0" "$(jq '.summary.requests' "$WORK/out")"
finish
