#!/usr/bin/env bash
# Issue 11 part 2, request-local budgets (docs/strategies.md "Request-local budgets"), on a copy of
# the real auto-compaction session with a runaway turn appended: one user message then 150 tool
# steps. `prepare --budget` and `render --budget` print a request within the budget with no orphan
# tool pairs, every user message and tool call as in the plain render, and the database file
# unchanged byte for byte ("the runaway-turn case fits its budget without writing to the database").
# A budget below the protected content exits 4 and prints nothing.
source "$(dirname "$0")/lib.sh"
need_transcripts
src="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
s=fa812bfe-b295-4cca-9c2f-fdf01028cb46
cp "$src" "$WORK/$s.jsonl"  # the session id comes from the file name
db="$WORK/a.db"
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$WORK/$s.jsonl"
pad=$(printf 'src/module/file.cpp:123: warning: unused variable tmp [-Wunused-variable] %.0s' $(seq 1 40))
{
  jq -cn '{id:"run-u", role:"user", content:"Keep going until every test passes; do not stop to ask."}'
  for i in $(seq 1 150); do
    jq -cn --arg i "$i" '{id:("run-a"+$i), role:"assistant",
      content:[{type:"text",text:("Step "+$i+".")},
               {type:"tool_use",id:("run-t"+$i),name:"Bash",input:{command:("make test-"+$i)}}]}'
    jq -cn --arg i "$i" --arg pad "$pad" '{id:("run-r"+$i), role:"tool",
      content:[{type:"tool_result",tool_use_id:("run-t"+$i),content:("step "+$i+"\n"+$pad), is_error:(($i|tonumber) % 10 == 0)}]}'
  done
} | "$CTXFOLD" --db "$db" --session $s append >/dev/null 2>"$WORK/err" || fail "append: $(cat "$WORK/err")"

"$CTXFOLD" --db "$db" --session $s render --format anthropic >"$WORK/plain.json" || fail "plain render"
plain=$(jq .tokens.value "$WORK/plain.json")
budget=100000
[ "$plain" -gt "$budget" ] || fail "the runaway turn should be over the budget: $plain tokens"
sha_before=$(sha256sum "$db" | cut -d' ' -f1)
ls "$db"* | sort >"$WORK/files-before"

for cmd in prepare render; do
  expect_rc "$cmd --budget" 0 "$CTXFOLD" --db "$db" --session $s $cmd --format anthropic --budget $budget
  cp "$WORK/out" "$WORK/$cmd.json"; cp "$WORK/err" "$WORK/$cmd.err"
  b=$([ $cmd = prepare ] && echo .prepare.budget || echo .budget)
  after=$(jq "$b.tokens_after" "$WORK/$cmd.json")
  input=$(jq "$b.input_budget" "$WORK/$cmd.json")
  calls=$(jq "$b.calls" "$WORK/$cmd.json")
  expect_eq "$cmd: within the input budget ($after <= $input)" true "$([ "$after" -le "$input" ] && echo true || echo false)"
  expect_eq "$cmd: input budget = budget - cap - margin" "$input" "$(jq "$b | .budget - .output_cap - .margin" "$WORK/$cmd.json")"
  expect_eq "$cmd: output cap is the standard reserve" 16384 "$(jq "$b.output_cap" "$WORK/$cmd.json")"
  expect_eq "$cmd: at most 32 summary calls" true "$([ "$calls" -le 32 ] && [ "$calls" -ge 1 ] && echo true || echo false)"
  expect_eq "$cmd: no orphan tool pairs" 0 "$(anthropic_orphans "$WORK/$cmd.json")"
  expect_eq "$cmd: reported on stderr" 1 "$(grep -c '^ctxfold: budget: 100000 tokens' "$WORK/$cmd.err")"
  # Every user text and every tool call of the plain render is in the budgeted one, unchanged.
  jq -c '[.messages[] | select(.role=="user") | .content | if type=="string" then [{type:"text",text:.}] else . end | .[]
          | select(.type=="text") | select(.text | startswith("[ctxfold checkpoint") | not)]' "$WORK/plain.json" >"$WORK/u1"
  jq -c '[.messages[] | select(.role=="user") | .content | if type=="string" then [{type:"text",text:.}] else . end | .[]
          | select(.type=="text") | select(.text | startswith("[ctxfold checkpoint") | not)]' "$WORK/$cmd.json" >"$WORK/u2"
  cmp -s "$WORK/u1" "$WORK/u2" && ok || fail "$cmd: user messages changed"
  jq -c '[.messages[] | select(.role=="assistant") | .content[] | select(.type=="tool_use")] | map({(.id): .}) | add' \
    "$WORK/$cmd.json" >"$WORK/calls2"
  expect_eq "$cmd: kept tool calls byte-identical" true "$(jq -n --slurpfile p "$WORK/plain.json" --slurpfile c "$WORK/calls2" '
    ([$p[0].messages[] | select(.role=="assistant") | .content[] | select(.type=="tool_use")] | map({(.id): .}) | add) as $all
    | $c[0] | to_entries | all(.value == $all[.key])')"
  # Error flags stay on the results that had them.
  expect_eq "$cmd: error flags kept" "$(jq '[.messages[] | .content | if type=="array" then .[] else empty end | select(.type=="tool_result" and .is_error==true) | .tool_use_id] | map(select(startswith("run-t")))' "$WORK/plain.json" | jq -c --slurpfile c "$WORK/$cmd.json" '[.[] | select(. as $id | [$c[0].messages[] | .content | if type=="array" then .[] else empty end | select(.type=="tool_result") | .tool_use_id] | index($id))]')" \
    "$(jq -c '[.messages[] | .content | if type=="array" then .[] else empty end | select(.type=="tool_result" and .is_error==true) | .tool_use_id] | map(select(startswith("run-t")))' "$WORK/$cmd.json")"
  # The latest step is sent whole.
  expect_eq "$cmd: latest result verbatim" "$(jq -c '[.messages[-1].content[] | select(.type=="tool_result")]' "$WORK/plain.json")" \
    "$(jq -c '[.messages[-1].content[] | select(.type=="tool_result")]' "$WORK/$cmd.json")"
done
expect_eq "the database file is unchanged" "$sha_before" "$(sha256sum "$db" | cut -d' ' -f1)"
ls "$db"* | sort >"$WORK/files-after"
cmp -s "$WORK/files-before" "$WORK/files-after" && ok || fail "database files appeared or vanished"
expect_eq "no node was added" "$(jq '.reads | length' "$WORK/plain.json")" \
  "$("$CTXFOLD" --db "$db" --session $s render | jq '.reads | length')"

# --body prints exactly the budgeted provider body.
expect_rc "prepare --body" 0 "$CTXFOLD" --db "$db" --session $s prepare --format anthropic --body --budget $budget
expect_eq "body is the request's messages" "$(jq -c .messages "$WORK/prepare.json" | sha256sum)" "$(jq -c .messages "$WORK/out" | sha256sum)"

# Bad input: a budget below the system prompt + the latest user message: exit 4, nothing printed.
expect_rc "tiny budget" 4 "$CTXFOLD" --db "$db" --session $s prepare --format anthropic --budget 2000
expect_eq "nothing printed" 0 "$(wc -c <"$WORK/out")"
grep -q "protected content" "$WORK/err" && grep -q "system prompt" "$WORK/err" && grep -q "latest" "$WORK/err" && ok \
  || fail "the message names what did not fit: $(cat "$WORK/err")"
expect_rc "tiny budget (render)" 4 "$CTXFOLD" --db "$db" --session $s render --budget 2000
expect_rc "bad --max-output" 2 "$CTXFOLD" --db "$db" --session $s render --budget 100000 --max-output 0
expect_rc "--max-output without --budget" 2 "$CTXFOLD" --db "$db" --session $s render --max-output 100
expect_eq "still unchanged" "$sha_before" "$(sha256sum "$db" | cut -d' ' -f1)"
# With the harness's system prompt and tools (prepare writes its prepare/known and prepare/sent
# events, on a copy): the replaced prompt and the tool definitions count against the budget.
db_cp "$db" "$WORK/h.db"
printf 'You are a coding agent working in a C++ repository. %.0s' $(seq 1 200) >"$WORK/sys.txt"
echo '[{"name":"Bash","description":"run a command","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}]' >"$WORK/tools.json"
expect_rc "prepare --budget --system --tools" 0 "$CTXFOLD" --db "$WORK/h.db" --session $s prepare --format anthropic \
  --budget $budget --system "$WORK/sys.txt" --tools "$WORK/tools.json"
expect_eq "harness request within the input budget" true \
  "$(jq '.prepare.request_tokens <= .prepare.budget.input_budget and .prepare.request_tokens == .prepare.budget.tokens_after' "$WORK/out")"
expect_eq "current prompt sent" '"current"' "$(jq .prepare.system "$WORK/out")"
expect_eq "no orphans (harness)" 0 "$(anthropic_orphans "$WORK/out")"
# A fork at HEAD sends the same budgeted request as its source: the checkpoint's node range and
# a summarized result's source node are quoted by the source's ids (docs/strategies.md "What a
# fork copies"), never by the fork's own.
db_cp "$db" "$WORK/f.db"
expect_rc "fork" 0 "$CTXFOLD" --db "$WORK/f.db" fork --at "$($CTXFOLD --db "$WORK/f.db" --session $s render | jq -r .head)" --name f
"$CTXFOLD" --db "$WORK/f.db" --session $s render --format anthropic --body --budget $budget >"$WORK/src-body.json" 2>/dev/null
"$CTXFOLD" --db "$WORK/f.db" --session f render --format anthropic --body --budget $budget >"$WORK/fork-body.json" 2>/dev/null
expect_eq "fork: a checkpoint is sent" true "$(grep -q 'ctxfold checkpoint' "$WORK/fork-body.json" && echo true || echo false)"
expect_eq "fork: no fork id quoted" 0 "$(grep -c '"f:\|node f:\| f:' "$WORK/fork-body.json")"
expect_eq "fork: budgeted body equals the source's" "$(sha256sum <"$WORK/src-body.json")" "$(sha256sum <"$WORK/fork-body.json")"
expect_rc "verify" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
finish
