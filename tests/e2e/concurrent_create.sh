#!/usr/bin/env bash
# Several processes creating one new database at once (docs/commands.md "Concurrent writers"):
# creation and migration are one write transaction, so of 8 imports and appends started together
# into a fresh path the first creates the schema and the others wait for the lock and proceed.
# Every process exits 0, every node arrives, and verify-invariants is clean. A file left empty
# (0 bytes) or without a schema by a killed first import is taken as new the same way.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
rounds=${CONCURRENT_CREATE_ROUNDS:-4}
writers=8
schema=$(ls "$(dirname "$0")"/../../share/schema/*.sql | wc -l)
for w in $(seq 1 $writers); do gen_session 3 "w${w}_" > "$WORK/s$w.jsonl"; done

for r in $(seq 1 "$rounds"); do
  db="$WORK/r$r.db"
  pids=()
  for w in $(seq 1 $writers); do
    if [ $((w % 2)) = 0 ]; then
      "$CTXFOLD" --db "$db" --session "S$w" append <"$WORK/s$w.jsonl" >/dev/null 2>"$WORK/err$w" &
    else
      "$CTXFOLD" --db "$db" import --format ctxfold "$WORK/s$w.jsonl" >/dev/null 2>"$WORK/err$w" &
    fi
    pids+=($!)
  done
  bad=0
  for w in $(seq 1 $writers); do
    wait "${pids[$((w-1))]}"; rc=$?
    if [ "$rc" != 0 ]; then bad=$((bad+1)); echo "round $r writer $w: exit $rc: $(head -c 300 "$WORK/err$w")" >&2; fi
  done
  expect_eq "round $r: every concurrent creator exits 0" 0 "$bad"
  expect_eq "round $r: every node arrived" $((writers * 12)) "$(count "$db" 'SELECT count(*) FROM nodes')"
  expect_eq "round $r: the schema is current" "$schema" "$(count "$db" 'PRAGMA user_version')"
  expect_rc "round $r: verify clean" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
done

# A 0-byte file (a first import killed before SQLite wrote a page) is a new database to a writer,
# and a clear "no ctxfold data yet" (exit 3) to a reader.
: > "$WORK/zero.db"
expect_rc "a read of a 0-byte file" 3 "$CTXFOLD" --db "$WORK/zero.db" sessions
case "$(cat "$WORK/err")" in *"holds no ctxfold data yet"*) ok ;; *) fail "read of a 0-byte file: $(cat "$WORK/err")" ;; esac
expect_rc "import into a 0-byte file" 0 "$CTXFOLD" --db "$WORK/zero.db" import --format ctxfold "$WORK/s1.jsonl"
expect_eq "its nodes" 12 "$(count "$WORK/zero.db" 'SELECT count(*) FROM nodes')"

# An interrupted creation: a file switched to WAL with no schema yet (the state a kill between
# the journal switch and the schema's commit leaves), and a file whose creating process was killed
# inside its first transaction (its -journal or -wal holds the uncommitted schema).
sqlite3 "$WORK/half.db" 'PRAGMA journal_mode=WAL;' >/dev/null
expect_rc "a read of a schema-less file" 3 "$CTXFOLD" --db "$WORK/half.db" log
expect_rc "append into a schema-less file" 0 "$CTXFOLD" --db "$WORK/half.db" --session S append <"$WORK/s2.jsonl"
expect_rc "verify after" 0 "$CTXFOLD" --db "$WORK/half.db" verify-invariants
mkfifo "$WORK/fifo"
sqlite3 "$WORK/killed.db" <"$WORK/fifo" >/dev/null 2>&1 & victim=$!
exec 3>"$WORK/fifo"
echo "PRAGMA journal_mode=WAL; BEGIN; CREATE TABLE sessions(x); CREATE TABLE nodes(y);" >&3
for _ in $(seq 1 50); do [ -e "$WORK/killed.db" ] && break; sleep 0.1; done
sleep 0.3
kill -9 "$victim"; wait "$victim" 2>/dev/null; exec 3>&-
expect_rc "import into a file whose creation was killed" 0 "$CTXFOLD" --db "$WORK/killed.db" import --format ctxfold "$WORK/s3.jsonl"
expect_eq "its nodes" 12 "$(count "$WORK/killed.db" 'SELECT count(*) FROM nodes')"
expect_rc "verify after" 0 "$CTXFOLD" --db "$WORK/killed.db" verify-invariants
# Someone else's SQLite file is still never touched.
sqlite3 "$WORK/other.db" 'CREATE TABLE t(x);'
expect_rc "a foreign SQLite file" 3 "$CTXFOLD" --db "$WORK/other.db" import --format ctxfold "$WORK/s1.jsonl"
expect_eq "left as it was" "t" "$(count "$WORK/other.db" "SELECT group_concat(name) FROM sqlite_master")"
finish
