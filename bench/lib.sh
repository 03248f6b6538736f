# Shared by the bench/*.sh scripts that take the common options and time commands (source it).
#
# bench_init SCRIPT ARGS...   parses the options every such script takes
#     --runs N  --build DIR  --work DIR  --keep
#   into $runs, $build, $work, $keep; any other option is handed to the script's own
#   `bench_opt NAME VALUE` function, which returns 0 when it took NAME and VALUE, 1 when it did
#   not know NAME (then bench_init stops with exit 2). Options the script does not define are
#   refused. Set defaults (runs=..., and the script's own) before calling.
# bench_build TARGET...       configures and builds TARGETs (Release) in $build unless
#   CTXFOLD_BIN names a prebuilt binary; then sets BIN and GEN (CTXFOLD_GEN_BIN overrides GEN).
# bench_need TOOL...          stops with exit 4 naming the first TOOL not installed; `time` means
#   /usr/bin/time (Debian package time: peak RSS), the others are looked up on PATH.
# bench_workdir               creates $work (a temporary directory when none was given), removed
#   at exit unless --keep.
# now                         nanoseconds since the epoch.
# best_of CMD...              the fastest of $runs runs of CMD (stdout discarded), in seconds;
#   calls the script's `bench_before_run` first (untimed) when it defines one.
bench_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench_root=$(dirname "$bench_here")
here=$bench_here; root=$bench_root   # the bench/ directory and the repository, for the scripts
runs=${runs:-3}; build=${build:-$bench_root/build-bench}; work=${work:-}; keep=${keep:-0}

bench_init() {
  local script=$1; shift
  bench_script=$script
  while [ $# -gt 0 ]; do
    case "$1" in
      --runs) runs=$2; shift 2 ;;
      --build) build=$2; shift 2 ;;
      --work) work=$2; shift 2 ;;
      --keep) keep=1; shift ;;
      *)
        if declare -F bench_opt >/dev/null && bench_opt "$1" "${2-}"; then shift 2
        else echo "$script: unknown option $1" >&2; exit 2; fi ;;
    esac
  done
}

bench_build() {
  if [ -z "${CTXFOLD_BIN:-}" ]; then
    cmake -S "$bench_root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" --target "$@" -j2 >/dev/null
  fi
  BIN=${CTXFOLD_BIN:-$build/ctxfold}
  GEN=${CTXFOLD_GEN_BIN:-$build/bench/ctxfold-gen}
}

bench_need() {
  local tool
  for tool in "$@"; do
    if [ "$tool" = time ]; then
      [ -x /usr/bin/time ] || { echo "$bench_script: /usr/bin/time is required (apt-get install time)" >&2; exit 4; }
    else
      command -v "$tool" >/dev/null || { echo "$bench_script: $tool is required (scripts/deps.sh installs it)" >&2; exit 4; }
    fi
  done
}

bench_workdir() {
  [ -n "$work" ] || work=$(mktemp -d)
  mkdir -p "$work"
  [ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
}

now() { date +%s%N; }

best_of() {
  local best="" t0 t1 d
  for _ in $(seq "$runs"); do
    if declare -F bench_before_run >/dev/null; then bench_before_run; fi
    t0=$(now); "$@" >/dev/null; t1=$(now)
    d=$(( t1 - t0 ))
    if [ -z "$best" ] || [ "$d" -lt "$best" ]; then best=$d; fi
  done
  python3 -c "print($best/1e9)"
}
