#!/usr/bin/env bash
# The PostgreSQL backend (docs/backends.md): real Claude Code transcripts imported into a SQLite
# file and into a throwaway PostgreSQL server give byte-identical import, list, render (every
# format), context, export and describe output; the server refuses UPDATE, DELETE and TRUNCATE
# on the ledger; read commands on an empty server database exit 3 and create nothing; an
# unreachable server, a wrong password, another application's database, an empty database and a
# newer schema exit 4 or 3 without showing the password; a role that may only read reads, and its
# writes exit 4; a connection dropped mid-import exits 4 and stores nothing of that import.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pg_lib.sh"
need_transcripts
start_pg

files=("$CC_REJECTION" "$CC_WEBSEARCH" "$CC_COMPACTED" "$CC_RESUMED" "$CC_MANUAL")
lite="$WORK/lite.db"


for f in "${files[@]}"; do
  [ -f "$f" ] || { fail "missing transcript $f"; continue; }
  same "import $(basename "$f")" import "$f"
done
sessions=$("$CTXFOLD" --db "$lite" import "${files[0]}" | jq -r '.sessions[].session')
mapfile -t all < <(sqlite3 "$lite" "SELECT id FROM sessions WHERE kind='main' ORDER BY rowid")
expect_eq "sessions imported" "${#files[@]}" "${#all[@]}"
for s in "${all[@]}"; do
  same "list $s" --session "$s" list --limit 0
  for fmt in ctxfold openai anthropic gemini responses text; do
    same "render --format $fmt $s" --session "$s" render --format "$fmt"
  done
  same "render --strategy raw $s" --session "$s" render --strategy raw
  same "context $s" --session "$s" context
  for fmt in ctxfold openai anthropic; do same "export --format $fmt $s" --session "$s" export --format "$fmt"; done
  for fmt in claude-code codex; do
    same "export --format $fmt $s" --session "$s" export --format "$fmt" --id 00000000-0000-4000-8000-000000000000 --cwd /w
  done
  ids=$("$CTXFOLD" --db "$lite" --session "$s" list --limit 3 | jq -r '.items[].id')
  ids+=" $(sqlite3 "$lite" "SELECT id FROM nodes WHERE session='$s' ORDER BY seq LIMIT 2")"
  for id in $ids; do same "describe $id" --session "$s" describe "$id"; done
done
same "export --all-sessions" export --all-sessions
CTXFOLD_DB=$PGURL "$CTXFOLD" --session "${all[0]}" list >"$WORK/env" 2>&1
"$CTXFOLD" --db "$PGURL" --session "${all[0]}" list >"$WORK/flag" 2>&1
if cmp -s "$WORK/env" "$WORK/flag" && [ -s "$WORK/env" ]; then ok; else fail "CTXFOLD_DB names the server as --db does"; fi
# Importing again adds nothing on either engine.
expect_eq "node count" "$(sqlite3 "$lite" 'SELECT count(*) FROM nodes')" "$(pg_psql -tA -c 'SELECT count(*) FROM nodes')"
expect_eq "seq is 1..n" "$(pg_psql -tA -c 'SELECT count(*) FROM nodes')" "$(pg_psql -tA -c 'SELECT max(seq) FROM nodes')"

# The ledger is append-only on the server.
for sql in "UPDATE nodes SET kind = 'x'" "DELETE FROM nodes" "TRUNCATE nodes CASCADE" "UPDATE sessions SET kind = 'x'" \
           "DELETE FROM covers" "UPDATE covers SET pos = pos + 1" "DELETE FROM head_moves" "DELETE FROM source_records"; do
  if pg_psql -c "$sql" >"$WORK/out" 2>"$WORK/err"; then fail "the server accepted: $sql";
  elif grep -q 'append-only' "$WORK/err"; then ok; else fail "$sql: $(cat "$WORK/err")"; fi
done
expect_eq "nodes intact" "$(sqlite3 "$lite" 'SELECT count(*) FROM nodes')" "$(pg_psql -tA -c 'SELECT count(*) FROM nodes')"

# A read command on a new, empty server database says so and creates nothing there.
fresh=$(pg_createdb fresh)
for cmd in "report" "eval --generate" "render"; do
  # shellcheck disable=SC2086
  expect_rc "$cmd on an empty database" 3 "$CTXFOLD" --db "$fresh" $cmd </dev/null
  grep -q 'holds no ctxfold data' "$WORK/err" && ok || fail "$cmd: $(cat "$WORK/err")"
done
expect_eq "read commands wrote nothing" 0 "$(pg_psql -d fresh -tA -c "SELECT count(*) FROM pg_tables WHERE schemaname='public'")"
expect_rc "list on an empty database" 3 "$CTXFOLD" --db "$fresh" list
grep -q 'holds no ctxfold data' "$WORK/err" && ok || fail "empty: $(cat "$WORK/err")"

# Bad input: every message names the URL without the password.
nopass() { # nopass WHAT: neither password appears on stderr
  if grep -q -e "$PG_PASS" -e 'wr0ng-pass' "$WORK/err" "$WORK/out"; then fail "$1: the password is shown"; else ok; fi
}
expect_rc "unreachable server" 4 "$CTXFOLD" --db "postgresql://ctxfold:$PG_PASS@/ctxfold?host=$WORK/nowhere" list
nopass "unreachable server"
grep -q 'cannot open database' "$WORK/err" && ok || fail "unreachable: $(cat "$WORK/err")"
expect_rc "wrong password" 4 "$CTXFOLD" --db "postgresql://ctxfold:wr0ng-pass@/ctxfold?host=$PG_DIR" import "${files[0]}"
nopass "wrong password"
grep -q 'ctxfold:\*\*\*@' "$WORK/err" && ok || fail "wrong password: the URL is not named redacted: $(cat "$WORK/err")"
other=$(pg_createdb otherapp)
pg_psql -d otherapp -c 'CREATE TABLE customers (id integer PRIMARY KEY, name text)' >/dev/null
expect_rc "another application's database: import" 3 "$CTXFOLD" --db "$other" import "${files[0]}"
grep -q 'is not a ctxfold database' "$WORK/err" && ok || fail "other app: $(cat "$WORK/err")"
nopass "another application's database"
expect_rc "another application's database: list" 3 "$CTXFOLD" --db "$other" list
expect_eq "another application's database untouched" "customers" \
  "$(pg_psql -d otherapp -tA -c "SELECT string_agg(tablename, ',') FROM pg_tables WHERE schemaname='public'")"
newer=$(pg_createdb newer)
expect_rc "import into a new database" 0 "$CTXFOLD" --db "$newer" import "${files[0]}"
pg_psql -d newer -c 'UPDATE ctxfold_schema SET version = version + 1' >/dev/null
expect_rc "newer schema: list" 3 "$CTXFOLD" --db "$newer" list
grep -q 'newer than this ctxfold' "$WORK/err" && ok || fail "newer: $(cat "$WORK/err")"
expect_rc "newer schema: import" 3 "$CTXFOLD" --db "$newer" import "${files[1]}"
nopass "newer schema"

# A role that may only read (on a server what a read-only file is to readonly_db.sh): the read
# commands, dry runs and `prepare --budget` work; a compaction and an import exit 4 with the
# server's refusal, write nothing, and show no password.
pg_psql -c "CREATE ROLE reader LOGIN PASSWORD 'r3ader-pw'; GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader" >/dev/null
ro="postgresql://reader:r3ader-pw@/ctxfold?host=$PG_DIR"
for cmd in "list" "render" "verify-invariants" "grep -i error" "tokens" "compact --dry-run --window 20000" \
           "compact --dry-run --strategy lcm --window 20000" "prepare --budget 100000"; do
  # shellcheck disable=SC2086
  expect_rc "reader: $cmd" 0 "$CTXFOLD" --db "$ro" --session "${all[2]}" $cmd
done
before=$(pg_psql -tA -c 'SELECT max(seq) FROM nodes')
expect_rc "reader: compact" 4 "$CTXFOLD" --db "$ro" --session "${all[2]}" compact --window 20000 --force
grep -q 'permission denied' "$WORK/err" && ok || fail "reader compact: $(cat "$WORK/err")"
if grep -q 'r3ader-pw' "$WORK/err" "$WORK/out"; then fail "reader: the password is shown"; else ok; fi
expect_rc "reader: import" 4 "$CTXFOLD" --db "$ro" import "${files[1]}"
expect_eq "the reader wrote nothing" "$before" "$(pg_psql -tA -c 'SELECT max(seq) FROM nodes')"

# A connection dropped in the middle of an import (the server ends the importer's backend while its
# transaction holds written rows): exit 4 with the server's reason and no password, nothing of that
# import stored, the database verifies clean, and the same import again stores every node once.
gen=${CTXFOLD_GEN:-}
if [ -n "$gen" ] && [ -x "$gen" ]; then
  dropped=$(pg_createdb dropped)
  expect_rc "import before the drop" 0 "$CTXFOLD" --db "$dropped" import "${files[0]}"
  before=$(pg_psql -d dropped -tA -c 'SELECT count(*) FROM nodes')
  "$gen" --nodes 30000 --synthetic --seed 1 -q -o "$WORK/big.jsonl"
  "$CTXFOLD" --db "$dropped" import "$WORK/big.jsonl" >"$WORK/out" 2>"$WORK/err" &
  importer=$!
  writing=0
  for _ in $(seq 600); do  # until the import's transaction has written (it has an xid)
    writing=$(pg_psql -tA -c "SELECT count(*) FROM pg_stat_activity WHERE datname = 'dropped' AND backend_xid IS NOT NULL")
    [ "$writing" -gt 0 ] && break
    kill -0 "$importer" 2>/dev/null || break
    sleep 0.02
  done
  expect_eq "the import was caught writing" 1 "$writing"
  pg_psql -tA -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'dropped'" >/dev/null
  wait "$importer"
  expect_eq "dropped connection: exit" 4 "$?"
  grep -q -e 'terminat' -e 'closed the connection' "$WORK/err" && grep -q 'nothing of this write was committed' "$WORK/err" &&
    ok || fail "dropped connection: $(head -c 300 "$WORK/err")"
  nopass "dropped connection"
  expect_eq "nothing of the dropped import stored" "$before" "$(pg_psql -d dropped -tA -c 'SELECT count(*) FROM nodes')"
  expect_rc "verify after the drop" 0 "$CTXFOLD" --db "$dropped" verify-invariants --all-sessions
  expect_rc "the import again" 0 "$CTXFOLD" --db "$dropped" import "$WORK/big.jsonl"
  expect_eq "every node once" "0" \
    "$(pg_psql -d dropped -tA -c 'SELECT count(*) - count(DISTINCT id) FROM nodes')"
  expect_eq "seq has no gap" "$(pg_psql -d dropped -tA -c 'SELECT count(*) FROM nodes')" \
    "$(pg_psql -d dropped -tA -c 'SELECT max(seq) FROM nodes')"
  expect_rc "verify after the import again" 0 "$CTXFOLD" --db "$dropped" verify-invariants --all-sessions
else
  fail "no ctxfold-gen binary (CTXFOLD_GEN='$gen'): build the ctxfold-gen target"
fi

# A database of schema version 1 (its json path reader took '$[0].text' as the key "0]", its
# json_type named a string 'string', and it had no frame cache and no SQL views) is migrated to the newest version by the next write;
# SQLite's json_extract and json_type then read the same there.
v1=$(pg_createdb v1)
expect_rc "import into v1" 0 "$CTXFOLD" --db "$v1" import "${files[0]}"
pg_psql -d v1 -c "CREATE OR REPLACE FUNCTION ctxfold_json_path(path text) RETURNS text[] LANGUAGE sql IMMUTABLE STRICT AS \$\$
  SELECT CASE WHEN path = '\$' THEN '{}'::text[]
              ELSE string_to_array(regexp_replace(substr(path, 3), '\[([0-9]+)\]', '.\1', 'g'), '.') END \$\$;
  CREATE OR REPLACE FUNCTION json_type(doc text, path text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS
  \$\$ SELECT json_typeof(doc::json #> ctxfold_json_path(path)) \$\$;
  DROP TABLE snapcompact_frames;
  DROP VIEW v_sessions, v_nodes, v_summaries, v_usage; DROP FUNCTION ctxfold_int;
  UPDATE ctxfold_schema SET version = 1" >/dev/null
first_text="SELECT json_extract(content, '\$[0].text') FROM nodes WHERE role = 'user' AND json_type(content, '\$[0].text') = 'text' ORDER BY seq LIMIT 1"
expect_eq "version 1 misreads a leading index" "" "$(pg_psql -d v1 -tA -c "$first_text")"
expect_rc "a write migrates it" 0 "$CTXFOLD" --db "$v1" import "${files[0]}"
newest=$(find "$(dirname "$0")/../../share/schema/pg" -name '[0-9]*.sql' | wc -l)  # one migration a version
expect_eq "now version $newest (the newest)" "$newest" "$(pg_psql -d v1 -tA -c 'SELECT version FROM ctxfold_schema')"
expect_eq "json_extract('\$[0].text') and json_type read as on SQLite" "$(sqlite3 "$lite" "$first_text")" "$(pg_psql -d v1 -tA -c "$first_text")"
[ -n "$(sqlite3 "$lite" "$first_text")" ] && ok || fail "no user text block to read"
finish
