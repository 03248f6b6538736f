#!/usr/bin/env bash
# Faults lose nothing (docs/strategies.md "The compaction bracket"): summarizer error, empty,
# non-reducing and garbage answers; SIGKILL before compact/start, during the summarizer call and
# after the summary node (test hook CTXFOLD_TEST_CRASH_AT); a second writer appending while the
# summarizer runs.
# After each: exit as documented, verify-invariants passes, render is as before, a retry works.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
fresh() { db_rm "$1"; gen_session 16 | "$CTXFOLD" --db "$1" --session s append >/dev/null 2>&1; }
reads() { "$CTXFOLD" --db "$1" render | jq -c .reads; }
summaries() { count "$1" "select count(*) from nodes where kind='summary'"; }
retry_works() { # retry_works DB WHAT
  expect_rc "$2: retry" 0 "$CTXFOLD" --db "$1" compact --window 16000
  expect_eq "$2: retry compacts" "compacted" "$(jq -r .status "$WORK/out")"
  expect_rc "$2: verify after retry" 0 "$CTXFOLD" --db "$1" verify-invariants
}

db="$WORK/f.db"
for case in "error|exit 1" "empty|cat >/dev/null" \
            "non-reducing|jq -r '(.previous_summary + .transcript) as \$t | \$t[0:((\$t|length)*96/100|floor)]'" \
            "garbage|cat >/dev/null; printf '\\377\\376\\200'"; do
  name=${case%%|*}; cmd=${case#*|}
  fresh "$db"
  r0=$(reads "$db")
  expect_rc "$name: exit 4" 4 "$CTXFOLD" --db "$db" compact --window 16000 --summarizer "command:$cmd"
  expect_eq "$name: status" "failed" "$(jq -r .status "$WORK/out")"
  expect_eq "$name: one call, no loop" "1" "$(jq -r .summarizer.calls "$WORK/out")"
  [ -s "$WORK/err" ] && ok || fail "$name: no reason on stderr"
  expect_eq "$name: no summary" "0" "$(summaries "$db")"
  expect_eq "$name: render unchanged" "$r0" "$(reads "$db")"
  expect_eq "$name: bracket closed with an error" "compact/start compact/end" "$(count "$db" "select type from events where type like 'compact/%' order by seq" | xargs)"
  expect_eq "$name: error recorded" "1" "$(count "$db" "select count(*) from events where type='compact/end' and json_extract(payload,'\$.error') is not null")"
  expect_rc "$name: verify" 0 "$CTXFOLD" --db "$db" verify-invariants
  retry_works "$db" "$name"
done

# SIGKILL at three points.
for point in before_start after_start after_summary; do
  fresh "$db"
  r0=$(reads "$db"); n0=$(count "$db" 'select count(*) from nodes')
  (CTXFOLD_TEST_CRASH_AT=$point exec "$CTXFOLD" --db "$db" compact --window 16000 >/dev/null 2>&1) 2>/dev/null
  expect_eq "$point: killed" "137" "$?"
  expect_eq "$point: no summary landed" "0" "$(summaries "$db")"
  expect_eq "$point: nothing lost" "$n0" "$(count "$db" 'select count(*) from nodes')"
  expect_eq "$point: render unchanged" "$r0" "$(reads "$db")"
  expect_rc "$point: verify" 0 "$CTXFOLD" --db "$db" verify-invariants
  retry_works "$db" "$point"
done

# SIGKILL during the summarizer call (a summarizer that sleeps).
fresh "$db"
r0=$(reads "$db")
"$CTXFOLD" --db "$db" compact --window 16000 --summarizer "command:echo \$\$ >'$WORK/sum.pid'; sleep 30; echo late" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -s "$WORK/sum.pid" ] && break; sleep 0.1; done
[ -s "$WORK/sum.pid" ] && ok || fail "the summarizer never started"
kill -9 "$pid"; wait "$pid" 2>/dev/null
[ -s "$WORK/sum.pid" ] && kill -9 "$(cat "$WORK/sum.pid")" 2>/dev/null
expect_eq "during summarizer: orphan start only" "compact/start" "$(count "$db" "select type from events where type like 'compact/%'" | xargs)"
expect_eq "during summarizer: no summary" "0" "$(summaries "$db")"
expect_eq "during summarizer: render unchanged" "$r0" "$(reads "$db")"
expect_rc "during summarizer: verify" 0 "$CTXFOLD" --db "$db" verify-invariants
retry_works "$db" "during summarizer"

# A second process appends while the summarizer runs.
fresh "$db"
"$CTXFOLD" --db "$db" compact --window 16000 --summarizer "command:cat >'$WORK/req.json'; touch '$WORK/started'; while [ ! -e '$WORK/go' ]; do sleep 0.05; done; jq -r '.transcript[0:2000]' '$WORK/req.json'" >"$WORK/race.json" 2>"$WORK/race.err" &
pid=$!
for _ in $(seq 1 200); do [ -e "$WORK/started" ] && break; sleep 0.05; done
echo '{"id":"D","role":"user","content":"appended while compacting"}' | "$CTXFOLD" --db "$db" --session s append >/dev/null 2>&1
expect_eq "append during compaction" 0 $?
touch "$WORK/go"
wait "$pid"; rc=$?
expect_eq "racing compaction exits 4" 4 "$rc"
expect_eq "racing compaction commits nothing" "compact.source_changed" "$(jq -r .error "$WORK/race.json")"
expect_eq "D survives once" "1" "$(reads "$db" | jq '[.[] | select(. == "D")] | length')"
expect_eq "D is HEAD" "D" "$("$CTXFOLD" --db "$db" render | jq -r .head)"
expect_rc "race: verify" 0 "$CTXFOLD" --db "$db" verify-invariants
retry_works "$db" "race"
expect_eq "D still read once after the retry" "1" "$(reads "$db" | jq '[.[] | select(. == "D")] | length')"
finish
