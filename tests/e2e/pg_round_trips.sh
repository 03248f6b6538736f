#!/usr/bin/env bash
# Round trips of a server import (docs/backends.md "Round trips"): a real Claude Code transcript
# imported into a server database whose sessions log every statement (log_statement = all). The
# import must run at most 1.5 statements per node (one INSERT per node, returning its seq: no
# SELECT lastval(), no look-up before the insert, no look-up of a predecessor stored just before),
# the node INSERT must run as a server-side prepared statement, and importing the file again, then
# another one, must leave seq running 1..n on the server and in a SQLite file (an INSERT that adds
# no row takes no seq). A read command reads the catalog once.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pg_lib.sh"
need_transcripts
start_pg
for f in "$CC_COMPACTED" "$CC_WEBSEARCH"; do [ -f "$f" ] || { fail "missing transcript $f"; finish; }; done

url=$(pg_createdb trips)
pg_psql -d postgres -c "ALTER DATABASE trips SET log_statement = 'all'" >/dev/null || fail "log_statement"
log="$PG_DIR/server.log"
mark=$(wc -l <"$log")
expect_rc "import into the server" 0 "$CTXFOLD" --db "$url" import "$CC_COMPACTED"
sleep 0.2   # the server writes its log lines before it answers; this is for the file's buffering
tail -n +"$((mark + 1))" "$log" | grep -E 'LOG:  (statement|execute [^:]*): ' >"$WORK/statements"
nodes=$(pg_psql -d trips -tA -c "SELECT count(*) FROM nodes")
statements=$(wc -l <"$WORK/statements")
echo "import of $nodes nodes: $statements statements ($(awk -v s="$statements" -v n="$nodes" 'BEGIN{printf "%.2f", s/n}') per node)" >&2
[ "$nodes" -gt 1000 ] && ok || fail "only $nodes nodes imported"
[ $((statements * 2)) -le $((nodes * 3)) ] && ok || fail "$statements statements for $nodes nodes (more than 1.5 per node)"
expect_eq "SELECT lastval() statements" 0 "$(grep -c 'lastval()' "$WORK/statements")"
expect_eq "look-ups of a node's digest before its insert" 0 "$(grep -c 'SELECT digest FROM nodes' "$WORK/statements")"
prepared=$(grep -cE 'execute ctxfold_[0-9]+: INSERT INTO nodes' "$WORK/statements")
[ "$prepared" -ge $((nodes - 2)) ] && ok || fail "$prepared of $nodes node INSERTs ran as a prepared statement"

# Again, and another file: nothing added the second time, no seq skipped on either engine.
lite="$WORK/lite.db"
expect_rc "import into SQLite" 0 "$CTXFOLD" --db "$lite" import "$CC_COMPACTED"
for db in "$url" "$lite"; do
  expect_rc "import again" 0 "$CTXFOLD" --db "$db" import "$CC_COMPACTED"
  expect_eq "nothing added again" 0 "$(jq '[.sessions[].nodes_added] | add' "$WORK/out")"
  expect_rc "import another file" 0 "$CTXFOLD" --db "$db" import "$CC_WEBSEARCH"
done
q="SELECT count(*) || ' ' || max(seq) FROM nodes"
n=$(sqlite3 "$lite" "SELECT count(*) FROM nodes")
expect_eq "SQLite: seq is 1..n" "$n $n" "$(sqlite3 "$lite" "$q")"
expect_eq "server: seq is 1..n, the nodes of SQLite" "$n $n" "$(pg_psql -d trips -tA -c "$q")"
expect_rc "verify the server database" 0 "$CTXFOLD" --db "$url" verify-invariants --all-sessions

# A read command's checks of the schema at open (its version, the ledger's tables) read the
# catalog once: one statement naming pg_class, not one per table.
mark=$(wc -l <"$log")
expect_rc "list" 0 "$CTXFOLD" --db "$url" list
sleep 0.2
tail -n +"$((mark + 1))" "$log" | grep -E 'LOG:  (statement|execute [^:]*): ' >"$WORK/statements"
expect_eq "catalog reads of one list" 1 "$(grep -c 'pg_class' "$WORK/statements")"
finish
