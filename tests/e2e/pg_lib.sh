# Shared helpers for the end-to-end tests against a PostgreSQL server (sourced after lib.sh, not a
# test itself; docs/backends.md "Tests").
#
# start_pg: a throwaway cluster (Debian's postgresql: initdb and pg_ctl from
# /usr/lib/postgresql/*/bin) in a new temporary directory, listening only on a Unix socket there
# (listen_addresses=''), password authentication (scram-sha-256) for its one role `ctxfold`,
# stopped and removed at exit. As root, initdb refuses to run: the cluster then runs as the user
# `postgres` (made by the Debian package), or `nobody`. Sets:
#   PG_BIN    the server's bin directory          PG_DIR   the cluster's directory (the socket's)
#   PG_PASS   the role's password                 PGURL    postgresql://ctxfold:PASS@/ctxfold?host=PG_DIR
# and exports PGHOST, PGUSER, PGPASSWORD, PGDATABASE for psql. Skips (77) without the binaries.
# pg_createdb NAME: a new database; prints its ctxfold URL.
# pg_psql ARGS...: psql against database ctxfold (or -d NAME), no .psqlrc, stop on error.

PG_BIN=
PG_DIR=
PG_PASS=
PGURL=
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
  "${run[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U ctxfold --pwfile="$PG_DIR/pw" --auth=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 >"$PG_DIR/initdb.log" 2>&1 || { cat "$PG_DIR/initdb.log" >&2; fail "initdb"; finish; }
  "${run[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w \
    -o "-c listen_addresses='' -c unix_socket_directories='$PG_DIR' -c fsync=off" start >/dev/null 2>&1 ||
    { cat "$PG_DIR/server.log" >&2; fail "pg_ctl start"; finish; }
  export PGHOST=$PG_DIR PGUSER=ctxfold PGPASSWORD=$PG_PASS PGDATABASE=postgres
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -c 'CREATE DATABASE ctxfold' >/dev/null || { fail "createdb"; finish; }
  export PGDATABASE=ctxfold
  PGURL="postgresql://ctxfold:$PG_PASS@/ctxfold?host=$PG_DIR"
}

pg_createdb() {
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $1" >/dev/null || fail "createdb $1"
  printf 'postgresql://ctxfold:%s@/%s?host=%s\n' "$PG_PASS" "$1" "$PG_DIR"
}

pg_psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
