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
# As many jobs as cores: the tests are CPU-bound in sum (the clients' own start-up above all). One
# job more was tried on 2 cores and made ctest's wall longer, 1,664 -> 1,761 s, each test slower.
# CTXFOLD_TEST_JOBS overrides.
ctest --test-dir build --output-on-failure -j"${CTXFOLD_TEST_JOBS:-$(nproc)}"
