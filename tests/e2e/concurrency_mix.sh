#!/usr/bin/env bash
# Writers and readers together on one database, for a bounded number of rounds (iterations, not
# time): two appenders, an importer, a compactor (extractive summarizer), a verifier and a reader.
# Then: no verify run reported a violation (each read one snapshot), no node an append or import
# reported written is missing, and verify-invariants is clean. A writer may wait for the lock; one
# that gives up (exit 4, "database is locked") wrote nothing and is counted, never lost.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
appends=${MIX_APPENDS:-30}      # per appender
imports=${MIX_IMPORTS:-6}
compactions=${MIX_COMPACTIONS:-6}
verifies=${MIX_VERIFIES:-24}
reads=${MIX_READS:-20}
db="$WORK/mix.db"
gen_session 20 A1_ | "$CTXFOLD" --db "$db" --session A1 append >/dev/null || fail "seed A1"
gen_session 20 A2_ | "$CTXFOLD" --db "$db" --session A2 append >/dev/null || fail "seed A2"
for k in $(seq 1 "$imports"); do gen_session 3 "I${k}_" > "$WORK/imp$k.jsonl"; done

appender() { # appender SESSION
  for i in $(seq 1 "$appends"); do
    jq -cn --arg id "$1_x$i" '{id:$id, role:"user", content:"next step for src/mod.cpp"}' \
      | "$CTXFOLD" --db "$db" --session "$1" append >/dev/null 2>>"$WORK/$1.err"
    rc=$?; echo "$rc" >>"$WORK/writes.rc"
    [ "$rc" = 0 ] && echo "$1_x$i" >>"$WORK/written.ids"
  done
}
importer() {
  for k in $(seq 1 "$imports"); do
    "$CTXFOLD" --db "$db" import --format ctxfold "$WORK/imp$k.jsonl" >/dev/null 2>>"$WORK/import.err"
    rc=$?; echo "$rc" >>"$WORK/writes.rc"
    [ "$rc" = 0 ] && jq -r .id "$WORK/imp$k.jsonl" >>"$WORK/written.ids"
  done
}
compactor() {
  for k in $(seq 1 "$compactions"); do
    "$CTXFOLD" --db "$db" --session A1 compact --force --window 20000 >/dev/null 2>>"$WORK/compact.err"
    echo "$?" >>"$WORK/compact.rc"
  done
}
verifier() {
  for k in $(seq 1 "$verifies"); do
    "$CTXFOLD" --db "$db" verify-invariants --all-sessions >"$WORK/v$k.json" 2>"$WORK/v$k.err"
    echo "$?" >>"$WORK/verify.rc"
  done
}
reader() {
  for k in $(seq 1 "$reads"); do
    for cmd in render log "grep src/mod --limit 2"; do
      "$CTXFOLD" --db "$db" --session A1 $cmd >/dev/null 2>>"$WORK/read.err"; echo "$?" >>"$WORK/read.rc"
    done
  done
}
appender A1 & p1=$!
appender A2 & p2=$!
importer & p3=$!
compactor & p4=$!
verifier & p5=$!
reader & p6=$!
wait $p1 $p2 $p3 $p4 $p5 $p6

tally() { sort "$1" | uniq -c | tr '\n' ' '; }
echo "writes (exit: count): $(tally "$WORK/writes.rc")" >&2
echo "compactions: $(tally "$WORK/compact.rc"); verifies: $(tally "$WORK/verify.rc"); reads: $(tally "$WORK/read.rc")" >&2
violations=$(grep -cx 1 "$WORK/verify.rc")
expect_eq "verify runs that reported a violation (of $verifies)" 0 "$violations"
if [ "$violations" != 0 ]; then
  for f in "$WORK"/v*.json; do jq -c '[.checks[]? | select(.ok == false) | .violations[0].message]' "$f"; done | sort | uniq -c >&2
fi
expect_eq "verify runs that failed otherwise" 0 "$(grep -cvx '[01]' "$WORK/verify.rc")"
expect_eq "read commands that failed" 0 "$(grep -cvx 0 "$WORK/read.rc")"
expect_eq "writes that failed other than waiting for the lock" 0 "$(grep -cvx '[04]' "$WORK/writes.rc")"
expect_eq "compactions that failed other than waiting for the lock" 0 "$(grep -cvx '[04]' "$WORK/compact.rc")"
written=$(sort -u "$WORK/written.ids" | wc -l)
[ "$written" -gt 0 ] && ok || fail "no write succeeded"
sort -u "$WORK/written.ids" > "$WORK/want"
sqlite3 "$db" 'SELECT id FROM nodes' | sort -u > "$WORK/have"
expect_eq "nodes reported written but missing (of $written)" 0 "$(comm -23 "$WORK/want" "$WORK/have" | wc -l)"
expect_rc "verify at the end" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
finish
