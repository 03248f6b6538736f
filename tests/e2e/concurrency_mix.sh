#!/usr/bin/env bash
# Writers and readers together on one SQLite file, for a bounded number of rounds (iterations, not
# time): two appenders, an importer, a compactor (extractive summarizer), a verifier and a reader.
# Then: no verify run reported a violation (each read one snapshot), no node an append or import
# reported written is missing, and verify-invariants is clean. A writer may wait for the lock; one
# that gives up (exit 4, "database is locked") wrote nothing and is counted, never lost. The mix
# itself is tests/e2e/concurrency_mix.inc, which pg_concurrency_mix.sh runs on a server.
source "$(dirname "$0")/lib.sh"
db="$WORK/mix.db"
stored_ids() { sqlite3 "$db" 'SELECT id FROM nodes'; }
source "$(dirname "$0")/concurrency_mix.inc"
finish
