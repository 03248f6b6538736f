#!/usr/bin/env bash
# Import of a whole agent home (issue 10, second benchmark): a Claude Code home of at least
# --mb MB (default 1024) made of --file-mb MB sessions scaled from the real transcripts by ctxfold-gen (fresh
# ids, one session per file, four project folders), imported with `import --from claude-code`,
# then imported again with nothing new. Reported: both wall times, MB/s, and the ratio
# second/first (target < 2%). Then one file grows by 500 synthetic nodes: the third run reads
# only those bytes (resumed at the offset the second run recorded).
# Data goes to a temporary folder (--work), deleted at the end unless --keep.
#
# usage: bench/home_import.sh [--mb 1024] [--file-mb 64] [--work DIR] [--keep] [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mb=1024; file_mb=64; work=""; keep=0; build=$here/../build
while [ $# -gt 0 ]; do
  case "$1" in
    --mb) mb=$2; shift 2 ;;
    --file-mb) file_mb=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) build=$1; shift ;;
  esac
done
[ -n "$work" ] || work=$(mktemp -d)
mkdir -p "$work"
[ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
gen=$build/bench/ctxfold-gen; bin=$build/ctxfold
home=$work/home; db=$work/home.db
rm -rf "$home" "$db"*
# ~1.8 KB per generated node (bench/README "The generator")
nodes=$((file_mb * 1024 * 1024 / 1850))
files=$(( (mb + file_mb - 1) / file_mb ))
for i in $(seq 1 "$files"); do
  dir=$home/projects/-bench-project-$((i % 4))
  mkdir -p "$dir"
  "$gen" -q --nodes "$nodes" --seed "$i" -o "$dir/$(printf '00000000-0000-4000-8000-%012d' "$i").jsonl"
done
bytes=$(find "$home" -name '*.jsonl' -printf '%s\n' | awk '{s+=$1} END {print s}')
now() { date +%s%N; }
run() { CLAUDE_CONFIG_DIR=$home "$bin" --db "$db" import --from claude-code --no-progress 2>/dev/null; }
t0=$(now); run >"$work/first.json"; t1=$(now); run >"$work/second.json"; t2=$(now)
f=$(find "$home" -name '*.jsonl' | sort | head -1)
"$gen" -q --synthetic --nodes 500 --seed 999 >>"$f"   # more lines (their own ids; no inline sidechain)
t3=$(now); run >"$work/third.json"; t4=$(now)
first=$(( (t1 - t0) / 1000000 )); second=$(( (t2 - t1) / 1000000 )); third=$(( (t4 - t3) / 1000000 ))
jq -n --argjson bytes "$bytes" --argjson files "$files" --argjson first "$first" --argjson second "$second" \
      --argjson third "$third" --slurpfile a "$work/first.json" --slurpfile b "$work/second.json" --slurpfile c "$work/third.json" '{
  home_bytes: $bytes, files: $files,
  first_ms: $first, first_mb_per_s: (($bytes / 1048576) / ($first / 1000) | . * 10 | round / 10),
  first_nodes_added: $a[0].nodes_added,
  second_ms: $second, second_bytes_read: $b[0].bytes_read, second_nodes_added: $b[0].nodes_added,
  ratio_second_first_pct: ($second / $first * 100 | . * 100 | round / 100),
  third_ms: $third, third_bytes_read: $c[0].bytes_read, third_outcomes: $c[0].outcomes,
  third_resumed: [$c[0].files[] | {outcome, bytes_read, resumed_at, read_whole_because}],
  target_met: ($second / $first < 0.02)}'
