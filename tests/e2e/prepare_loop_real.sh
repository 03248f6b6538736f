#!/usr/bin/env bash
# Issue 11 "Done when": a harness loop driven from a shell script on a copy of the real
# auto-compaction session. Each of 30 steps appends a fake model reply (a tool call) and its tool
# result with `ctxfold append`, then runs `prepare --window 20000`: every printed request is
# estimated within the window and has no orphan tool pairs; the ledger verifies at the end.
source "$(dirname "$0")/lib.sh"
need_transcripts
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
s=fa812bfe-b295-4cca-9c2f-fdf01028cb46
db="$WORK/a.db"
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$f"
pad=$(printf 'line of build output with a path src/module/file.cpp:123 and a message %.0s' $(seq 1 30))
over=0; orphans=0; compactions=0
for i in $(seq 1 30); do
  {
    jq -cn --arg i "$i" '{id:("loop-a"+$i), role:"assistant",
      content:[{type:"text",text:("Step "+$i+": running the tests.")},
               {type:"tool_use",id:("loop-t"+$i),name:"Bash",input:{command:("make test-"+$i)}}]}'
    jq -cn --arg i "$i" --arg pad "$pad" '{id:("loop-r"+$i), role:"tool",
      content:[{type:"tool_result",tool_use_id:("loop-t"+$i),content:("ok "+$i+"\n"+$pad)}]}'
  } | "$CTXFOLD" --db "$db" --session $s append >/dev/null 2>"$WORK/err" || fail "append $i: $(cat "$WORK/err")"
  "$CTXFOLD" --db "$db" --session $s prepare --window 20000 --format anthropic >"$WORK/p.json" 2>"$WORK/perr" \
    || fail "prepare $i: $(cat "$WORK/perr")"
  t=$(jq .prepare.estimated_tokens "$WORK/p.json")
  [ "$t" -le 20000 ] || { over=$((over+1)); echo "step $i: $t tokens" >&2; }
  o=$(anthropic_orphans "$WORK/p.json")
  [ "$o" -eq 0 ] || orphans=$((orphans+1))
  [ "$(jq '.prepare.compaction.summary_id != null' "$WORK/p.json")" = true ] && compactions=$((compactions+1))
  # the newest step is in the request, whole
  [ "$(jq --arg id "loop-r$i" '[.reads[] | select(. == $id)] | length' "$WORK/p.json")" = 1 ] || fail "step $i not sent"
done
expect_eq "every request within the window" "0" "$over"
expect_eq "no orphan tool pairs" "0" "$orphans"
expect_eq "compacted along the way" "true" "$([ $compactions -ge 1 ] && echo true || echo false)"
echo "compactions: $compactions" >&2
expect_rc "verify" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
finish
