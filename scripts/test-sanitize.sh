#!/usr/bin/env bash
# The tests built with AddressSanitizer + UndefinedBehaviorSanitizer (gcc's runtimes, which come
# with g++): -DCTXFOLD_SANITIZE=ON in build-asan/, a unity build (CTXFOLD_UNITY) at -O1 -g1 (ASan's
# recommended level, and a shorter build than -O2 -g; warnings are the normal build's to gate).
#   bash scripts/test-sanitize.sh          the unit tests (ctxfold_tests: every importer, strategy
#                                          and store path, on every real transcript); what .ci/run
#                                          runs after the normal suite
#   bash scripts/test-sanitize.sh --full   the unit and end-to-end tests (e2e.*), about four times
#                                          as long: the e2e scripts run ctxfold thousands of times,
#                                          2-3x slower each under ASan
# Any sanitizer report fails the run, even from a test that expects ctxfold to fail: reports go to
# files under build-asan/sanitizer-logs/, which must stay empty, and sanitizer exits use code 86,
# which no ctxfold exit code shares. Left out in both: the client conformance tests (clients.*),
# which spend their time in the Node.js clients, and the peak-RSS bounds (e2e.memory_*), which hold
# for the normal build: ASan's shadow memory and quarantine raise every process's RSS to 0.5-0.7 GB
# whatever ctxfold keeps. The normal build runs both.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${SANITIZE_BUILD:-build-asan}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCTXFOLD_SANITIZE=ON -DCTXFOLD_WERROR=OFF -DCTXFOLD_UNITY=ON "${launcher[@]}" >/dev/null
full=0
[ "${1:-}" = --full ] && full=1
if [ $full = 1 ]; then
  cmake --build "$build" -j"$(nproc)" --target ctxfold ctxfold-gen ctxfold_tests   # what the tests run; no benchmarks
  select=(-E '^(clients\.|e2e\.memory_|structure\.)')
else
  cmake --build "$build" -j"$(nproc)" --target ctxfold_tests
  select=(-E '^(clients|e2e|e2e_pg|structure)\.')
fi
logs=$PWD/$build/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"
# A 32 MB quarantine (256 MB by default) and 10 frames of allocation stack (30): ctxfold allocates
# and frees a lot per record, and with the defaults a freed block is never reused within one
# command, so every allocation faulted in fresh pages (an import spent as much time in the kernel as
# in the program). Measured on a real 3.4 MB transcript: import 2.55 -> 1.70 s CPU, export 1.52 ->
# 0.85 s; a use after free is still caught while the freed block is among the last 32 MB freed.
export ASAN_OPTIONS="detect_leaks=1:exitcode=86:log_path=$logs/asan:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:quarantine_size_mb=32:malloc_context_size=10"
export LSAN_OPTIONS="exitcode=86"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=86:log_path=$logs/ubsan"
rc=0
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "${select[@]}" || rc=$?
if compgen -G "$logs/*" >/dev/null; then
  echo "sanitizer reports:" >&2
  for f in "$logs"/*; do echo "--- $f" >&2; head -n 60 "$f" >&2; done
  rc=1
fi
exit $rc
