#!/usr/bin/env bash
# Configures and builds ctxfold into build/ (binary: build/ctxfold). Arguments name the targets to
# build (scripts/demo.sh builds only `ctxfold`); none builds every target (tests, benchmarks).
# CTXFOLD_WERROR=ON (as CI sets it) makes warnings in the project's own code errors. ccache is
# used when it is installed; without it (a fresh clone, CI) the sources are compiled as a unity
# build (CTXFOLD_UNITY: headers parsed once per folder, a shorter cold build; docs/architecture.md
# "Building"); CTXFOLD_UNITY=ON|OFF overrides. A new build folder uses Ninja when it is installed
# (the binary's own sources then compile beside the library's instead of after them); a folder
# configured before keeps its generator. CTXFOLD_DEBUG_INFO=OFF (as CI sets it) leaves out the debug
# information (-O2 -DNDEBUG instead of RelWithDebInfo's -O2 -g -DNDEBUG: the same code, compiled in
# about three quarters of the CPU time: 38 s -> 29 s for the largest unity file; a binary of 6.5 MB
# instead of 109 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
unity=ON
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache) unity=OFF; fi
generator=()
if [ ! -f build/CMakeCache.txt ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
flags="-O2 -g -DNDEBUG"
[ "${CTXFOLD_DEBUG_INFO:-ON}" = OFF ] && flags="-O2 -DNDEBUG"
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" -DCTXFOLD_WERROR="${CTXFOLD_WERROR:-OFF}" \
  -DCTXFOLD_UNITY="${CTXFOLD_UNITY:-$unity}" "${launcher[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j"$(nproc)" "${targets[@]}"
