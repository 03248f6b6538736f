#!/usr/bin/env bash
# Paging and size flags refuse negative numbers with exit 2 (grep --limit -1 used to print
# everything with "limit":null); 0 keeps its meaning. grep --scope on a raw message is exit 3
# with a hint that names grep --scope, not expand.
source "$(dirname "$0")/lib.sh"
db="$WORK/p.db"
cat > "$WORK/in.jsonl" <<'JSONL'
{"id":"t1","session":"s","predecessor":null,"kind":"message","role":"user","content":[{"type":"text","text":"PubSub first"}],"metadata":{}}
{"id":"t2","session":"s","predecessor":"t1","kind":"message","role":"assistant","content":[{"type":"text","text":"PubSub second"}],"metadata":{}}
{"id":"S","session":"s","predecessor":null,"kind":"summary","role":"user","content":[{"type":"text","text":"summary of t1 t2"}],"metadata":{"strategy":"rolling"},"covers_ids":["t1","t2"]}
JSONL
expect_rc "import" 0 "$CTXFOLD" --db "$db" import --format ctxfold "$WORK/in.jsonl"

expect_rc "grep --limit -1" 2 "$CTXFOLD" --db "$db" grep --limit -1 PubSub
expect_eq "grep --limit -1 prints nothing" "" "$(cat "$WORK/out")"
expect_rc "grep --offset -3" 2 "$CTXFOLD" --db "$db" grep --offset -3 PubSub
expect_rc "grep --limit 0" 0 "$CTXFOLD" --db "$db" grep --limit 0 PubSub
expect_eq "grep --limit 0: no match printed, counts are totals" "0 2 0" \
  "$(jq -rs '"\([.[] | select(.type=="match")] | length) \(.[-1].raw_matches) \(.[-1].limit)"' "$WORK/out")"
expect_rc "grep without --limit" 0 "$CTXFOLD" --db "$db" grep PubSub
expect_eq "grep without --limit: limit null" "null" "$(tail -1 "$WORK/out" | jq -r .limit)"

expect_rc "list --limit -1" 2 "$CTXFOLD" --db "$db" list --limit -1
expect_rc "list --offset -1" 2 "$CTXFOLD" --db "$db" list --offset -1
expect_rc "list --limit 0 (all)" 0 "$CTXFOLD" --db "$db" list --limit 0
expect_rc "expand --limit -5" 2 "$CTXFOLD" --db "$db" expand S --limit -5

expect_rc "render --max-row-bytes -1" 2 "$CTXFOLD" --db "$db" render --max-row-bytes -1
expect_rc "render --max-row-bytes 0 (no cap)" 0 "$CTXFOLD" --db "$db" render --max-row-bytes 0
expect_rc "prepare --max-row-bytes -1" 2 "$CTXFOLD" --db "$db" prepare --max-row-bytes -1

expect_rc "grep --scope on a raw message" 3 "$CTXFOLD" --db "$db" grep --scope t1 PubSub
grep -q "^hint: grep --scope takes a summary" "$WORK/err" && ok || fail "grep --scope hint: $(cat "$WORK/err")"
expect_rc "expand on a raw message" 3 "$CTXFOLD" --db "$db" expand t1
grep -q "^hint: expand takes a summary" "$WORK/err" && ok || fail "expand hint: $(cat "$WORK/err")"
finish
