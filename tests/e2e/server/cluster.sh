#!/usr/bin/env bash
# cluster.sh start|stop STATE: one throwaway PostgreSQL cluster (../pg_lib.sh start_pg) shared by
# the e2e_pg.* cases of one ctest run (a ctest fixture, CMakeLists.txt), instead of one cluster per
# case (~2 s each to initdb and start). `start` leaves it running and writes what run.sh needs to
# reach it into the file STATE; `stop` stops it and removes its directory and STATE. A cluster
# left by an earlier run that was killed is stopped first. Trust authentication over its Unix
# socket only: the stand-in (ctxfold.sh) names servers without a password, and the pg_* cases,
# which test passwords, start clusters of their own.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../pg_lib.sh"
state=$2
if [ -f "$state" ]; then
  # shellcheck disable=SC1090
  source "$state"
  stop_pg
  rm -f "$state"
fi
case $1 in
  start)
    PG_AUTH=trust start_pg
    trap 'rm -rf "$WORK"' EXIT  # the cluster outlives this script
    { declare -p PG_BIN PG_DIR PG_PASS pg_owner; echo "export PGHOST PGUSER PGPASSWORD PGDATABASE"
      declare -p PGHOST PGUSER PGPASSWORD PGDATABASE; } >"$state"
    echo "cluster at $PG_DIR"
    ;;
  stop) ;;
  *) echo "usage: cluster.sh start|stop STATE" >&2; exit 2 ;;
esac
