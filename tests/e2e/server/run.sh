#!/usr/bin/env bash
# run.sh TEST.sh: an end-to-end test of tests/e2e run against a throwaway PostgreSQL server
# instead of SQLite files (docs/backends.md "Tests"). The cluster is the one cluster.sh started
# when $CTXFOLD_E2E_PG_SHARED names its state file (ctest's e2e_pg.* cases share one), else one
# of its own (pg_lib.sh's start_pg, trust authentication). The test's $CTXFOLD becomes
# tests/e2e/server/ctxfold.sh, which gives each database file the test names a server database of
# its own; the databases the test made are dropped at the end. The test's own exit status is this
# script's (77: skipped).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../pg_lib.sh"
test=$1
if [ -n "${CTXFOLD_E2E_PG_SHARED:-}" ] && [ -f "$CTXFOLD_E2E_PG_SHARED" ]; then
  # shellcheck disable=SC1090
  source "$CTXFOLD_E2E_PG_SHARED"  # not ours to stop: lib.sh's exit trap only removes $WORK
  "$PG_BIN/psql" -X -q -d postgres -c 'SELECT 1' >/dev/null || { echo "no shared cluster at $PG_DIR" >&2; exit 1; }
else
  PG_AUTH=trust start_pg
fi
export CTXFOLD_REAL=$CTXFOLD CTXFOLD_E2E_PG_DIR=$PG_DIR CTXFOLD_E2E_PSQL=$PG_BIN/psql
export CTXFOLD_E2E_PG_MARKS=$WORK/server-dbs
mkdir -p "$CTXFOLD_E2E_PG_MARKS"
export CTXFOLD_BUILD  # lib.sh's: the real binary's folder
export CTXFOLD_E2E_SERVER_DIR="$(cd "$(dirname "$0")" && pwd)"
CTXFOLD="$CTXFOLD_E2E_SERVER_DIR/ctxfold.sh" bash "$test"
rc=$?
for mark in "$CTXFOLD_E2E_PG_MARKS"/f_*; do
  [ -e "$mark" ] || continue
  "$PG_BIN/psql" -X -q -d postgres -c "DROP DATABASE IF EXISTS ${mark##*/} WITH (FORCE)" >/dev/null 2>&1
done
exit $rc
