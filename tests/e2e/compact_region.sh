#!/usr/bin/env bash
# Region compaction (issue 11 part 3; docs/strategies.md "region summaries"):
# compact --from ID --to ID summarizes exactly that aligned segment; bad boundaries are refused
# with exit 2 and nothing written; several region summaries stand at once; render, expand,
# describe, fork and verify-invariants handle them; the real auto-compaction session too.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
db="$WORK/a.db"
gen_session 10 | "$CTXFOLD" --db "$db" append --session s >/dev/null || fail "append"
jq -cn '{id:"x1", session:"t", role:"user", content:"another session"}' | "$CTXFOLD" --db "$db" append >/dev/null
jq -cn '{id:"off1", session:"s", predecessor:"b2", role:"user", content:"a branch off the spine"}' | "$CTXFOLD" --db "$db" append >/dev/null
C() { "$CTXFOLD" --db "$db" --session s compact "$@"; }
state() { count "$db" "select (select count(*) from nodes)||'/'||(select count(*) from events)"; }
s0=$(state)
expect_rc "splits a call from its result" 2 C --from u2 --to a2
expect_eq "names the split" "1" "$(grep -c 'not on a unit boundary' "$WORK/err")"
expect_rc "starts at a tool result" 2 C --from r2 --to b3
expect_rc "wrong order" 2 C --from u4 --to b2
expect_eq "says so" "1" "$(grep -c 'comes after' "$WORK/err")"
expect_rc "another session" 2 C --from x1 --to b2
expect_eq "names the session" "1" "$(grep -c "belongs to session 't'" "$WORK/err")"
expect_rc "off the spine" 2 C --from u1 --to off1
expect_eq "says not on the spine" "1" "$(grep -c "not on HEAD's spine" "$WORK/err")"
expect_rc "unknown id" 2 C --from nope --to b2
expect_rc "--from without --to" 2 C --from u1
expect_eq "nothing written by refusals" "$s0" "$(state)"

expect_rc "a whole step is aligned" 0 C --from a2 --to r2 --dry-run
expect_eq "planned" "planned" "$(jq -r .status "$WORK/out")"
expect_eq "dry run writes nothing" "$s0" "$(state)"
expect_rc "region 1" 0 C --from u2 --to b4
r1=$(jq -r .summary_id "$WORK/out")
expect_eq "covers exactly u2..b4" '["u2","a2","r2","b2","u3","a3","r3","b3","u4","a4","r4","b4"]' \
  "$("$CTXFOLD" --db "$db" show "$r1" | jq -c .node.covers_ids)"
expect_eq "region strategy" "region" "$("$CTXFOLD" --db "$db" show "$r1" | jq -r .node.metadata.strategy)"
expect_rc "region 2" 0 C --from u6 --to b8
r2=$(jq -r .summary_id "$WORK/out")
"$CTXFOLD" --db "$db" --session s render --format anthropic >"$WORK/r.json"
expect_eq "render holds both" "$r1 $r2" "$(jq -r '[.folds[].id] | join(" ")' "$WORK/r.json")"
expect_eq "both are region folds" "region region" "$(jq -r '[.folds[].kind] | join(" ")' "$WORK/r.json")"
expect_eq "u1 and u5 still raw" "true" "$(jq '(.reads | index("u1")) != null and (.reads | index("u5")) != null and (.reads | index("u3")) == null' "$WORK/r.json")"
expect_eq "no orphans" "0" "$(anthropic_orphans "$WORK/r.json")"
expect_rc "verify" 0 "$CTXFOLD" --db "$db" verify-invariants
expect_rc "partial overlap refused" 2 C --from u5 --to b6
expect_rc "expand region" 0 "$CTXFOLD" --db "$db" expand "$r2"
expect_eq "expand reads its rows" "true" "$(grep -q 'request 7' "$WORK/out" && echo true || echo false)"
expect_rc "describe region" 0 "$CTXFOLD" --db "$db" describe "$r1"
expect_eq "describe names the coverage" "true" "$(grep -q '"u2"' "$WORK/out" && echo true || echo false)"
expect_rc "fork" 0 "$CTXFOLD" --db "$db" --session s fork --at "$(jq -r .head "$WORK/r.json")" --name f
expect_eq "fork renders two region summaries" "2" "$("$CTXFOLD" --db "$db" --session f render | jq '[.folds[] | select(.kind=="region")] | length')"
expect_rc "verify after fork" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
# a region that contains both whole nests them
expect_rc "containing region" 0 C --from u1 --to b9
r3=$(jq -r .summary_id "$WORK/out")
expect_eq "render holds the outer one only" "$r3" "$("$CTXFOLD" --db "$db" --session s render | jq -r '[.folds[].id] | join(" ")')"
expect_rc "verify nested" 0 "$CTXFOLD" --db "$db" verify-invariants
# an open step (a call without its result at HEAD) is never inside a region
jq -cn '{id:"a11", role:"assistant", content:[{type:"tool_use",id:"T11",name:"Bash",input:{command:"sleep"}}]}' \
  | "$CTXFOLD" --db "$db" append --session s >/dev/null
s1=$(state)
expect_rc "open step refused" 2 C --from u10 --to a11
expect_eq "says open step" "1" "$(grep -c 'open step' "$WORK/err")"
expect_eq "nothing written" "$s1" "$(state)"
# a rolling compaction after region summaries evicts them with the rows beneath
expect_rc "rolling over regions" 0 C --force
expect_eq "rolling compacted" "compacted" "$(jq -r .status "$WORK/out")"
expect_rc "verify after rolling" 0 "$CTXFOLD" --db "$db" verify-invariants

# The real auto-compaction session: a region after the imported summary; two summaries render.
if [ -n "$CTXFOLD_TRANSCRIPTS" ] && [ -d "$CTXFOLD_TRANSCRIPTS" ]; then
  f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
  s=fa812bfe-b295-4cca-9c2f-fdf01028cb46
  rdb="$WORK/real.db"
  expect_rc "import real" 0 "$CTXFOLD" --db "$rdb" import "$f"
  "$CTXFOLD" --db "$rdb" --session $s render >"$WORK/real.json"
  # the session ends in one long turn of tool steps after its summary: the region runs from the
  # second step through the fifth step's tool results
  from=$(jq -r '.messages[3].ids[0]' "$WORK/real.json")
  to=$(jq -r '.messages[10].ids[-1]' "$WORK/real.json")
  expect_eq "steps picked" "assistant tool_results" "$(jq -r '"\(.messages[3].role) \(.messages[10].kind)"' "$WORK/real.json")"
  expect_rc "real region" 0 "$CTXFOLD" --db "$rdb" --session $s compact --from "$from" --to "$to"
  rid=$(jq -r .summary_id "$WORK/out")
  "$CTXFOLD" --db "$rdb" --session $s render --format anthropic >"$WORK/real2.json"
  expect_eq "two summaries render" "true" \
    "$(jq --arg r "$rid" '.summary != null and ([.folds[].id] == [$r])' "$WORK/real2.json")"
  expect_eq "real: no orphans" "0" "$(anthropic_orphans "$WORK/real2.json")"
  expect_rc "real: verify clean" 0 "$CTXFOLD" --db "$rdb" verify-invariants --all-sessions
  expect_eq "real: no warnings" "0" "$(jq '[.checks[]? | .warnings // [] | length] | add // 0' "$WORK/out")"
fi
finish
