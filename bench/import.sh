#!/usr/bin/env bash
# Import throughput and memory against jq, several ctxfold binaries side by side in one run
# (issue 22 item 1; bench/README.md "Import: ctxfold vs jq, binaries side by side").
# For each size: ctxfold-gen --format F --nodes N --compact-tail 50 --seed 1 (no compaction for
# gemini, whose generator has none; codex and gemini count lines), the file read once to warm the
# page cache, then `jq -c . FILE` and `BIN --db fresh.db import FILE` for each BIN, one run each
# after `sync` and a pause (the previous run's database is still being written back otherwise),
# wall and CPU (user+sys) and peak RSS from /usr/bin/time. Prints one markdown row per tool.
#
# usage: bench/import.sh [--format claude-code|codex|gemini] [--sizes "1e4 1e5 1e6"] [--gen PATH] [--work DIR] BIN...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sizes="1e4 1e5 1e6"
format=claude-code
gen=${CTXFOLD_GEN_BIN:-$(dirname "$here")/build-bench/bench/ctxfold-gen}
work=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --format) format=$2; shift 2 ;;
    --gen) gen=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "bench/import.sh: name at least one ctxfold binary" >&2; exit 2; }
[ -x "$gen" ] || { echo "bench/import.sh: no ctxfold-gen at $gen (--gen PATH)" >&2; exit 4; }
command -v jq >/dev/null && [ -x /usr/bin/time ] || { echo "bench/import.sh: needs jq and /usr/bin/time" >&2; exit 4; }
own_work=0
if [ -z "$work" ]; then work=$(mktemp -d "${TMPDIR:-/tmp}/ctxfold-import.XXXXXX"); own_work=1; else mkdir -p "$work"; fi
trap '[ "$own_work" = 1 ] && rm -rf "$work"' EXIT

# run LABEL BYTES CMD...: one timed run; prints the row and sets CPU (seconds) of the run.
run() {
  local label=$1 bytes=$2; shift 2
  sync; sleep 3
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" > /dev/null 2> "$work/stderr" || {
    echo "bench/import.sh: $label failed:" >&2; tail -n 5 "$work/stderr" >&2; exit 3; }
  read -r e u s m < "$work/time"
  CPU=$(python3 -c "print($u + $s)")
  WALL=$e
  RSS=$((m / 1024))
}

echo "| lines ($format) | MB | tool | MB/s (wall) | CPU s | ratio to jq (wall) | ratio to jq (CPU) | peak RSS MB |"
echo "|---:|---:|---|---:|---:|---:|---:|---:|"
for s in $sizes; do
  n=$(python3 -c "print(int(float('$s')))")
  file=$work/n$n.jsonl
  tail=(--compact-tail 50); [ "$format" = gemini ] && tail=()
  "$gen" --format "$format" --nodes "$n" "${tail[@]}" --seed 1 -o "$file" 2> /dev/null
  bytes=$(stat -c %s "$file")
  mb=$(python3 -c "print(round($bytes / 1e6, 1))")
  cat "$file" > /dev/null
  run jq "$bytes" jq -c . "$file"
  jq_wall=$WALL jq_cpu=$CPU
  echo "| $n | $mb | jq | $(python3 -c "print(round($bytes / 1e6 / max($WALL, 1e-3), 1))") | $CPU | 1 | 1 | $RSS |"
  for bin in "$@"; do
    rm -f "$work/x.db" "$work/x.db-wal" "$work/x.db-shm"
    run "$bin" "$bytes" "$bin" --db "$work/x.db" import "$file"
    python3 -c "print('| $n | $mb | $bin | %.1f | %.2f | %.2f | %.2f | $RSS |' % ($bytes / 1e6 / max($WALL, 1e-3), $CPU, $jq_wall / max($WALL, 1e-3), $jq_cpu / max($CPU, 1e-3)))"
  done
  rm -f "$file" "$work/x.db" "$work/x.db-wal" "$work/x.db-shm"
done
