#!/usr/bin/env bash
# Issue 11 benchmark: `prepare` on a session that needs no compaction (a window it stays under)
# against a plain `render` of the same state, same format, measured in the same run (target:
# within 1.3x). Both print the anthropic request document; prepare also reads the session's
# strategy, projects, decides the trigger and (not due) prints.
# Usage: bench/prepare.sh [--nodes 1e4] [--runs 5] [--build DIR] [--work DIR] [--keep]
# Needs jq, python3. Writes one JSON object (schema ctxfold.bench-prepare/1) to stdout.
set -euo pipefail
nodes=1e4; runs=5
bench_opt() { case "$1" in --nodes) nodes=$2 ;; *) return 1 ;; esac; }
. "$(dirname "$0")/lib.sh"
bench_init bench/prepare.sh "$@"
bench_build ctxfold ctxfold-gen
bench_workdir
n=$(python3 -c "print(int(float('$nodes')))")
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
