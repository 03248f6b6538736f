#!/usr/bin/env bash
# The whole test suite (unit + end-to-end) built with AddressSanitizer + UndefinedBehaviorSanitizer
# (gcc's runtimes, which come with g++): -DCTXFOLD_SANITIZE=ON in build-asan/. Run by the CI job
# .ci/sanitize (or .ci/run with CTXFOLD_CI_SANITIZE=1). Any sanitizer report fails the run, even from a test that expects
# ctxfold to fail: reports go to files under build-asan/sanitizer-logs/, which must stay empty,
# and sanitizer exits use code 86, which no ctxfold exit code shares.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${SANITIZE_BUILD:-build-asan}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCTXFOLD_SANITIZE=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
logs=$PWD/$build/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"
export ASAN_OPTIONS="detect_leaks=1:exitcode=86:log_path=$logs/asan:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export LSAN_OPTIONS="exitcode=86"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=86:log_path=$logs/ubsan"
rc=0
ctest --test-dir "$build" --output-on-failure -j2 || rc=$?
if compgen -G "$logs/*" >/dev/null; then
  echo "sanitizer reports:" >&2
  for f in "$logs"/*; do echo "--- $f" >&2; head -n 60 "$f" >&2; done
  rc=1
fi
exit $rc
