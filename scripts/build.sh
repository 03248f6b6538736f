#!/usr/bin/env bash
# Configures and builds ctxfold into build/ (binary: build/ctxfold). Arguments name the targets to
# build (scripts/demo.sh builds only `ctxfold`); none builds every target (tests, benchmarks).
# CTXFOLD_WERROR=ON (as CI sets it) makes warnings in the project's own code errors. ccache is
# used when it is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCTXFOLD_WERROR="${CTXFOLD_WERROR:-OFF}" \
  "${launcher[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j"$(nproc)" "${targets[@]}"
