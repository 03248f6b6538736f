#!/usr/bin/env bash
# prepare (issue 11 part 1, docs/strategies.md "prepare"): project,
# compact when due, project again, at most once per request; the session's own strategy; the
# system prompt / tool set the model last knew the session by.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
db="$WORK/a.db"
gen_session 30 | "$CTXFOLD" --db "$db" append --session s >/dev/null || fail "append"
P() { "$CTXFOLD" --db "$db" --session s prepare "$@"; }

# No window: nothing is due, the request is render's.
expect_rc "prepare, no window" 0 P --format anthropic
cp "$WORK/out" "$WORK/p0.json"
"$CTXFOLD" --db "$db" --session s render --format anthropic >"$WORK/r0.json"
expect_eq "same messages as render" "$(jq -c .messages "$WORK/r0.json")" "$(jq -c .messages "$WORK/p0.json")"
expect_eq "not due, no compaction" "false null" "$(jq -r '"\(.prepare.due) \(.prepare.compaction)"' "$WORK/p0.json")"
expect_eq "nothing on stderr" "" "$(cat "$WORK/err")"
expect_eq "no events written" "0" "$(count "$db" "select count(*) from events")"
expect_rc "body" 0 P --format anthropic --body
expect_eq "body is render's body" "$("$CTXFOLD" --db "$db" --session s render --format anthropic --body | jq -c .)" "$(jq -c . "$WORK/out")"

# Due: compacts once, reports on stderr and in the JSON, prints the second projection.
tok=$(jq .tokens.value "$WORK/r0.json")
win=$(( tok * 100 / 90 ))
expect_rc "prepare, due" 0 P --window "$win"
cp "$WORK/out" "$WORK/p1.json"
expect_eq "compacted" "compacted" "$(jq -r .prepare.compaction.status "$WORK/p1.json")"
expect_eq "stderr reports it" "1" "$(grep -c 'prepare: compacted with rolling' "$WORK/err")"
sid=$(jq -r .prepare.compaction.summary_id "$WORK/p1.json")
expect_eq "printed projection uses the new summary" "$sid" "$(jq -r .summary "$WORK/p1.json")"
expect_eq "under the trigger now" "true" "$(jq ".prepare.estimated_tokens < $win * 80 / 100 and (.prepare.still_due|not)" "$WORK/p1.json")"
expect_rc "prepare again" 0 P --window "$win"
expect_eq "second is not due" "false" "$(jq .prepare.due "$WORK/out")"
expect_eq "one compaction in all" "1" "$(count "$db" "select count(*) from events where type='compact/end'")"
# --force compacts once even when not due.
expect_rc "force" 0 P --window "$win" --force
expect_eq "forced: a compaction ran and is reported" "true" "$(jq '.prepare.due and .prepare.compaction != null' "$WORK/out")"
expect_eq "reported on stderr" "1" "$(grep -c 'prepare: compact' "$WORK/err")"

# The session's own strategy: compact --strategy lcm records it; prepare and render follow it.
expect_rc "compact --strategy lcm" 0 "$CTXFOLD" --db "$db" --session s compact --strategy lcm --force
expect_eq "recorded" "lcm" "$(count "$db" "select json_extract(payload,'$.strategy') from events where type='session/strategy' order by seq desc limit 1")"
expect_rc "prepare follows" 0 P
expect_eq "prepare uses lcm" "lcm lcm" "$(jq -r '"\(.prepare.strategy) \(.strategy)"' "$WORK/out")"
expect_eq "prepare again: lcm" "lcm" "$("$CTXFOLD" --db "$db" --session s prepare | jq -r .prepare.strategy)"
expect_rc "compact without --strategy runs lcm" 0 "$CTXFOLD" --db "$db" --session s compact --force
expect_eq "lcm ran" "lcm" "$(jq -r .strategy "$WORK/out")"
expect_rc "back to rolling" 0 "$CTXFOLD" --db "$db" --session s compact --strategy rolling --dry-run --force
expect_eq "dry run records nothing" "lcm" "$("$CTXFOLD" --db "$db" --session s prepare | jq -r .prepare.strategy)"

# System prompt and tools (docs/strategies.md "prepare": the prompt the model knows).
db2="$WORK/b.db"
gen_session 4 | "$CTXFOLD" --db "$db2" append --session t >/dev/null || fail "append b"
Q() { "$CTXFOLD" --db "$db2" --session t prepare --format anthropic --body "$@"; }
echo "You are a careful coding agent. v1" >"$WORK/sys1"
echo "You are a careful coding agent. v2 (new extension loaded)" >"$WORK/sys2"
echo '[{"name":"Bash","description":"run","input_schema":{"type":"object"}}]' >"$WORK/tools1"
echo '[{"name":"Bash","description":"run","input_schema":{"type":"object"}},{"name":"Grep","description":"g","input_schema":{"type":"object"}}]' >"$WORK/tools2"
expect_rc "first prompt" 0 Q --system "$WORK/sys1" --tools "$WORK/tools1"
expect_eq "system sent" "$(cat "$WORK/sys1")" "$(jq -r .system "$WORK/out")"
expect_eq "tools sent" "1" "$(jq '.tools | length' "$WORK/out")"
n0=$(jq '.messages | length' "$WORK/out")
# a new turn, then a changed prompt with the same tools: pinned + note after the previous HEAD
jq -cn '{id:"u99", role:"user", content:"one more thing"}' | "$CTXFOLD" --db "$db2" append --session t >/dev/null
expect_rc "changed prompt" 0 Q --system "$WORK/sys2" --tools "$WORK/tools1"
cp "$WORK/out" "$WORK/q2.json"
expect_eq "old prompt pinned" "$(cat "$WORK/sys1")" "$(jq -r .system "$WORK/q2.json")"
expect_eq "one capabilities note carrying the new prompt" "1" \
  "$(jq '[.messages[].content[] | select(.type=="text" and (.text|contains("capabilities changed")) and (.text|contains("v2 (new extension")))] | length' "$WORK/q2.json")"
expect_eq "the note precedes the new user turn" "true" \
  "$(jq '.messages[-1].content | map(.text // "") | join("|") | (index("capabilities changed") < index("one more thing"))' "$WORK/q2.json")"
"$CTXFOLD" --db "$db2" --session t prepare --system "$WORK/sys2" --tools "$WORK/tools1" >"$WORK/q2j.json"
expect_eq "json says pinned" "pinned 1" "$(jq -r '"\(.prepare.system) \(.prepare.notes|length)"' "$WORK/q2j.json")"
expect_rc "same prompt again" 0 Q --system "$WORK/sys2" --tools "$WORK/tools1"
expect_eq "request unchanged (prefix stable)" "$(jq -c . "$WORK/q2.json")" "$(jq -c . "$WORK/out")"
# a changed tool set sends the current prompt, no notes
expect_rc "changed tools" 0 Q --system "$WORK/sys2" --tools "$WORK/tools2"
expect_eq "current prompt" "$(cat "$WORK/sys2")" "$(jq -r .system "$WORK/out")"
expect_eq "no note" "0" "$(jq '[.messages[].content[] | select(.type=="text" and (.text|contains("capabilities changed")))] | length' "$WORK/out")"
# a compaction rebuilds the prompt too
expect_rc "changed prompt again" 0 Q --system "$WORK/sys1" --tools "$WORK/tools2"
expect_eq "pinned v2" "$(cat "$WORK/sys2")" "$(jq -r .system "$WORK/out")"
expect_rc "forced compaction" 0 Q --system "$WORK/sys1" --tools "$WORK/tools2" --force
expect_eq "current after compaction" "$(cat "$WORK/sys1")" "$(jq -r .system "$WORK/out")"
expect_eq "verify" "0" "$("$CTXFOLD" --db "$db2" verify-invariants >/dev/null 2>&1; echo $?)"

# Bad input.
echo '{"not":"an array"}' >"$WORK/badtools"
expect_rc "tools not an array" 3 Q --tools "$WORK/badtools"
expect_rc "missing system file" 4 Q --system "$WORK/nope"
finish
