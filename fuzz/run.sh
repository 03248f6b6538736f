#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan + libFuzzer) and runs each for N seconds.
#
# usage: fuzz/run.sh [SECONDS] [TARGET...]     (default 60 s; default targets: all of them)
#   env: FUZZ_JOBS   targets run at once (default 2)      FUZZ_BUILD  build dir (default build-fuzz)
#        FUZZ_OUT    corpora, crashes, logs (default fuzz/out; not committed)
#        FUZZ_NO_BUILD=1 skips the build            FUZZ_NICE  nice level (default 19)
#        FUZZ_MAX_LEN  largest input in bytes (default 8192: real transcripts are cut to it)
#
# Each target starts from fuzz/seeds/<target>/ (small synthetic inputs written for this project)
# plus, where present, the real transcripts in ../shared/data/transcripts read in place (never
# copied). New corpus entries go to $FUZZ_OUT/corpus/<target>/, a crash/leak/timeout input to
# $FUZZ_OUT/artifacts/. Prints per target: executions, executions per second, new corpus units,
# peak RSS and the result; writes the same table to $FUZZ_OUT/results.tsv. Exit 1 when any target
# found something (keep the input as a regression: tests/fixtures/fuzz-regressions/, fuzz/README.md).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
secs=${1:-60}
shift || true
build=${FUZZ_BUILD:-$repo/build-fuzz}
out=${FUZZ_OUT:-$here/out}
jobs=${FUZZ_JOBS:-2}
nicelevel=${FUZZ_NICE:-19}
transcripts=${CTXFOLD_TRANSCRIPTS:-$repo/../shared/data/transcripts}

all_targets=(import_claude_code import_codex import_gemini import_pi import_qwen import_copilot import_cline import_openai_messages import_anthropic_messages
             import_openhands import_ctxfold_jsonl jsonl_reader detect_format
             stdin_append stdin_ids stdin_snapshot compact_config)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")

if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
  command -v clang++ >/dev/null || { echo "fuzz/run.sh: clang++ is required (apt-get install clang libclang-rt-14-dev)" >&2; exit 4; }
  echo "== build (clang, -DCTXFOLD_FUZZ=ON) in $build" >&2
  CC=clang CXX=clang++ cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCTXFOLD_FUZZ=ON >/dev/null || exit 4
  nice -n "$nicelevel" cmake --build "$build" --target fuzz_all -j2 >/dev/null || exit 4
fi

# Extra seeds read in place: the real transcripts for the importers that read their format.
extra_for() {
  case "$1" in
    import_claude_code) echo "$transcripts/claude-code" ;;
    import_codex) echo "$transcripts/codex" ;;
    import_gemini) echo "$transcripts/gemini" ;;
    import_openai_messages|import_openhands|import_anthropic_messages) echo "$transcripts/interchange" ;;
    jsonl_reader|detect_format) echo "$transcripts/codex" ;;
  esac
}

mkdir -p "$out/corpus" "$out/artifacts" "$out/logs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

run_one() {
  local t=$1 exe=$build/fuzz/fuzz_$1
  [ -x "$exe" ] || { echo "fuzz/run.sh: $exe missing" >&2; return 4; }
  mkdir -p "$out/corpus/$t"
  local dirs=("$out/corpus/$t" "$here/seeds/$t")
  local extra; extra=$(extra_for "$t")
  [ -n "$extra" ] && [ -d "$extra" ] && dirs+=("$extra")
  nice -n "$nicelevel" "$exe" -max_total_time="$secs" -print_final_stats=1 -max_len="${FUZZ_MAX_LEN:-8192}" -timeout=25 \
    -rss_limit_mb=2048 -artifact_prefix="$out/artifacts/$t-" "${dirs[@]}" > "$out/logs/$t.log" 2>&1
  echo $? > "$out/logs/$t.rc"
}

running=0
for t in "${targets[@]}"; do
  echo "== $t: ${secs}s" >&2
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

stat() { grep -a "^stat::$2:" "$out/logs/$1.log" | tail -1 | awk '{print $2}'; }
fail=0
printf '%-28s %8s %12s %10s %8s %8s  %s\n' target seconds executions exec/s new_units rss_mb result | tee "$out/results.tsv"
for t in "${targets[@]}"; do
  rc=$(cat "$out/logs/$t.rc" 2>/dev/null || echo 4)
  result=clean
  if [ "$rc" != 0 ]; then
    fail=1
    result="FOUND (exit $rc): $(grep -a -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|verify-invariants rejects|SUMMARY' "$out/logs/$t.log" | cut -c1-120); input: $(ls -t "$out/artifacts/$t-"* 2>/dev/null | head -1)"
  fi
  printf '%-28s %8s %12s %10s %8s %8s  %s\n' "$t" "$secs" "$(stat "$t" number_of_executed_units)" \
    "$(stat "$t" average_exec_per_sec)" "$(stat "$t" new_units_added)" "$(stat "$t" peak_rss_mb)" "$result" | tee -a "$out/results.tsv"
done
exit $fail
