#!/usr/bin/env bash
# SIGINT, SIGTERM or SIGHUP to ctxfold while a command: summarizer runs: ctxfold kills the
# summarizer's process group (the command and what it started), says so on stderr and ends as the
# signal would (exit 128+N: 130 for SIGINT, docs/commands.md "Exit codes"). Nothing of the
# compaction is committed: no summary, render unchanged, only the compact/start orphan a crash
# leaves (verify-invariants passes), and a retry compacts.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
set -m  # background jobs keep SIGINT (a non-interactive shell would start them with it ignored)
db="$WORK/s.db"
reads() { "$CTXFOLD" --db "$1" render | jq -c .reads; }
# Running: it exists and is not a zombie (an orphan's zombie waits for init to reap it).
alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && [ -n "$st" ] && [ "${st:0:1}" != Z ]; }

for case in INT:130 TERM:143 HUP:129; do
  sig=${case%%:*} want=${case##*:}
  db_rm "$db"; rm -f "$WORK"/*.pid
  gen_session 16 | "$CTXFOLD" --db "$db" --session s append >/dev/null 2>&1
  r0=$(reads "$db")
  # The command starts a grandchild (sleep) in its group and records both pids.
  "$CTXFOLD" --db "$db" compact --window 16000 \
    --summarizer "command:sleep 60 & echo \$! >'$WORK/grand.pid'; echo \$\$ >'$WORK/sum.pid'; wait" \
    >"$WORK/out" 2>"$WORK/err" &
  pid=$!
  for _ in $(seq 1 100); do [ -s "$WORK/sum.pid" ] && [ -s "$WORK/grand.pid" ] && break; sleep 0.1; done
  [ -s "$WORK/sum.pid" ] && ok || fail "SIG$sig: the summarizer never started"
  kill -s "$sig" "$pid"
  wait "$pid"; rc=$?
  expect_eq "SIG$sig: exit $want" "$want" "$rc"
  sleep 0.2
  if alive "$(cat "$WORK/sum.pid")"; then fail "SIG$sig: the summarizer command is still running"; kill -9 "$(cat "$WORK/sum.pid")"; else ok; fi
  if alive "$(cat "$WORK/grand.pid")"; then fail "SIG$sig: the command's child is still running"; kill -9 "$(cat "$WORK/grand.pid")"; else ok; fi
  grep -q "interrupted by SIG$sig" "$WORK/err" && ok || fail "SIG$sig: stderr says why: $(cat "$WORK/err")"
  expect_eq "SIG$sig: nothing on stdout" "" "$(cat "$WORK/out")"
  expect_eq "SIG$sig: no summary" "0" "$(count "$db" "select count(*) from nodes where kind='summary'")"
  expect_eq "SIG$sig: only the orphan start" "compact/start" "$(count "$db" "select type from events where type like 'compact/%'" | xargs)"
  expect_eq "SIG$sig: render unchanged" "$r0" "$(reads "$db")"
  expect_rc "SIG$sig: verify" 0 "$CTXFOLD" --db "$db" verify-invariants
done
expect_rc "retry after the interrupt" 0 "$CTXFOLD" --db "$db" compact --window 16000
expect_eq "retry compacts" "compacted" "$(jq -r .status "$WORK/out")"
finish
