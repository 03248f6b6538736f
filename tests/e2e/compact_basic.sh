#!/usr/bin/env bash
# compact (rolling): trigger, output contract, HEAD never moves, render shrinks, re-run is a noop,
# dry run and config file, usage errors, byte-identical render in a new process.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
db="$WORK/c.db"
gen_session 20 | "$CTXFOLD" --db "$db" --session s append >/dev/null 2>"$WORK/err"
expect_eq "append" 0 $?
"$CTXFOLD" --db "$db" render --format openai >"$WORK/r0.json"
before=$(jq .estimated_tokens "$WORK/r0.json")
head0=$(jq -r .head "$WORK/r0.json")

# Without a window nothing compacts automatically.
expect_rc "no window" 0 "$CTXFOLD" --db "$db" compact
expect_eq "no window is a noop" "noop" "$(jq -r .status "$WORK/out")"
# Dry run: the plan, and not a byte written.
sum0=$(sha256sum "$db" | cut -d' ' -f1)
expect_rc "dry run" 0 "$CTXFOLD" --db "$db" compact --window 20000 --dry-run
expect_eq "dry run status" "planned" "$(jq -r .status "$WORK/out")"
expect_eq "dry run plans a cover" "true" "$(jq '.covers.count > 0' "$WORK/out")"
expect_eq "dry run writes no node" "80" "$(count "$db" 'select count(*) from nodes')"
expect_eq "dry run writes no event" "0" "$(count "$db" 'select count(*) from events')"

# Usage and input errors.
expect_rc "snapcompact flags need snapcompact" 2 "$CTXFOLD" --db "$db" compact --window 20000 --max-frames 3
expect_rc "lcm flags need lcm" 2 "$CTXFOLD" --db "$db" compact --window 20000 --fanout 3
expect_rc "unknown strategy" 2 "$CTXFOLD" --db "$db" compact --strategy nope
expect_rc "bad percent" 2 "$CTXFOLD" --db "$db" compact --window 20000 --tail-percent 0
echo '{"rolling":{"triggerPercent":"eighty"}}' >"$WORK/bad.json"
expect_rc "bad config" 3 "$CTXFOLD" --db "$db" compact --config "$WORK/bad.json"

# The real run, configured from a file (docs/strategies.md "Settings").
echo '{"rolling":{"contextWindowTokens":20000,"triggerPercent":80,"tailPercent":25}}' >"$WORK/cfg.json"
expect_rc "compact" 0 "$CTXFOLD" --db "$db" compact --config "$WORK/cfg.json"
cp "$WORK/out" "$WORK/c.json"
expect_eq "schema" "ctxfold.compact/1" "$(jq -r .schema "$WORK/c.json")"
expect_eq "status" "compacted" "$(jq -r .status "$WORK/c.json")"
expect_eq "strategy" "rolling" "$(jq -r .strategy "$WORK/c.json")"
expect_eq "summarizer" "extractive 1" "$(jq -r '"\(.summarizer.kind) \(.summarizer.calls)"' "$WORK/c.json")"
expect_eq "head reported" "$head0" "$(jq -r .head "$WORK/c.json")"
expect_eq "first covered is the first request" "u1" "$(jq -r .covers.first "$WORK/c.json")"
sid=$(jq -r .summary_id "$WORK/c.json")
expect_eq "estimate shrank" "true" "$(jq --argjson b "$before" '.estimated_tokens_after < $b and .estimated_tokens_before == $b' "$WORK/c.json")"
expect_eq "head never moves" "$head0" "$(count "$db" "select node_id from head_moves where session='s' order by seq desc limit 1")"
expect_eq "no head move by compaction" "0" "$(count "$db" "select count(*) from head_moves where cause not in ('append','import')")"
expect_eq "bracket" "compact/start compact/summary compact/end" "$(count "$db" "select type from events where type like 'compact/%' order by seq" | xargs)"

"$CTXFOLD" --db "$db" render --format openai >"$WORK/r1.json"
expect_eq "render substitutes the summary" "$sid" "$(jq -r .summary "$WORK/r1.json")"
expect_eq "render is under the trigger" "true" "$(jq '.estimated_tokens < 16000' "$WORK/r1.json")"
expect_eq "summary first" "summary" "$(jq -r '.sections[0].kind' "$WORK/r1.json")"
expect_eq "tail starts with a user message" "user" "$(jq -r '.messages[1].role' "$WORK/r1.json")"
expect_eq "no orphans" "0" "$(openai_orphans "$WORK/r1.json")"
expect_eq "covered ids not read" "0" "$(jq --argjson c "$("$CTXFOLD" --db "$db" show "$sid" | jq -c .node.covers_ids)" '[.reads[] | select(. as $r | $c | index($r))] | length' "$WORK/r1.json")"
case "$(jq -r '.messages[0].content' "$WORK/r1.json")" in
  *"<compacted-summary>"*"request 1: please update src/mod1.cpp"*"</compacted-summary>"*) ok ;;
  *) fail "summary text is not framed or lost the first request" ;;
esac
expect_rc "verify" 0 "$CTXFOLD" --db "$db" verify-invariants
# Another process renders the same bytes, twice.
"$CTXFOLD" --db "$db" render >"$WORK/a1"; "$CTXFOLD" --db "$db" render >"$WORK/a2"
cmp -s "$WORK/a1" "$WORK/a2" && ok || fail "render is not byte-identical across processes"

# Compacting again right away: a noop that writes nothing.
n_events=$(count "$db" 'select count(*) from events')
expect_rc "second compact" 0 "$CTXFOLD" --db "$db" compact --window 20000
expect_eq "second compact is a noop" "noop" "$(jq -r .status "$WORK/out")"
expect_eq "noop writes nothing" "$n_events" "$(count "$db" 'select count(*) from events')"
"$CTXFOLD" --db "$db" render >"$WORK/a3"
cmp -s "$WORK/a1" "$WORK/a3" && ok || fail "a noop compaction changed the render"

# The conversation goes on; the next compaction extends the previous summary.
gen_session 12 x | "$CTXFOLD" --db "$db" --session s append >/dev/null 2>&1
expect_rc "third compact" 0 "$CTXFOLD" --db "$db" compact --window 20000
expect_eq "re-compaction" "compacted" "$(jq -r .status "$WORK/out")"
sid2=$(jq -r .summary_id "$WORK/out")
expect_eq "coverage extends the old segment" "true" "$(jq -n --argjson a "$("$CTXFOLD" --db "$db" show "$sid" | jq -c .node.covers_ids)" --argjson b "$("$CTXFOLD" --db "$db" show "$sid2" | jq -c .node.covers_ids)" '$b[0:($a|length)] == $a and ($b|length) > ($a|length)')"
expect_eq "no summary id covered" "0" "$("$CTXFOLD" --db "$db" show "$sid2" | jq '[.node.covers_ids[] | select(startswith("sum-"))] | length')"
expect_rc "verify after re-compaction" 0 "$CTXFOLD" --db "$db" verify-invariants
finish
