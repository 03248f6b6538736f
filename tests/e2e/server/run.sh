#!/usr/bin/env bash
# run.sh TEST.sh: an end-to-end test of tests/e2e run against a throwaway PostgreSQL server
# instead of SQLite files (docs/backends.md "Tests"). The cluster is pg_lib.sh's; the test's
# $CTXFOLD becomes tests/e2e/server/ctxfold.sh, which gives each database file the test names a
# server database of its own. The test's own exit status is this script's (77: skipped).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../pg_lib.sh"
test=$1
start_pg
export CTXFOLD_REAL=$CTXFOLD CTXFOLD_E2E_PG_DIR=$PG_DIR CTXFOLD_E2E_PSQL=$PG_BIN/psql
export CTXFOLD_E2E_SERVER_DIR="$(cd "$(dirname "$0")" && pwd)"
CTXFOLD="$(cd "$(dirname "$0")" && pwd)/ctxfold.sh" bash "$test"
