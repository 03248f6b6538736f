# Sourced by tests/e2e/server/ctxfold.sh and tests/e2e/lib.sh (not a test itself): the server
# database that stands for a database file while a test runs under tests/e2e/server/run.sh.
# server_db_name PATH: its name, one per absolute path ("f_" and 24 hex digits of the path's SHA-1).
# server_db_create NAME: creates it on first use (once, under a lock: tests run commands at once).
server_db_name() {
  local abs
  abs=$(realpath -m -- "$1")
  printf 'f_%s' "$(printf '%s' "$abs" | sha1sum | cut -c1-24)"
}
server_db_create() {
  local mark="$CTXFOLD_E2E_PG_DIR/dbs/$1"
  [ -e "$mark" ] && return 0
  mkdir -p "$CTXFOLD_E2E_PG_DIR/dbs"
  (
    flock 9
    [ -e "$mark" ] || { "$CTXFOLD_E2E_PSQL" -X -q -d postgres -c "CREATE DATABASE $1" >/dev/null && : >"$mark"; }
  ) 9>"$CTXFOLD_E2E_PG_DIR/dbs/.lock"
}
