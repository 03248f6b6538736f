# Shared helpers for the end-to-end CLI tests (sourced, not a test itself).
set -uo pipefail
: "${CTXFOLD:?CTXFOLD must name the ctxfold binary}"
: "${CTXFOLD_TRANSCRIPTS:=}"
# The folder of the ctxfold binary (the build tree: generated files, artifacts); set by
# tests/e2e/server/run.sh, whose $CTXFOLD is a stand-in elsewhere.
: "${CTXFOLD_BUILD:=$(dirname "$CTXFOLD")}"
export LC_ALL=C.UTF-8 TZ=UTC
WORK=$(mktemp -d)
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
trap 'rm -rf "$WORK"' EXIT
failures=0
checks=0
fail() { echo "FAIL: $*" >&2; failures=$((failures+1)); }
ok() { checks=$((checks+1)); }
expect_eq() { # expect_eq WHAT EXPECTED ACTUAL
  if [ "$2" == "$3" ]; then ok; else fail "$1: expected '$2', got '$3'"; fi
}
expect_rc() { # expect_rc WHAT EXPECTED_RC CMD...
  local what=$1 want=$2; shift 2
  "$@" >"$WORK/out" 2>"$WORK/err"; local rc=$?
  if [ "$rc" == "$want" ]; then ok; else fail "$what: exit $rc, wanted $want; stderr: $(head -c 400 "$WORK/err")"; fi
}
# skip REASON: the test cannot run here; exit 77, which ctest reports as skipped (never passed).
skip() { echo "SKIP: $*" >&2; exit 77; }
need_transcripts() {
  if [ -z "$CTXFOLD_TRANSCRIPTS" ] || [ ! -d "$CTXFOLD_TRANSCRIPTS" ]; then
    skip "no transcripts at '$CTXFOLD_TRANSCRIPTS'"
  fi
}
# transcripts_for_run: the transcript paths on stdin (one per line, sorted), filtered for this run:
# every one on SQLite; under tests/e2e/server/run.sh the first two of each client's folder (one of
# them a compaction), for the tests that loop over the whole tree with dozens of commands per file
# (a server command costs 4-8x a file's: list 52 against 14 ms, render 70 against 10 ms on one
# imported session; the whole tree runs on SQLite in the same CI).
transcripts_for_run() {
  if on_server; then
    awk -v root="${CTXFOLD_TRANSCRIPTS%/}/" 'index($0, root) == 1 { split(substr($0, length(root) + 1), a, "/"); if (++n[a[1]] <= 2) print }'
  else
    cat
  fi
}
# db_sql DB SQL: the rows of SQL on database file DB as `sqlite3 DB SQL` prints them (columns
# joined by '|'). Under tests/e2e/server/run.sh the test's databases are server databases
# (tests/e2e/server/README.md): SQL then runs there through psql, whose -tA output has the same
# shape. Write SQL both engines read (docs/backends.md "Writing SQL for both engines").
db_sql() {
  if on_server; then
    source "$E2E_DIR/server/map.sh"
    local name
    name=$(server_db_name "$1")
    server_db_create "$name"
    "$CTXFOLD_E2E_PSQL" -X -q -tA -v ON_ERROR_STOP=1 -d "$name" -c "$2"
  else
    sqlite3 "$1" "$2"
  fi
}
# on_server: whether this run is under tests/e2e/server/run.sh (the databases are a server's), for
# the few checks of what only a SQLite file keeps (docs/backends.md "What works").
on_server() { [ -n "${CTXFOLD_E2E_PG_DIR:-}" ]; }
# db_rm DB: removes database file DB with its -wal and -shm; under tests/e2e/server/run.sh, drops
# the server database standing for it (the next command naming DB starts a new one).
db_rm() {
  if on_server; then
    source "$E2E_DIR/server/map.sh"
    local name
    name=$(server_db_name "$1")
    PGOPTIONS="-c client_min_messages=warning" "$CTXFOLD_E2E_PSQL" -X -q -v ON_ERROR_STOP=1 -d postgres \
      -c "DROP DATABASE IF EXISTS $name" >/dev/null
    rm -f "$CTXFOLD_E2E_PG_MARKS/$name"
  else
    rm -f "$1" "$1-wal" "$1-shm"
  fi
}
# db_cp FROM TO: copies database file FROM to TO; under tests/e2e/server/run.sh, the server
# database standing for TO becomes a copy of FROM's (CREATE DATABASE ... TEMPLATE).
db_cp() {
  if on_server; then
    db_rm "$2"
    local from to
    from=$(server_db_name "$1"); to=$(server_db_name "$2")
    "$CTXFOLD_E2E_PSQL" -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $to TEMPLATE $from" >/dev/null &&
      : >"$CTXFOLD_E2E_PG_MARKS/$to"
  else
    cp "$1" "$2"
  fi
}
# db_url DB: what names database file DB to ctxfold where a test cannot pass it through the
# stand-in (a configuration file's mcp.db): DB itself, or under tests/e2e/server/run.sh the URL of
# the server database standing for it.
db_url() {
  if on_server; then
    source "$E2E_DIR/server/map.sh"
    printf 'postgresql://ctxfold@/%s?host=%s' "$(server_db_name "$1")" "$CTXFOLD_E2E_PG_DIR"
  else
    printf '%s' "$1"
  fi
}
# db_dump DB: every row of database file DB as text (sqlite3's .dump; on a server, pg_dump's data),
# for checks that something never reached the database.
db_dump() {
  if on_server; then
    source "$E2E_DIR/server/map.sh"
    # pg_dump's \restrict lines carry a key drawn afresh on every run; its warning about the nodes
    # table's circular foreign keys is for restoring, which no test does.
    "$(dirname "$CTXFOLD_E2E_PSQL")/pg_dump" --data-only --no-owner -d "$(server_db_name "$1")" \
      2> >(grep -v '^pg_dump: \(warning\|detail\|hint\): ' >&2) | grep -v '^\\\(un\)\?restrict '
  else
    sqlite3 "$1" .dump
  fi
}
# db_tamper DB SQL: runs SQL on database file DB with the ledger's append-only guard off, as an
# attacker or a damaged disk would change it (SQLite: its guard triggers dropped first; a server:
# triggers off for the session, session_replication_role). Write SQL both engines read.
db_tamper() {
  if on_server; then
    db_sql "$1" "SET session_replication_role = replica; $2"
  else
    local drops
    drops=$(sqlite3 "$1" "SELECT 'DROP TRIGGER ' || name || ';' FROM sqlite_master WHERE type = 'trigger' AND
      (name LIKE '%\_no\_update' ESCAPE '\' OR name LIKE '%\_no\_delete' ESCAPE '\')")
    sqlite3 "$1" "$drops $2"
  fi
}
# sql_json_set COLUMN KEYS VALUE_SQL: SQL for COLUMN's JSON text with the member at KEYS (dotted:
# "response.text") set to the value of VALUE_SQL (typed: CAST(... AS INTEGER) or CAST(... AS TEXT)),
# for db_tamper: SQLite's json_set, or the server's jsonb_set, which reorders the object's keys
# (ctxfold reads the members, not the text's layout).
sql_json_set() {
  if on_server; then
    printf "jsonb_set(CAST(%s AS jsonb), '{%s}', to_jsonb(%s))::text" "$1" "${2//./,}" "$3"
  else
    printf "json_set(%s, '\$.%s', %s)" "$1" "$2" "$3"
  fi
}
finish() {
  echo "$checks checks, $failures failures" >&2
  [ "$failures" -eq 0 ] && [ "$checks" -gt 0 ]
  exit $?
}
# Orphan check on a rendered openai document: every tool call answered, every answer called.
openai_orphans() {
  jq '[.messages[] | select(.role=="assistant") | (.tool_calls // [])[] | .id] as $calls
      | [.messages[] | select(.role=="tool") | .tool_call_id] as $results
      | ([$calls[] | select(. as $c | $results | index($c) | not)] | length)
        + ([$results[] | select(. as $r | $calls | index($r) | not)] | length)' "$1"
}
anthropic_orphans() {
  jq '[.messages[] | select(.role=="assistant") | (.content | if type=="array" then . else [] end)[] | select(.type=="tool_use") | .id] as $calls
      | [.messages[] | select(.role=="user") | (.content | if type=="array" then . else [] end)[] | select(.type=="tool_result") | .tool_use_id] as $results
      | ([$calls[] | select(. as $c | $results | index($c) | not)] | length)
        + ([$results[] | select(. as $r | $calls | index($r) | not)] | length)' "$1"
}
# start_fake_llm_server: starts tests/fixtures/fake_llm_server.py on loopback and sets $port and
# $server. The server exits when its stdin (a fifo this shell holds open on fd 3) ends, and is
# killed on exit.
start_fake_llm_server() {
  mkfifo "$WORK/server.in"
  python3 "$(dirname "${BASH_SOURCE[0]}")/../fixtures/fake_llm_server.py" <"$WORK/server.in" >"$WORK/port" &
  server=$!
  exec 3>"$WORK/server.in"
  trap 'kill $server 2>/dev/null; rm -rf "$WORK"' EXIT
  for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
  port=$(head -1 "$WORK/port")
  [ -n "$port" ] || { echo "FAIL: the fake server printed no port" >&2; exit 1; }
}
# peak_kb CMD...: prints "PEAK_KB EXIT_CODE" for CMD run as a child: its peak RSS in KB and its
# exit status (its stdout kept in $WORK/peak.out, its stderr discarded).
# import_generated N: a synthetic history of N nodes from ctxfold-gen, seed 1, imported into
# $WORK/h.db; sets db and session. Skips without the ctxfold-gen binary (CTXFOLD_GEN).
import_generated() {
  local gen=${CTXFOLD_GEN:-}
  [ -n "$gen" ] && [ -x "$gen" ] || skip "no ctxfold-gen binary (CTXFOLD_GEN='$gen'): build the ctxfold-gen target"
  "$gen" --nodes "$1" --synthetic --seed 1 -q -o "$WORK/h.jsonl"
  db="$WORK/h.db"
  expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$WORK/h.jsonl"
  session=$(jq -r '.sessions[0].session' "$WORK/out")
}
peak_kb() {
  python3 -c 'import resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    rc = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc)' "$WORK/peak.out" "$@"
}
# check_peak WHAT BOUND_MB CMD...: CMD exits 0 with a peak RSS of at most BOUND_MB (one check
# each), its figure on stderr; stdout in $WORK/peak.out as peak_kb leaves it.
check_peak() {
  local what=$1 bound_kb=$(($2 * 1024)) kb rc; shift 2
  read -r kb rc < <(peak_kb "$@")
  expect_eq "$what exit" 0 "$rc"
  if [ "$kb" -le "$bound_kb" ]; then ok; else fail "$what: peak RSS $((kb / 1024)) MB, bound $((bound_kb / 1024)) MB"; fi
  echo "$what: $((kb / 1024)) MB" >&2
}
