#!/usr/bin/env bash
# Stands in for the ctxfold binary when an end-to-end test runs against a PostgreSQL server
# (tests/e2e/server/run.sh; docs/backends.md "Tests"): every database the test names as a file
# (--db, --to, --from, CTXFOLD_DB, and the ./ctxfold.db default) becomes a database of the
# throwaway cluster, one per absolute path, created by the first command that may write it; then the real binary
# ($CTXFOLD_REAL) runs with the same arguments, stdin, stdout, stderr and exit status.
set -u
: "${CTXFOLD_REAL:?}" "${CTXFOLD_E2E_PG_DIR:?}" "${CTXFOLD_E2E_PSQL:?}"
source "${CTXFOLD_E2E_SERVER_DIR:-$(dirname "$0")}/map.sh"  # the folder of run.sh; a test may copy this script elsewhere
# A command that only reads does not create its database: as for a missing file, a server
# database that does not exist is then an environment error (exit 4).
creates=1
for a in "$@"; do
  case "$a" in
    render | context | export | list | describe | log | show | sessions | tokens | usage | compactions | \
      files | commands | grep | expand | report | eval | replay | verify-invariants | snapshot | config)
      creates=0; break ;;
    import | append | compact | checkout | fork | rewind | index | sync | hook | prepare | mcp) break ;;
  esac
done
server_db() { # server_db PATH: the URL standing for database file PATH
  case "$1" in postgresql://* | postgres://* | :memory: | "") printf '%s' "$1"; return ;; esac
  local name
  name=$(server_db_name "$1")
  [ "$creates" = 1 ] && server_db_create "$name"
  printf 'postgresql://ctxfold@/%s?host=%s' "$name" "$CTXFOLD_E2E_PG_DIR"
}
# sync's --to and --from name databases; import's --from does not.
other=--db
for a in "$@"; do [ "$a" = sync ] && other=--to; done
args=()
db_named=0
while [ $# -gt 0 ]; do
  case "$1" in
    --db | --to | --from)
      if [ "$1" = --db ] || [ "$other" = --to ]; then
        [ "$1" = --db ] && db_named=1
        if [ $# -ge 2 ]; then args+=("$1" "$(server_db "$2")"); shift 2; continue; fi
      fi ;;
    --db=* | --to=* | --from=*)
      if [ "${1%%=*}" = --db ] || [ "$other" = --to ]; then
        [ "${1%%=*}" = --db ] && db_named=1
        args+=("${1%%=*}=$(server_db "${1#*=}")"); shift; continue
      fi ;;
    --) args+=("$@"); break ;;
  esac
  args+=("$1"); shift
done
if [ -n "${CTXFOLD_DB:-}" ]; then
  CTXFOLD_DB=$(server_db "$CTXFOLD_DB"); export CTXFOLD_DB
elif [ "$db_named" = 0 ]; then
  CTXFOLD_DB=$(server_db ./ctxfold.db); export CTXFOLD_DB
fi
exec "$CTXFOLD_REAL" "${args[@]}"
