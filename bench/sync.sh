#!/usr/bin/env bash
# ctxfold sync against the imports it saves, side by side in one run (bench/README.md "sync"):
# a generated Claude Code history of N nodes (ctxfold-gen --nodes N --compact-tail 50, one
# session) is imported into a SQLite file and into a throwaway PostgreSQL server; then the file is
# pushed to a second, empty server database (`sync --to`), and that server database pulled into a
# new file (`sync --from`); a second push finds nothing to copy. Each figure: wall, the client's
# CPU and peak RSS, the server's CPU, as ratios to the import into the same engine. Every
# database verifies clean and holds the same node rows (seq, id, digest).
#
# usage: bench/sync.sh [--sizes "1e4 1e5"] [--runs 1] [--build DIR] [--work DIR] [--keep]
#   CTXFOLD_BIN / CTXFOLD_GEN_BIN: measure prebuilt binaries (else a Release build in --build).
# Prints a markdown table; writes bench/out/sync.json (schema ctxfold.bench-sync/1).
set -euo pipefail
sizes="1e4 1e5"; runs=1
bench_opt() { case "$1" in --sizes) sizes=$2 ;; *) return 1 ;; esac; }
. "$(dirname "$0")/lib.sh"
bench_init bench/sync.sh "$@"
bench_need time jq python3 sqlite3
bench_build ctxfold ctxfold-gen
[ -x "$BIN" ] && [ -x "$GEN" ] || { echo "bench/sync.sh: $BIN or $GEN missing" >&2; exit 4; }
bench_workdir
. "$(dirname "$0")/pg_cluster.sh"
pg_cluster_start bench/sync.sh
settle() { sleep 0.3; }   # a backend's CPU reaches the postmaster's once it has exited

# step NAME ENGINE CMD...: runs CMD once, appends its figures to $work/steps.jsonl.
step() {
  local name=$1 engine=$2; shift 2
  local c0 c1 t0 t1
  c0=$(server_cpu); t0=$(now)
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >"$work/out" 2>"$work/err" ||
    { echo "bench/sync.sh: $name failed:" >&2; tail -5 "$work/err" >&2; exit 3; }
  t1=$(now); settle; c1=$(server_cpu)
  read -r _ u s m <"$work/time"
  local copied; copied=$(jq -r '.nodes // empty' "$work/out" 2>/dev/null | head -1)
  python3 -c "import json; print(json.dumps({'step': '$name', 'engine': '$engine', 'nodes': $n, 'wall_s': ($t1 - $t0) / 1e9,
    'client_cpu_s': $u + $s, 'peak_rss_mb': $m / 1024, 'server_cpu_s': $c1 - $c0, 'copied': '${copied:-}'}))" >>"$work/steps.jsonl"
}

: >"$work/steps.jsonl"
for sz in $sizes; do
  n=$(python3 -c "print(int(float('$sz')))")
  f="$work/h$n.jsonl"
  "$GEN" --nodes "$n" --compact-tail 50 --seed 7 -q -o "$f"
  cat "$f" >/dev/null
  echo "== $n nodes: $(stat -c %s "$f") bytes" >&2
  lite="$work/lite$n.db"; pulled="$work/pulled$n.db"
  rm -f "$lite"* "$pulled"*
  for db in imp_$n push_$n; do psql_ -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"; done
  step import sqlite "$BIN" --db "$lite" import "$f"
  step import postgresql "$BIN" --db "$(url_of imp_$n)" import "$f"
  step "sync --to (push)" postgresql "$BIN" --db "$lite" sync --to "$(url_of push_$n)"
  step "sync --from (pull)" sqlite "$BIN" --db "$pulled" sync --from "$(url_of push_$n)"
  step "sync --to again (nothing to copy)" postgresql "$BIN" --db "$lite" sync --to "$(url_of push_$n)"
  for db in "$pulled" "$(url_of push_$n)"; do
    ok=$("$BIN" --db "$db" verify-invariants --all-sessions | jq -r .ok)
    [ "$ok" = true ] || { echo "bench/sync.sh: $db does not verify clean" >&2; exit 3; }
  done
  a=$(sqlite3 "$lite" "SELECT seq, id, digest FROM nodes ORDER BY seq" | sha256sum)
  b=$(sqlite3 "$pulled" "SELECT seq, id, digest FROM nodes ORDER BY seq" | sha256sum)
  c=$(psql_ -d push_$n -tA -F '|' -c "SELECT seq, id, digest FROM nodes ORDER BY seq" | sha256sum)
  [ "$a" = "$b" ] && [ "$a" = "$c" ] || { echo "bench/sync.sh: the copies differ from the source" >&2; exit 3; }
  for db in imp_$n push_$n; do psql_ -c "DROP DATABASE $db"; done
  rm -f "$f" "$lite"* "$pulled"*
done

mkdir -p "$here/out"
python3 - "$work/steps.jsonl" "$here/out/sync.json" <<'PY'
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1])]
print("| nodes | step | wall s | client CPU s | server CPU s | client peak RSS MB | wall ÷ import into the destination's engine | CPU (all) ÷ that import |")
print("|---:|---|---:|---:|---:|---:|---:|---:|")
for s in steps:
    base = next(b for b in steps if b["nodes"] == s["nodes"] and b["step"] == "import" and b["engine"] == s["engine"])
    s["wall_ratio"] = s["wall_s"] / base["wall_s"]
    s["cpu_ratio"] = (s["client_cpu_s"] + s["server_cpu_s"]) / (base["client_cpu_s"] + base["server_cpu_s"])
    name = s["step"] if s["step"] != "import" else f"import into {s['engine']}"
    print(f"| {s['nodes']:,} | {name} | {s['wall_s']:.2f} | {s['client_cpu_s']:.2f} | {s['server_cpu_s']:.2f} | "
          f"{s['peak_rss_mb']:.0f} | {s['wall_ratio']:.2f} | {s['cpu_ratio']:.2f} |")
json.dump({"schema": "ctxfold.bench-sync/1", "steps": steps}, open(sys.argv[2], "w"), indent=1)
PY
