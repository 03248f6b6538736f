#!/usr/bin/env bash
# verify-invariants for CI: JUnit XML that parses, exit codes 0/1/3/4, several databases per call.
source "$(dirname "$0")/lib.sh"
need_transcripts
T="$CTXFOLD_TRANSCRIPTS/claude-code/compaction_manual_v2.1.39_TRUNCATED/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
S=ae4a77f8-aedd-4bc1-888f-c94edc91af04
valid_xml() { python3 -c "import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])" "$1"; }

"$CTXFOLD" --db "$WORK/good.db" import "$T" >/dev/null 2>&1 || fail "import"
"$CTXFOLD" --db "$WORK/good.db" --session "$S" compact --force --window 20000 >/dev/null || fail "compact"

# Healthy: exit 0, JSON with sources, junit that parses with one testcase per invariant per session.
expect_rc "healthy json" 0 "$CTXFOLD" --db "$WORK/good.db" verify-invariants --all-sessions
expect_eq "json ok" "true" "$(jq -r .ok "$WORK/out")"
# On a server (tests/e2e/server/run.sh) the database is the URL standing for the file.
if on_server; then
  expect_eq "json db" "postgresql://" "$(jq -r '.db[0:13]' "$WORK/out")"
else
  expect_eq "json db" "$WORK/good.db" "$(jq -r .db "$WORK/out")"
fi
expect_eq "every check has a source" "0" "$(jq '[.checks[] | select((.source // "") == "")] | length' "$WORK/out")"
expect_rc "healthy junit" 0 "$CTXFOLD" verify-invariants "$WORK/good.db" --all-sessions --format junit
cp "$WORK/out" "$WORK/good.xml"
if valid_xml "$WORK/good.xml"; then ok; else fail "junit does not parse"; fi
nsess=$("$CTXFOLD" --db "$WORK/good.db" sessions | jq -s 'map(select(.type=="session")) | length')
ncases=$(grep -c '<testcase ' "$WORK/good.xml")
# 10 per-session invariants per session (I1-I10), I11 once for the database.
expect_eq "testcases" "$((nsess * 10 + 1))" "$ncases"
grep -q 'classname="(database)" name="I11 SQLite integrity"' "$WORK/good.xml" && ok || fail "no (database) I11 testcase"
expect_rc "quick" 0 "$CTXFOLD" verify-invariants "$WORK/good.db" --quick
expect_eq "quick skips" "I4 I5 I9 I10" "$(jq -r '[.checks[] | select(.skipped) | .id] | join(" ")' "$WORK/out")"
expect_rc "text" 0 "$CTXFOLD" verify-invariants "$WORK/good.db" --text
grep -q "all invariants hold" "$WORK/out" && ok || fail "text view"

# A violation: HEAD moved by a compaction. Exit 1, junit failure naming the session.
db_cp "$WORK/good.db" "$WORK/bad.db"
db_tamper "$WORK/bad.db" "UPDATE head_moves SET cause='compact' WHERE seq=(SELECT max(seq) FROM head_moves WHERE session='$S');"
expect_rc "violation" 1 "$CTXFOLD" verify-invariants "$WORK/bad.db" --session "$S"
expect_eq "failing ids" "I6" "$(jq -r '[.checks[] | select(.ok|not) | .id] | join(" ")' "$WORK/out")"
expect_rc "violation junit" 1 "$CTXFOLD" verify-invariants "$WORK/bad.db" --session "$S" --format junit
cp "$WORK/out" "$WORK/bad.xml"
if valid_xml "$WORK/bad.xml"; then ok; else fail "violation junit does not parse"; fi
expect_eq "one failure" "1" "$(grep -c '<failure ' "$WORK/bad.xml")"
grep -q "classname=\"$S\" name=\"I6 HEAD integrity\"" "$WORK/bad.xml" && ok || fail "I6 testcase"

# Bad input: exit 3. A file that is not a database, or half of one, is SQLite's alone (a server's
# damaged databases: pg_verify.sh, pg_backend.sh).
db_sql "$WORK/other.db" "CREATE TABLE accounts(id INTEGER PRIMARY KEY); INSERT INTO accounts VALUES(1);"
expect_rc "other application" 3 "$CTXFOLD" verify-invariants "$WORK/other.db"
db_cp "$WORK/good.db" "$WORK/newer.db"
if on_server; then
  db_sql "$WORK/newer.db" "UPDATE ctxfold_schema SET version = version + 1"
else
  sqlite3 "$WORK/newer.db" "PRAGMA user_version=999;"
fi
expect_rc "newer schema" 3 "$CTXFOLD" verify-invariants "$WORK/newer.db"
grep -q "newer" "$WORK/err" && ok || fail "newer schema message"
if on_server; then
  bad3=$WORK/other.db
else
  printf 'not sqlite at all\n' > "$WORK/text.db"
  expect_rc "not sqlite" 3 "$CTXFOLD" verify-invariants "$WORK/text.db"
  sqlite3 "$WORK/good.db" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
  head -c $(( $(stat -c %s "$WORK/good.db") / 2 )) "$WORK/good.db" > "$WORK/trunc.db"
  expect_rc "truncated" 3 "$CTXFOLD" verify-invariants "$WORK/trunc.db" --all-sessions
  bad3=$WORK/text.db
fi
# Cannot open: exit 4.
expect_rc "missing" 4 "$CTXFOLD" verify-invariants "$WORK/missing.db"
on_server || { grep -q "missing.db" "$WORK/err" && ok || fail "missing file message"; }

# Several databases: one JSON line each, the worst exit code wins; junit holds one suite each.
expect_rc "several clean" 0 "$CTXFOLD" verify-invariants "$WORK/good.db" "$WORK/good.db"
expect_eq "json lines" "2" "$(jq -c .ok "$WORK/out" | wc -l)"
expect_rc "several, one violation" 1 "$CTXFOLD" verify-invariants "$WORK/good.db" "$WORK/bad.db"
expect_eq "per-db ok" "true false" "$(jq -r .ok "$WORK/out" | tr '\n' ' ' | sed 's/ $//')"
expect_rc "several, worst wins" 4 "$CTXFOLD" verify-invariants "$WORK/bad.db" "$bad3" "$WORK/missing.db" --format junit
cp "$WORK/out" "$WORK/several.xml"
if valid_xml "$WORK/several.xml"; then ok; else fail "several junit does not parse"; fi
expect_eq "suites" "3" "$(grep -c '<testsuite ' "$WORK/several.xml")"
expect_eq "errors" "2" "$(grep -c '<error ' "$WORK/several.xml")"
expect_rc "several, 3 beats 1" 3 "$CTXFOLD" verify-invariants "$WORK/bad.db" "$WORK/newer.db"

# Locked by a writer: verify waits (busy timeout) and exits 4 with a clear message. SQLite's own
# locking: a server's readers never wait for a writer.
on_server && finish
cp "$WORK/good.db" "$WORK/locked.db"
sqlite3 "$WORK/locked.db" "PRAGMA journal_mode=DELETE;" >/dev/null
( sqlite3 "$WORK/locked.db" "BEGIN EXCLUSIVE; SELECT count(*) FROM nodes;" ".shell sleep 8" "COMMIT;" >/dev/null 2>&1 ) &
lockpid=$!
sleep 1
expect_rc "locked" 4 "$CTXFOLD" verify-invariants "$WORK/locked.db"
grep -qi "locked" "$WORK/err" && ok || fail "locked message: $(cat "$WORK/err")"
wait "$lockpid" 2>/dev/null
finish
