#!/usr/bin/env bash
# Issue 5 benchmarks, side by side in one run, reported as ratios:
#  - fork --at HEAD of an N-node session vs copying the whole database with sqlite3 ".backup"
#    (target: fork no slower than the copy);
#  - render --as-of (an earlier snapshot's boundary, HEAD pinned) vs a plain render of the same
#    state (target: within 1.5x).
# Usage: bench/fork.sh [--nodes 1e5] [--runs 3] [--build DIR] [--work DIR] [--keep]
# Needs sqlite3, jq, python3. Writes one JSON object (schema ctxfold.bench-fork/1) to stdout and
# bench/out/fork.json.
set -euo pipefail
nodes=1e5; runs=3
bench_opt() { case "$1" in --nodes) nodes=$2 ;; *) return 1 ;; esac; }
. "$(dirname "$0")/lib.sh"
bench_init bench/fork.sh "$@"
bench_build ctxfold ctxfold-gen
bench_workdir
n=$(python3 -c "print(int(float('$nodes')))")
# best_of (bench/lib.sh) calls prepare() before each timed run, untimed.
bench_before_run() { prepare; }

"$GEN" --synthetic --nodes "$n" --seed 1 -o "$work/s.jsonl" 2>/dev/null
db="$work/s.db"
rm -f "$db"*
"$BIN" --db "$db" import "$work/s.jsonl" >/dev/null
S=$("$BIN" --db "$db" snapshot | jq -r .session)
count=$("$BIN" --db "$db" snapshot | jq .node_count)
head=$("$BIN" --db "$db" snapshot | jq -r .head)
bytes=$(stat -c %s "$db")

# fork vs .backup: each fork run works on a fresh copy of the database (so every fork writes
# into the same starting state); each backup run writes a new file.
prepare() { rm -f "$work/copy.db" "$work/fork.db"*; cp "$db" "$work/fork.db"; }
t_fork=$(best_of "$BIN" --db "$work/fork.db" --session "$S" fork --at "$head" --name bench-fork)
t_backup=$(best_of sqlite3 "$db" ".backup '$work/copy.db'")

# render --as-of vs plain render of the same state: append one turn after a snapshot, then render
# the snapshot's state with --as-of - (HEAD pinned) against a plain render of the untouched copy.
cp "$db" "$work/asof.db"
"$BIN" --db "$work/asof.db" --session "$S" snapshot >"$work/snap.json"
printf '%s\n' '{"role":"user","content":"one more"}' '{"role":"assistant","content":"one more answer"}' |
  "$BIN" --db "$work/asof.db" --session "$S" append >/dev/null
prepare() { :; }
t_plain=$(best_of "$BIN" --db "$db" --session "$S" render --format openai)
t_asof=$(best_of sh -c "\"$BIN\" --db \"$work/asof.db\" --session \"$S\" render --format openai --as-of - <\"$work/snap.json\"")
same=$(cmp -s <("$BIN" --db "$db" --session "$S" render --format openai) \
             <("$BIN" --db "$work/asof.db" --session "$S" render --format openai --as-of - <"$work/snap.json") && echo true || echo false)

mkdir -p "$here/out"
python3 - "$n" "$count" "$bytes" "$t_fork" "$t_backup" "$t_plain" "$t_asof" "$same" "$runs" <<'EOF' | tee "$here/out/fork.json"
import json, sys
n, count, size, fork, backup, plain, asof, same, runs = sys.argv[1:]
fork, backup, plain, asof = map(float, (fork, backup, plain, asof))
print(json.dumps({
  "schema": "ctxfold.bench-fork/1", "nodes_generated": int(n), "session_nodes": int(count),
  "db_bytes": int(size), "runs": int(runs), "best_of_runs": True,
  "fork_seconds": fork, "sqlite3_backup_seconds": backup, "fork_vs_backup": round(fork / backup, 3),
  "fork_target": "<= 1.0",
  "render_seconds": plain, "render_as_of_seconds": asof, "as_of_vs_plain": round(asof / plain, 3),
  "as_of_target": "<= 1.5", "as_of_bytes_identical": same == "true"}, indent=1))
EOF
