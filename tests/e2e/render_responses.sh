#!/usr/bin/env bash
# `render --format responses` on a Codex 0.171-shaped rollout (written here): the body is the
# Responses request Codex sends (the base instructions as the first developer message, ids,
# the arguments string and the freeform input as sent, reasoning's encrypted_content, the output
# items); the JSON document carries the same items; an unknown format names responses; and
# `--format openai` shortens a tool-call id longer than 40 bytes for the call and its result and
# lists the original under "tool_call_ids". A token_usage_record with a broken payload and a line
# cut mid-record are warnings, never a crash.
source "$(dirname "$0")/lib.sh"
r="$WORK/rollout.jsonl"
long="exec_command-1767080759289-1686f1b5114989abcdef0123"
{
  echo '{"ordinal":0,"type":"session_meta","payload":{"id":"r171","cli_version":"0.171.0","base_instructions":{"text":"BASE","provenance":{"type":"model"}}}}'
  echo '{"ordinal":1,"type":"response_item","payload":{"type":"message","id":"msg_d","role":"developer","content":[{"type":"input_text","text":"CTX"}]}}'
  echo '{"ordinal":2,"type":"world_state","payload":{"full":true}}'
  echo '{"ordinal":3,"type":"response_item","payload":{"type":"message","id":"msg_u","role":"user","content":[{"type":"input_text","text":"go"}]}}'
  echo '{"ordinal":4,"type":"response_item","payload":{"type":"reasoning","id":"rs_1","summary":[],"content":null,"encrypted_content":"gAAAAopaque"}}'
  jq -cn --arg id "$long" '{ordinal:5,type:"response_item",payload:{type:"function_call",id:"fc_1",name:"exec_command",arguments:"{\"cmd\":  \"ls\"}",call_id:$id}}'
  echo '{"ordinal":6,"type":"token_usage_record","payload":"not an object"}'
  echo '{"ordinal":7,"type":"token_usage_record","payload":{"response_id":"resp_1","usage":{"input_tokens":900,"output_tokens":9,"total_tokens":909}}}'
  jq -cn --arg id "$long" '{ordinal:8,type:"response_item",payload:{type:"function_call_output",id:"fco_1",call_id:$id,output:"a.txt\n"}}'
  echo '{"ordinal":9,"type":"response_item","payload":{"type":"custom_tool_call","id":"ctc_2","call_id":"call_2","name":"apply_patch","input":"*** Begin Patch\n*** End Patch\n"}}'
  echo '{"ordinal":10,"type":"response_item","payload":{"type":"custom_tool_call_output","id":"ctco_2","call_id":"call_2","output":"ok"}}'
  printf '%s' '{"ordinal":11,"type":"response_item","payload":{"type":"message","role":"assis'
} > "$r"
db="$WORK/r.db"
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$r"
grep -q 'rollout.jsonl:12' "$WORK/err" && ok || fail "the cut line is a warning with file and line: $(cat "$WORK/err")"
expect_rc "render responses body" 0 "$CTXFOLD" --db "$db" render --format responses --body
b="$WORK/out"; cp "$b" "$WORK/body.json"; b="$WORK/body.json"
expect_eq "no instructions field" "false" "$(jq 'has("instructions")' "$b")"
expect_eq "item types" "message message message reasoning function_call function_call_output custom_tool_call custom_tool_call_output" \
  "$(jq -r '[.input[].type] | join(" ")' "$b")"
expect_eq "roles" "developer developer user" "$(jq -r '[.input[] | select(.type=="message") | .role] | join(" ")' "$b")"
expect_eq "base instructions first" "BASE" "$(jq -r '.input[0].content[0].text' "$b")"
expect_eq "ids kept" "msg_d msg_u" "$(jq -r '[.input[] | .id // empty] | .[0:2] | join(" ")' "$b")"
expect_eq "arguments as sent" '{"cmd":  "ls"}' "$(jq -r '.input[4].arguments' "$b")"
expect_eq "the long call id as sent" "$long" "$(jq -r '.input[4].call_id' "$b")"
expect_eq "encrypted reasoning" "gAAAAopaque" "$(jq -r '.input[3].encrypted_content' "$b")"
expect_eq "freeform input exactly" true "$(jq '.input[6].input == "*** Begin Patch\n*** End Patch\n"' "$b")"
expect_rc "render responses json" 0 "$CTXFOLD" --db "$db" render --format responses
expect_eq "json: format and the same items" "responses true" \
  "$(jq -r --slurpfile b "$b" '"\(.format) \(.input == $b[0].input)"' "$WORK/out")"
expect_rc "unknown format" 2 "$CTXFOLD" --db "$db" render --format nope
grep -q "responses" "$WORK/err" && ok || fail "the hint names responses: $(cat "$WORK/err")"
expect_rc "render openai" 0 "$CTXFOLD" --db "$db" render --format openai
o="$WORK/out"
expect_eq "openai ids within 40 bytes" "true" \
  "$(jq '[.messages[] | ((.tool_calls // [])[] | .id), (.tool_call_id // empty)] | all(length <= 40)' "$o")"
expect_eq "openai: every call answered" 0 "$(openai_orphans "$o")"
expect_eq "the mapping names the original" "$long" "$(jq -r '.tool_call_ids[0].original' "$o")"
expect_eq "the mapping names the sent id" "$(jq -r '.tool_call_ids[0].id' "$o")" \
  "$(jq -r '.messages[] | select(.role=="tool") | .tool_call_id' "$o" | head -1)"
finish
