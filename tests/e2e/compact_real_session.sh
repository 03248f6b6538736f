#!/usr/bin/env bash
# The real Claude Code auto-compaction session (issue 3 "Done when"). Imported, it already renders
# from its own compact summary (about 35,600 estimated tokens), which is below 80% of a 60,000
# window: compact --window 60000 is an honest noop. At a 40,000 window (trigger 32,000) it
# compacts on top of the imported summary: the render drops under the trigger, verify passes,
# HEAD is unchanged, and a second run is a noop.
source "$(dirname "$0")/lib.sh"
need_transcripts
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
s=fa812bfe-b295-4cca-9c2f-fdf01028cb46
db="$WORK/a.db"
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$f"
"$CTXFOLD" --db "$db" --session $s render >"$WORK/r0.json"
head0=$(jq -r .head "$WORK/r0.json")
imported=$(jq -r .summary "$WORK/r0.json")

expect_rc "compact at 60000" 0 "$CTXFOLD" --db "$db" --session $s compact --window 60000
expect_eq "60000: below the trigger" "noop" "$(jq -r .status "$WORK/out")"

expect_rc "compact at 40000" 0 "$CTXFOLD" --db "$db" --session $s compact --window 40000
cp "$WORK/out" "$WORK/c.json"
expect_eq "40000: compacted" "compacted" "$(jq -r .status "$WORK/c.json")"
expect_eq "head unchanged" "$head0" "$(jq -r .head "$WORK/c.json")"
sid=$(jq -r .summary_id "$WORK/c.json")
"$CTXFOLD" --db "$db" --session $s render --format anthropic >"$WORK/r1.json"
expect_eq "render uses the new summary" "$sid" "$(jq -r .summary "$WORK/r1.json")"
expect_eq "render under 80% of the window" "true" "$(jq '.estimated_tokens < 32000' "$WORK/r1.json")"
expect_eq "render head unchanged" "$head0" "$(jq -r .head "$WORK/r1.json")"
expect_eq "no orphans" "0" "$(anthropic_orphans "$WORK/r1.json")"
# The new summary extends the imported one's coverage with real turn ids.
old=$("$CTXFOLD" --db "$db" show "$imported" | jq -c .node.covers_ids)
new=$("$CTXFOLD" --db "$db" show "$sid" | jq -c .node.covers_ids)
expect_eq "coverage extends the imported summary" "true" "$(jq -n --argjson a "$old" --argjson b "$new" '$b[0:($a|length)] == $a and ($b|length) > ($a|length)')"
expect_eq "the imported summary was merged" "true" "$(jq '.messages[0].content[0].text | contains("spotter-a0y")' "$WORK/r1.json")"
expect_rc "verify" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
expect_rc "second compact" 0 "$CTXFOLD" --db "$db" --session $s compact --window 40000
expect_eq "second compact is a noop" "noop" "$(jq -r .status "$WORK/out")"
expect_eq "HEAD never moved" "0" "$(sqlite3 "$db" "select count(*) from head_moves where cause not in ('import','append')")"
finish
