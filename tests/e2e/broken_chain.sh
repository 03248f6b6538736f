#!/usr/bin/env bash
# A database edited directly (triggers dropped, one predecessor rewritten) so that HEAD's chain
# loops: render and log print what they can, say where the walk stopped on stderr, and exit 3 (bad
# input data, docs/commands.md "Exit codes"), as fork does, and so do context, tokens, prepare and
# export of the messages (export --format ctxfold writes every node, no walk); verify-invariants
# reports the cycle (exit 1).
source "$(dirname "$0")/lib.sh"
db="$WORK/loop.db"
{
  for i in $(seq 1 200); do
    if [ $((i % 2)) -eq 1 ]; then
      jq -cn --arg i "$i" '{id:("n"+$i), role:"user", content:("question "+$i)}'
    else
      jq -cn --arg i "$i" '{id:("n"+$i), role:"assistant", content:("answer "+$i)}'
    fi
  done
} | "$CTXFOLD" --db "$db" --session s append >/dev/null 2>"$WORK/err" || fail "append: $(cat "$WORK/err")"
expect_rc "intact render" 0 "$CTXFOLD" --db "$db" --session s render
expect_eq "intact render: no warning" "" "$(cat "$WORK/err")"

# n50's predecessor becomes n150: n200 -> ... -> n150 -> ... -> n50 -> n150 (a loop of 101 nodes).
db_tamper "$db" "UPDATE nodes SET predecessor='n150' WHERE id='n50';"
expect_rc "render of a looping chain" 3 "$CTXFOLD" --db "$db" --session s render
grep -q "predecessor cycle at node 'n150'" "$WORK/err" && ok || fail "render names the loop: $(cat "$WORK/err")"
grep -q "partial" "$WORK/err" && ok || fail "render says the history is partial: $(cat "$WORK/err")"
expect_eq "render: the nodes before the loop, once each" 151 "$(jq '.messages | length' "$WORK/out")"
expect_rc "text render of a looping chain" 3 "$CTXFOLD" --db "$db" --session s render --format text
grep -q "predecessor cycle" "$WORK/err" && ok || fail "text render warns"

expect_rc "log of a looping chain" 3 "$CTXFOLD" --db "$db" --session s log
expect_eq "log counts each node once" 151 "$(jq -s '.[-1].count' "$WORK/out")"
expect_eq "log prints each node once" 151 "$(jq -s '[.[] | select(.type=="node") | .id] | unique | length' "$WORK/out")"
grep -q "predecessor cycle at node 'n150'" "$WORK/err" && ok || fail "log names the loop: $(cat "$WORK/err")"

# The other commands that render HEAD's context say the same.
for c in context tokens prepare "export --format openai"; do
  expect_rc "$c of a looping chain" 3 "$CTXFOLD" --db "$db" --session s $c
  grep -q "predecessor cycle at node 'n150'" "$WORK/err" && ok || fail "$c names the loop: $(cat "$WORK/err")"
done

# compact plans from that render: it refuses (exit 3) before any compaction record.
for st in rolling snapcompact lcm; do
  expect_rc "compact $st on a looping chain" 3 "$CTXFOLD" --db "$db" --session s compact --strategy $st --window 300 --force
  grep -q "predecessor cycle at node 'n150'" "$WORK/err" && ok || fail "compact $st names the loop: $(cat "$WORK/err")"
done
expect_eq "compact wrote no summary and no compaction record" "0 0" \
  "$(db_sql "$db" "select count(*) from nodes where kind<>'message'") $(db_sql "$db" "select count(*) from events where type like 'compact/%'")"

expect_rc "verify finds the cycle" 1 "$CTXFOLD" --db "$db" verify-invariants --session s
finish
