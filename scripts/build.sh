#!/usr/bin/env bash
# Configures and builds ctxfold into build/ (binary: build/ctxfold). CTXFOLD_WERROR=ON (as CI
# sets it) makes warnings in the project's own code errors.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCTXFOLD_WERROR="${CTXFOLD_WERROR:-OFF}" >/dev/null
cmake --build build -j"$(nproc)"
