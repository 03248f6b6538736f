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
# config_names_db: whether `mcp` reads its database from the configuration file (its mcp.db, which
# the test writes as the URL of a server database), so no default may be set in its place.
config_names_db() {
  local a cfg=${CTXFOLD_CONFIG:-} is_mcp=0 prev=
  for a in "${args[@]}"; do
    [ "$a" = mcp ] && is_mcp=1
    [ "$prev" = --config ] && cfg=$a
    case "$a" in --config=*) cfg=${a#--config=} ;; esac
    prev=$a
  done
  [ "$is_mcp" = 1 ] || return 1
  [ -n "$cfg" ] || cfg=${XDG_CONFIG_HOME:-${HOME:-/nonexistent}/.config}/ctxfold/config.json
  [ -f "$cfg" ] && jq -e '.mcp | objects | has("db")' "$cfg" >/dev/null 2>&1
}
# sync's --to and --from name databases; import's --from does not.
other=--db
for a in "$@"; do [ "$a" = sync ] && other=--to; done
# verify-invariants names its databases as positional arguments too: those after the subcommand
# that are not the value of --session or --format (its options that take one).
args=()
db_named=0
verify=0 prev=
while [ $# -gt 0 ]; do
  if [ "$verify" = 1 ] && [ "${1:0:1}" != - ] && [ -n "$1" ] && [ "$prev" != --session ] && [ "$prev" != --format ]; then
    db_named=1; args+=("$(server_db "$1")"); prev=$1; shift; continue
  fi
  [ "$1" = verify-invariants ] && verify=1
  prev=$1
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
elif [ "$db_named" = 0 ] && ! config_names_db; then
  CTXFOLD_DB=$(server_db ./ctxfold.db); export CTXFOLD_DB
fi
exec "$CTXFOLD_REAL" "${args[@]}"
