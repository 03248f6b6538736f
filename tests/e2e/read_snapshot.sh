#!/usr/bin/env bash
# Every read command reads one snapshot (docs/commands.md "Reading never writes"): beside a loop
# of appends, 100 runs of verify-invariants (and 20 renders and greps between them) never see half
# of a write. Before each read held one read transaction, some of these runs reported violations
# ("node 'u1' is rendered but is not on HEAD's spine", "rendering HEAD twice gave different bytes"):
# each statement read the database as it was at that statement.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
verifies=${READ_SNAPSHOT_VERIFIES:-100}
db="$WORK/s.db"
gen_session 10 | "$CTXFOLD" --db "$db" --session S append >/dev/null || fail "seed"

# The writer: appends one node at a time until the readers are done (at most 5000).
(
  for i in $(seq 1 5000); do
    [ -e "$WORK/stop" ] && break
    jq -cn --arg id "x$i" '{id:$id, role:"user", content:"one more line about src/mod.cpp"}' \
      | "$CTXFOLD" --db "$db" --session S append >/dev/null 2>>"$WORK/append.err" || echo "x$i" >>"$WORK/append.failed"
    echo "x$i" >>"$WORK/appended"
  done
) &
writer=$!

violations=0 errors=0
for i in $(seq 1 "$verifies"); do
  "$CTXFOLD" --db "$db" --session S verify-invariants >"$WORK/v.json" 2>"$WORK/v.err"; rc=$?
  if [ "$rc" = 1 ]; then
    violations=$((violations+1))
    jq -c '[.checks[] | select(.ok == false) | .violations[0].message]' "$WORK/v.json" >&2
  elif [ "$rc" != 0 ]; then
    errors=$((errors+1)); echo "verify $i: exit $rc: $(head -c 300 "$WORK/v.err")" >&2
  fi
  if [ $((i % 5)) = 0 ]; then
    "$CTXFOLD" --db "$db" --session S render >"$WORK/r.json" 2>"$WORK/r.err" || { errors=$((errors+1)); cat "$WORK/r.err" >&2; }
    "$CTXFOLD" --db "$db" --session S grep "src/mod" --limit 3 >/dev/null 2>"$WORK/g.err" || { errors=$((errors+1)); cat "$WORK/g.err" >&2; }
  fi
done
touch "$WORK/stop"
wait "$writer"
expect_eq "verify runs that reported a violation (of $verifies)" 0 "$violations"
expect_eq "read commands that failed" 0 "$errors"
expect_eq "appends that failed" 0 "$(cat "$WORK/append.failed" 2>/dev/null | wc -l)"
n=$(wc -l <"$WORK/appended")
echo "appends during the reads: $n" >&2
[ "$n" -gt 0 ] && ok || fail "the writer appended nothing while the readers ran"
expect_eq "every append is there" $((40 + n)) "$(count "$db" 'SELECT count(*) FROM nodes')"
expect_rc "verify at the end" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
finish
