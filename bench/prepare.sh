#!/usr/bin/env bash
# Issue 11 benchmark: `prepare` on a session that needs no compaction (a window it stays under)
# against a plain `render` of the same state, same format, measured in the same run (target:
# within 1.3x). Both print the anthropic request document; prepare also reads the session's
# strategy, projects, decides the trigger and (not due) prints.
# Usage: bench/prepare.sh [--nodes 1e4] [--runs 5] [--build DIR] [--work DIR] [--keep]
# Needs jq, python3. Writes one JSON object (schema ctxfold.bench-prepare/1) to stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
nodes=1e4; runs=5; build="$root/build-bench"; work=""; keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "${CTXFOLD_BIN:-}" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target ctxfold ctxfold-gen -j2 >/dev/null
fi
BIN=${CTXFOLD_BIN:-$build/ctxfold}
GEN=${CTXFOLD_GEN_BIN:-$build/bench/ctxfold-gen}
[ -n "$work" ] || work=$(mktemp -d)
mkdir -p "$work"
[ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
n=$(python3 -c "print(int(float('$nodes')))")
now() { date +%s%N; }
best_of() {  # the fastest of $runs runs, in seconds
  local best=""
  for _ in $(seq "$runs"); do
    local t0 t1 s
    t0=$(now); "$@" >/dev/null; t1=$(now)
    s=$(python3 -c "print(($t1-$t0)/1e9)")
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $s < $best else 1)"; then best=$s; fi
  done
  echo "$best"
}
"$GEN" --synthetic --nodes "$n" --seed 1 -o "$work/s.jsonl" 2>/dev/null
db="$work/s.db"; rm -f "$db"*
"$BIN" --db "$db" import "$work/s.jsonl" >/dev/null
S=$("$BIN" --db "$db" snapshot | jq -r .session)
tokens=$("$BIN" --db "$db" --session "$S" render | jq .tokens.value)
window=$(( tokens * 10 ))   # far from the trigger: nothing is due
render=$(best_of "$BIN" --db "$db" --session "$S" render --format anthropic)
prepare=$(best_of "$BIN" --db "$db" --session "$S" prepare --format anthropic --window "$window")
due=$("$BIN" --db "$db" --session "$S" prepare --format anthropic --window "$window" | jq .prepare.due)
[ "$due" = false ] || { echo "bench/prepare.sh: the session was due" >&2; exit 1; }
python3 - "$n" "$tokens" "$render" "$prepare" <<'PY'
import json, sys
n, tokens, render, prepare = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
print(json.dumps({"schema": "ctxfold.bench-prepare/1", "nodes": n, "render_tokens": tokens,
                  "render_s": round(render, 4), "prepare_s": round(prepare, 4),
                  "ratio": round(prepare / render, 3), "target": 1.3, "met": prepare / render <= 1.3}))
PY
