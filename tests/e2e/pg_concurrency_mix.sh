#!/usr/bin/env bash
# The concurrency mix (tests/e2e/concurrency_mix.inc) on a throwaway PostgreSQL server
# (docs/backends.md "Many writers"): two appenders, an importer, a compactor racing the appends on
# its session, a verifier and a reader, at once on one server database. No verify run reports a
# violation, no node reported written is missing, and the database verifies clean at the end; a
# server's writer waits for the lock as long as the queue takes, so every write succeeds, and a
# compaction fails only when an append raced it. Then that race, made certain by a summarizer
# that waits for the append (as compact_faults.sh does on a file).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pg_lib.sh"
start_pg
db=$(pg_createdb mix)
stored_ids() { pg_psql -d mix -tA -c 'SELECT id FROM nodes'; }
source "$(dirname "$0")/concurrency_mix.inc"
expect_eq "server writes that did not succeed" 0 "$(grep -cvx 0 "$WORK/writes.rc")"
# A compaction on a server fails only when an append to its session raced it (exit 4,
# compact.source_changed: docs/strategies.md), never for want of the lock.
expect_eq "server compactions refused other than for a racing append" "$(grep -cx 4 "$WORK/compact.rc")" \
  "$(grep -c 'source changed while the summarizer ran' "$WORK/compact.err")"
expect_eq "server compactions that failed otherwise" 0 "$(grep -cvx '[04]' "$WORK/compact.rc")"
echo "summaries committed on A1: $(pg_psql -d mix -tA -c "SELECT count(*) FROM nodes WHERE session='A1' AND kind='summary'")" >&2

# The race made certain: the summarizer waits until an append to its session, and one to another
# session, have committed. The compaction commits nothing (exit 4, compact.source_changed, its
# compact/end saying so), the racing node is HEAD, read once; the append elsewhere does not stop a
# compaction; a retry commits, and the database verifies clean.
gen_session 12 A3_ | "$CTXFOLD" --db "$db" --session A3 append >/dev/null || fail "seed A3"
gated() { # gated SESSION: compact SESSION with a summarizer that waits for $WORK/go
  rm -f "$WORK/started" "$WORK/go"
  "$CTXFOLD" --db "$db" --session "$1" compact --force --window 8000 --summarizer \
    "command:cat >'$WORK/req.json'; touch '$WORK/started'; while [ ! -e '$WORK/go' ]; do sleep 0.05; done; jq -r '.transcript[0:2000]' '$WORK/req.json'" \
    >"$WORK/race.json" 2>"$WORK/race.err" &
  gated_pid=$!
  for _ in $(seq 1 400); do [ -e "$WORK/started" ] && break; sleep 0.05; done
  [ -e "$WORK/started" ] && ok || fail "the gated summarizer never started: $(head -c 300 "$WORK/race.err")"
}
gated A3
jq -cn '{id:"A3_raced", role:"user", content:"appended while compacting"}' | "$CTXFOLD" --db "$db" --session A3 append >/dev/null
expect_eq "append to the session during its compaction" 0 $?
touch "$WORK/go"; wait "$gated_pid"; rc=$?
expect_eq "the raced compaction exits 4" 4 "$rc"
expect_eq "and commits nothing" compact.source_changed "$(jq -r .error "$WORK/race.json")"
expect_eq "no summary on A3" 0 "$(pg_psql -d mix -tA -c "SELECT count(*) FROM nodes WHERE session='A3' AND kind='summary'")"
expect_eq "its compact/end says why" compact.source_changed \
  "$(pg_psql -d mix -tA -c "SELECT payload::json->'error'->>'code' FROM events WHERE session='A3' AND type='compact/end' ORDER BY seq DESC LIMIT 1")"
expect_eq "the racing node is HEAD" A3_raced "$("$CTXFOLD" --db "$db" --session A3 render | jq -r .head)"
raced_reads() { "$CTXFOLD" --db "$db" --session A3 render | jq '[.messages[] | select(tojson | contains("appended while compacting"))] | length'; }
expect_eq "and read once" 1 "$(raced_reads)"
gated A3
jq -cn '{id:"A2_elsewhere", role:"user", content:"appended to another session"}' | "$CTXFOLD" --db "$db" --session A2 append >/dev/null
expect_eq "append to another session during a compaction" 0 $?
touch "$WORK/go"; wait "$gated_pid"; rc=$?
expect_eq "that compaction commits" "0 compacted" "$rc $(jq -r .status "$WORK/race.json")"
expect_eq "one summary on A3" 1 "$(pg_psql -d mix -tA -c "SELECT count(*) FROM nodes WHERE session='A3' AND kind='summary'")"
expect_eq "the racing node still read once after it" 1 "$(raced_reads)"
expect_rc "verify after the races" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
finish
