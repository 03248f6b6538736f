# Sourced by tests/e2e/server/ctxfold.sh and tests/e2e/lib.sh (not a test itself): the server
# database that stands for a database file while a test runs under tests/e2e/server/run.sh.
# Plain bash, no programs started: the stand-in runs for every ctxfold command of a test.
# server_db_name PATH: its name, one per absolute path: "f_" and 16 hex digits of the FNV-1a hash
#   of the path made absolute and normal (no ".", ".." or doubled "/"; symlinks are not resolved).
# server_db_create NAME: creates it on first use (once, under a lock: tests run commands at once),
#   and marks it in $CTXFOLD_E2E_PG_MARKS (the run's list of its databases, which run.sh drops at
#   the end).
CTXFOLD_E2E_PG_MARKS=${CTXFOLD_E2E_PG_MARKS:-$CTXFOLD_E2E_PG_DIR/dbs}
server_db_name() {
  local p=$1 part out=() h=$((0xcbf29ce484222325)) i c
  [ "${p:0:1}" = / ] || p=$PWD/$p
  local IFS=/
  for part in $p; do
    case "$part" in
      "" | .) ;;
      ..) [ ${#out[@]} -gt 0 ] && unset 'out[${#out[@]}-1]' ;;
      *) out+=("$part") ;;
    esac
  done
  p="/${out[*]}"
  for ((i = 0; i < ${#p}; i++)); do
    printf -v c '%d' "'${p:i:1}"
    h=$(((h ^ (c & 0xff)) * 0x100000001b3))
  done
  printf 'f_%016x' "$h"
}
server_db_create() {
  local marks=$CTXFOLD_E2E_PG_MARKS
  [ -e "$marks/$1" ] && return 0
  mkdir -p "$marks"
  (
    flock 9
    [ -e "$marks/$1" ] || { "$CTXFOLD_E2E_PSQL" -X -q -d postgres -c "CREATE DATABASE $1" >/dev/null && : >"$marks/$1"; }
  ) 9>"$marks/.lock"
}
