#!/usr/bin/env bash
# Peak RSS of the read commands that must not grow with history (issue 27 item 10):
# verify-invariants, tokens, render and context, on one Claude Code session of N generated nodes,
# raw (as imported) and compacted (`compact --window 200000 --force` with the offline extractive
# summarizer, rerun until it declines: a large session compacts in several partial passes).
# Targets: render and context of the compacted session <= 64 MB at every size; verify and tokens
# growing by a small constant per node at most. Method and results: bench/README.md "Memory".
#
# usage: bench/memory.sh [--sizes "1e4 1e5 2e5"] [--build DIR] [--work DIR] [--keep] [--runs N]
#   A database already in --work (n<N>.db raw, c<N>.db compacted; from --keep) is reused.
#   CTXFOLD_BIN / CTXFOLD_GEN_BIN: measure prebuilt binaries. Results: bench/out/memory.json.
set -euo pipefail
sizes="1e4 1e5 2e5"
runs=1
bench_opt() {
  case "$1" in
    --sizes) sizes=$2 ;;
    *) return 1 ;;
  esac
}
source "$(dirname "$0")/lib.sh"
bench_init bench/memory.sh "$@"
bench_need time jq
bench_build ctxfold ctxfold-gen
bench_workdir
mkdir -p "$here/out"
out=$here/out/memory.jsonl
: > "$out"

# compact_fully DB: rolling compactions until one declines or does nothing (at most 8 passes).
compact_fully() {
  local pass status
  for pass in 1 2 3 4 5 6 7 8; do
    status=$("$BIN" --db "$1" compact --window 200000 --force 2>/dev/null | jq -r .status || true)
    [ "$status" = compacted ] || [ "$status" = partial ] || break
  done
}

# peak DB LABEL N CMD...: the largest peak RSS (KB) of $runs runs of `ctxfold --db DB CMD...`.
peak() {
  local db=$1 label=$2 n=$3; shift 3
  local best=0 kb rc
  for _ in $(seq "$runs"); do
    set +e
    /usr/bin/time -f %M -o "$work/time.txt" "$BIN" --db "$db" "$@" > /dev/null 2>&1
    rc=$?
    set -e
    kb=$(tail -n 1 "$work/time.txt" | tr -dc 0-9)
    [ "$kb" -gt "$best" ] && best=$kb
  done
  echo "{\"nodes\":$n,\"session\":\"$label\",\"command\":\"$*\",\"peak_rss_kb\":$best,\"exit\":$rc}" >> "$out"
  awk -v n="$n" -v l="$label" -v c="$*" -v k="$best" -v rc="$rc" 'BEGIN { printf "%8s %-10s %-18s %8.1f MB  exit %s\n", n, l, c, k / 1024, rc }'
}

for s in $sizes; do
  n=$(python3 -c "import sys; print(int(float(sys.argv[1])))" "$s")
  raw=$work/n$n.db
  cmp=$work/c$n.db
  if [ ! -s "$raw" ]; then
    echo "== generate and import $n nodes" >&2
    "$GEN" --nodes "$n" --seed 1 -q -o "$work/n$n.jsonl"
    "$BIN" --db "$raw" import "$work/n$n.jsonl" > /dev/null
    rm -f "$work/n$n.jsonl"
  fi
  if [ ! -s "$cmp" ]; then
    echo "== compact $n nodes" >&2
    cp "$raw" "$cmp"
    compact_fully "$cmp"
  fi
  nodes=$("$BIN" --db "$raw" sessions | jq -r "select(.type==\"session\" and .kind==\"main\") | .node_count")
  echo "== $n generated lines: $nodes nodes in the main session" >&2
  for db in raw cmp; do
    file=$raw; [ "$db" = cmp ] && file=$cmp
    label=raw; [ "$db" = cmp ] && label=compacted
    for cmd in verify-invariants tokens render context; do peak "$file" "$label" "$nodes" $cmd; done
  done
done
jq -s '{schema:"ctxfold.bench.memory/1", measurements:.}' "$out" > "$here/out/memory.json"
