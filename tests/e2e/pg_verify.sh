#!/usr/bin/env bash
# verify-invariants on the PostgreSQL backend (docs/backends.md, docs/invariants.md "I11"): real
# Claude Code transcripts imported into a SQLite file and into a throwaway server verify with the
# same JSON, JUnit and text reports (the database's name aside); the server's I11 reports a
# disabled append-only trigger and a row that references a missing row, I1 a node changed behind
# the disabled trigger; a rolled-back import leaves no seq gap; the password is never shown.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pg_lib.sh"
need_transcripts
start_pg

files=("$CC_REJECTION" "$CC_COMPACTED" "$CC_RESUMED" "$CC_MANUAL")
lite="$WORK/lite.db"
shown_url=$PG_SHOWN_URL


for f in "${files[@]}"; do
  [ -f "$f" ] || { fail "missing transcript $f"; continue; }
  "$CTXFOLD" --db "$lite" import "$f" >/dev/null 2>&1 || fail "import $f into SQLite"
  "$CTXFOLD" --db "$PGURL" import "$f" >/dev/null 2>&1 || fail "import $f into PostgreSQL"
done
same "verify --all-sessions" verify-invariants --all-sessions
expect_eq "verify is clean" "true" "$(jq -r .ok "$WORK/b")"
expect_eq "eleven checks" "11" "$(jq '.checks | length' "$WORK/b")"
same "verify --quick --all-sessions" verify-invariants --quick --all-sessions
same "verify --format junit" verify-invariants --all-sessions --format junit
same "verify --text" --text verify-invariants --all-sessions
mapfile -t all < <(sqlite3 "$lite" "SELECT id FROM sessions WHERE kind='main' ORDER BY rowid")
same "verify --session" --session "${all[1]}" verify-invariants
# The positional form names the server; the report names it without the password.
expect_rc "verify URL" 0 "$CTXFOLD" verify-invariants "$PGURL" --all-sessions
X="$shown_url" expect_eq "the report names the URL redacted" "$shown_url" "$(jq -r .db "$WORK/out")"

# A rolled-back import (--strict with a warning) consumes sequence values on the server; the next
# write starts again past the largest seq, so I1 finds no gap.
{ head -3 "${files[0]}"; printf '{"type":"user","message":{"role":"user","content":"cut off\n'; } >"$WORK/bad.jsonl"
before=$(pg_psql -tA -c 'SELECT count(*) FROM nodes')
expect_rc "a strict import that rolls back" 3 "$CTXFOLD" --db "$PGURL" import --strict "$CC_WEBSEARCH" "$WORK/bad.jsonl"
expect_eq "nothing of it written" "$before" "$(pg_psql -tA -c 'SELECT count(*) FROM nodes')"
expect_rc "import after the rollback" 0 "$CTXFOLD" --db "$PGURL" import "$CC_WEBSEARCH"
expect_eq "seq is 1..n after the rollback" "$(pg_psql -tA -c 'SELECT count(*) FROM nodes')" "$(pg_psql -tA -c 'SELECT max(seq) FROM nodes')"
expect_rc "verify after the rollback" 0 "$CTXFOLD" --db "$PGURL" verify-invariants --all-sessions

# Broken on purpose, each in its own database: every check that can fail does.
broken() { # broken NAME: a new database holding the first transcript; prints its URL
  local url; url=$(pg_createdb "$1")
  "$CTXFOLD" --db "$url" import "${files[0]}" >/dev/null 2>&1 || fail "import into $1"
  printf '%s\n' "$url"
}
violated() { # violated WHAT URL CHECK PATTERN: verify exits 1 and CHECK reports PATTERN
  expect_rc "$1: verify exits 1" 1 "$CTXFOLD" --db "$2" verify-invariants --all-sessions
  if jq -e --arg id "$3" --arg re "$4" '.checks[] | select(.id == $id) | .violations[] | select(.message | test($re))' \
      "$WORK/out" >/dev/null; then ok; else fail "$1: no $3 violation matching '$4': $(head -c 600 "$WORK/out")"; fi
}
url=$(broken trig)
pg_psql -d trig -c 'ALTER TABLE nodes DISABLE TRIGGER nodes_no_change' >/dev/null
violated "a disabled trigger" "$url" I11 'nodes_no_change.*disabled'
pg_psql -d trig -c "UPDATE nodes SET content = '[]' WHERE seq = 3" >/dev/null
violated "a node changed behind the disabled trigger" "$url" I1 'digest|changed'
url=$(broken gone)
pg_psql -d gone -c 'DROP TRIGGER events_no_truncate ON events' >/dev/null
violated "a dropped trigger" "$url" I11 'events_no_truncate.*missing'
url=$(broken keys)
pg_psql -d keys -c "SET session_replication_role = replica; INSERT INTO head_moves(session, node_id, previous, cause, boundary_seq) SELECT session, 'no-such-node', NULL, 'checkout', 1 FROM nodes LIMIT 1" >/dev/null
violated "a head move to a missing node" "$url" I11 "head_moves.*'nodes'.*node_id"
url=$(broken gap)
pg_psql -d gap -c "SET session_replication_role = replica; DELETE FROM covers; DELETE FROM node_marks; DELETE FROM nodes WHERE seq = (SELECT max(seq) - 1 FROM nodes)" >/dev/null 2>&1
violated "a vanished node" "$url" I1 'vanished'
finish
