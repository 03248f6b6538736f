#!/usr/bin/env bash
# The test command: installs what is missing (Debian packages, the pinned agent clients of the
# conformance suite), builds, runs every unit, end-to-end and client conformance test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
# The real clients (tests/clients/package-lock.json), reinstalled when the lockfile changed.
stamp=tests/clients/node_modules/.ctxfold-lock
if [ ! -f "$stamp" ] || ! cmp -s tests/clients/package-lock.json "$stamp"; then
  # Qwen Code lists optional per-platform packages that were never published
  # (@teddyzhu/clipboard-darwin-x64 ...): npm leaves them out of the lockfile and then `npm ci`
  # refuses the lockfile as out of sync. `npm install --no-save` installs the same pinned versions
  # from the lockfile and leaves it untouched.
  (cd tests/clients && { npm ci --no-audit --no-fund --loglevel=silent 2>/dev/null ||
    npm install --no-save --no-audit --no-fund --loglevel=error; }) && cp tests/clients/package-lock.json "$stamp"
fi
bash scripts/build.sh
# One job more than cores: many tests spend part of their time waiting (a client's start-up, the
# mock model server, PostgreSQL, sleeps between kills): with as many jobs as cores, a whole CI run
# on 2 cores (packages, builds, tests) used 166 % of CPU on average. CTXFOLD_TEST_JOBS overrides.
ctest --test-dir build --output-on-failure -j"${CTXFOLD_TEST_JOBS:-$(($(nproc) + 1))}"
