# Shared helpers for the end-to-end tests against a PostgreSQL server (sourced after lib.sh, not a
# test itself; docs/backends.md "Tests").
#
# start_pg: a throwaway cluster (Debian's postgresql: initdb and pg_ctl from
# /usr/lib/postgresql/*/bin) in a new temporary directory, listening only on a Unix socket there
# (listen_addresses=''), password authentication (scram-sha-256; PG_AUTH=trust: none) for its one role `ctxfold`,
# stopped and removed at exit. As root, initdb refuses to run: the cluster then runs as the user
# `postgres` (made by the Debian package), or `nobody`. Sets:
#   PG_BIN    the server's bin directory          PG_DIR   the cluster's directory (the socket's)
#   PG_PASS   the role's password                 PGURL    postgresql://ctxfold:PASS@/ctxfold?host=PG_DIR
# and exports PGHOST, PGUSER, PGPASSWORD, PGDATABASE for psql. Skips (77) without the binaries.
# pg_createdb NAME: a new database; prints its ctxfold URL.
# pg_psql ARGS...: psql against database ctxfold (or -d NAME), no .psqlrc, stop on error.
# same WHAT ARGS...: one check that `ctxfold ARGS...` gives the same exit code and stdout on the
# test's SQLite file $lite and on the server (stdin: $WORK/stdin when it exists), see below.

# The real Claude Code transcripts the pg_* tests choose from (under CTXFOLD_TRANSCRIPTS):
CC_DIR="$CTXFOLD_TRANSCRIPTS/claude-code"
CC_COMPACTED="$CC_DIR/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"  # auto compactions
CC_RESUMED="$CC_DIR/images_resume_branch_v2.1.22-2.1.29/47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c.jsonl"  # images, resume, branch
CC_SIDECHAINS="$CC_DIR/inline_sidechains_v1.0.98/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"  # inline 1.0.x sidechains
CC_MANUAL="$CC_DIR/compaction_manual_v2.1.39_TRUNCATED/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"  # a manual /compact
CC_REJECTION="$CC_DIR/v2.1.38_short_parallel_tool_rejection.jsonl"
CC_WEBSEARCH="$CC_DIR/v2.1.38_tool_heavy_websearch_queue.jsonl"

PG_BIN=
PG_DIR=
PG_PASS=
PGURL=
PG_SHOWN_URL=
pg_owner=

stop_pg() {
  [ -n "$PG_DIR" ] || return 0
  if [ -n "$pg_owner" ]; then
    runuser -u "$pg_owner" -- "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1
  else
    "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1
  fi
  rm -rf "$PG_DIR"
  PG_DIR=
}

start_pg() {
  PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] || skip "no PostgreSQL server binaries (scripts/deps.sh installs postgresql)"
  # A short path: a Unix socket's path must fit in 107 bytes.
  PG_DIR=$(mktemp -d /tmp/ctxfold-pg.XXXXXX)
  trap 'stop_pg; rm -rf "$WORK"' EXIT
  PG_PASS="s3cret-$RANDOM$RANDOM"
  printf '%s\n' "$PG_PASS" >"$PG_DIR/pw"
  local run=()
  if [ "$(id -u)" = 0 ]; then
    if id postgres >/dev/null 2>&1; then pg_owner=postgres; else pg_owner=nobody; fi
    chown -R "$pg_owner" "$PG_DIR"
    chmod 755 "$PG_DIR"
    run=(runuser -u "$pg_owner" --)
  fi
  "${run[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U ctxfold --pwfile="$PG_DIR/pw" --auth=${PG_AUTH:-scram-sha-256} \
    -E UTF8 --locale=C.UTF-8 >"$PG_DIR/initdb.log" 2>&1 || { cat "$PG_DIR/initdb.log" >&2; fail "initdb"; finish; }
  "${run[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w \
    -o "-c listen_addresses='' -c unix_socket_directories='$PG_DIR' -c fsync=off" start >/dev/null 2>&1 ||
    { cat "$PG_DIR/server.log" >&2; fail "pg_ctl start"; finish; }
  export PGHOST=$PG_DIR PGUSER=ctxfold PGPASSWORD=$PG_PASS PGDATABASE=postgres
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -c 'CREATE DATABASE ctxfold' >/dev/null || { fail "createdb"; finish; }
  export PGDATABASE=ctxfold
  PGURL="postgresql://ctxfold:$PG_PASS@/ctxfold?host=$PG_DIR"
  PG_SHOWN_URL="postgresql://ctxfold:***@/ctxfold?host=$PG_DIR"   # PGURL as ctxfold prints it
}

pg_createdb() {
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $1" >/dev/null || fail "createdb $1"
  printf 'postgresql://ctxfold:%s@/%s?host=%s\n' "$PG_PASS" "$1" "$PG_DIR"
}

pg_psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

# same WHAT ARGS...: `ctxfold ARGS...` on the SQLite file $lite and on the server PGURL must give
# the same exit code and the same stdout, once the database's name (the path; the URL as printed,
# password hidden) is replaced by DB, the time of the run in export records by T and a command's
# own running time (elapsed_ms) by 0; the server's
# output and messages never show the password. A success must print something; a failure with no
# stdout must print the same message on both.
same() {
  local what=$1 in=/dev/null; shift
  [ -f "$WORK/stdin" ] && in="$WORK/stdin"
  "$CTXFOLD" --db "$lite" "$@" <"$in" >"$WORK/a" 2>"$WORK/a.err"; local ra=$?
  "$CTXFOLD" --db "$PGURL" "$@" <"$in" >"$WORK/b" 2>"$WORK/b.err"; local rb=$?
  if grep -qF "$PG_PASS" "$WORK/b" "$WORK/b.err"; then fail "$what: the password is shown"; fi
  # One perl for the four files (a perl start costs more than most commands' output takes to edit).
  A="$lite" B="$PG_SHOWN_URL" perl -pi -e '
    my $db = $ARGV =~ m{/a(\.err)?$} ? $ENV{A} : $ENV{B};
    s/\Q$db\E/DB/g;
    next if $ARGV =~ /\.err$/;
    s/"(timestamp|exported_at)":"20\d\d-[^"]*"/"$1":"T"/g;
    s/"elapsed_ms":\d+/"elapsed_ms":0/g' "$WORK/a" "$WORK/a.err" "$WORK/b" "$WORK/b.err"
  if [ "$ra" != "$rb" ]; then fail "$what: exit $ra on SQLite, $rb on PostgreSQL: $(head -c 300 "$WORK/b.err")"; return; fi
  if cmp -s "$WORK/a" "$WORK/b"; then ok; else fail "$what: outputs differ: $(diff "$WORK/a" "$WORK/b" | head -5 | cut -c1-300)"; fi
  [ -s "$WORK/a" ] && return
  if [ "$ra" = 0 ]; then fail "$what: no output ($(head -c 300 "$WORK/a.err"))"; return; fi
  # A refusal: the same message, naming the same database.
  if cmp -s "$WORK/a.err" "$WORK/b.err" && [ -s "$WORK/a.err" ]; then ok; else fail "$what: messages differ: $(diff "$WORK/a.err" "$WORK/b.err" | head -4)"; fi
}
