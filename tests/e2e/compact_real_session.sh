#!/usr/bin/env bash
# The real Claude Code auto-compaction session (issue 3 "Done when", with issue 9's calibration).
# Imported, it renders from its own compact summary: about 47,600 estimated tokens, but its last
# request measured 76,350 input tokens on a context ctxfold estimates at about 47,400 — the
# remainder is Claude Code's system prompt and tool definitions, which the transcript does not
# hold. The render is therefore labelled "calibrated" at about 76,600, over 80% of a 60,000 window:
# compact --window 60000 compacts (on top of the imported summary), the next render's calibrated
# figure is under 48,000, verify passes, HEAD is unchanged, and a second run is a noop.
source "$(dirname "$0")/lib.sh"
need_transcripts
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
s=fa812bfe-b295-4cca-9c2f-fdf01028cb46
db="$WORK/a.db"
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$f"
"$CTXFOLD" --db "$db" --session $s render >"$WORK/r0.json"
head0=$(jq -r .head "$WORK/r0.json")
imported=$(jq -r .summary "$WORK/r0.json")
expect_eq "render is calibrated" "calibrated" "$(jq -r .tokens.kind "$WORK/r0.json")"
expect_eq "calibrated on the last request" "76350" "$(jq -r .tokens.calibration.measured "$WORK/r0.json")"
expect_eq "calibrated figure over the trigger, estimate under it" "true" \
  "$(jq '.tokens.value >= 48000 and .estimated_tokens < 48000 and .tokens.estimated == .estimated_tokens' "$WORK/r0.json")"

expect_rc "compact at 60000" 0 "$CTXFOLD" --db "$db" --session $s compact --window 60000
cp "$WORK/out" "$WORK/c.json"
expect_eq "60000: compacted" "compacted" "$(jq -r .status "$WORK/c.json")"
expect_eq "trigger decided on the calibrated figure" "calibrated" "$(jq -r .tokens_before.kind "$WORK/c.json")"
expect_eq "after is calibrated with the same match" "true" \
  "$(jq '.tokens_after.kind == "calibrated" and .tokens_after.calibration.node == .tokens_before.calibration.node and .tokens_after.value < 48000' "$WORK/c.json")"
expect_eq "head unchanged" "$head0" "$(jq -r .head "$WORK/c.json")"
sid=$(jq -r .summary_id "$WORK/c.json")
"$CTXFOLD" --db "$db" --session $s render --format anthropic >"$WORK/r1.json"
expect_eq "render uses the new summary" "$sid" "$(jq -r .summary "$WORK/r1.json")"
expect_eq "render under 80% of the window, labelled calibrated" "true" \
  "$(jq '.tokens.kind == "calibrated" and .tokens.value < 48000' "$WORK/r1.json")"
expect_eq "render head unchanged" "$head0" "$(jq -r .head "$WORK/r1.json")"
expect_eq "no orphans" "0" "$(anthropic_orphans "$WORK/r1.json")"
# The new summary extends the imported one's coverage with real turn ids.
old=$("$CTXFOLD" --db "$db" show "$imported" | jq -c .node.covers_ids)
new=$("$CTXFOLD" --db "$db" show "$sid" | jq -c .node.covers_ids)
expect_eq "coverage extends the imported summary" "true" "$(jq -n --argjson a "$old" --argjson b "$new" '$b[0:($a|length)] == $a and ($b|length) > ($a|length)')"
expect_eq "the imported summary was merged" "true" "$(jq '.messages[0].content[0].text | contains("spotter-a0y")' "$WORK/r1.json")"
expect_rc "verify" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
expect_rc "second compact" 0 "$CTXFOLD" --db "$db" --session $s compact --window 60000
expect_eq "second compact is a noop" "noop" "$(jq -r .status "$WORK/out")"
expect_eq "HEAD never moved" "0" "$(db_sql "$db" "select count(*) from head_moves where cause not in ('import','append')")"
expect_eq "HEAD is where it was" "$head0" "$("$CTXFOLD" --db "$db" --session $s render | jq -r .head)"
# The per-request table: every request of the main chain, and the current figure labelled.
expect_rc "tokens" 0 "$CTXFOLD" --db "$db" --session $s tokens
expect_eq "157 measured requests" "157" "$(jq '.requests | length' "$WORK/out")"
expect_eq "one reset (the imported compaction) skipped" "1" "$(jq .skipped.reset "$WORK/out")"
expect_eq "current figure labelled" "calibrated" "$(jq -r .current.kind "$WORK/out")"
finish
