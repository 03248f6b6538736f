#!/usr/bin/env bash
# The PostgreSQL backend against SQLite, side by side in one run (issue 25 item 6; bench/README.md
# "PostgreSQL: concurrent import and verify"):
#  - import: the same four generated Claude Code files (ctxfold-gen --nodes N/4 --compact-tail 50,
#    seeds 1-4: four sessions) into a fresh database by W concurrent writers (each one
#    `ctxfold import` of 4/W of the files), W = 1, 2, 4, into a throwaway server and into a SQLite
#    file; wall (first start to last exit) and CPU (the writers' user+sys; the server's processes'
#    too) as ratios to one writer into SQLite. While the server's writers run, pg_stat_activity is
#    sampled every 0.2 s: what each writer's backend is doing (waiting for the advisory lock,
#    waiting for the client's next statement, running).
#  - verify-invariants --all-sessions on the server database against the SQLite file holding the
#    same four files.
# The cluster: initdb + pg_ctl (Debian's postgresql, /usr/lib/postgresql/*/bin) in a temporary
# directory, a Unix socket only, default settings (fsync on), stopped and removed at the end.
#
# usage: bench/pg.sh [--sizes "1e4 1e5"] [--writers "1 2 4"] [--runs 1] [--build DIR] [--work DIR] [--keep]
#   CTXFOLD_BIN / CTXFOLD_GEN_BIN: measure prebuilt binaries (else a Release build in --build).
# Prints markdown tables; writes bench/out/pg.json (schema ctxfold.bench-pg/1). With --runs R each
# measurement is repeated R times and the fastest wall time is kept (with its CPU figures).
set -euo pipefail
sizes="1e4 1e5"; writers="1 2 4"; runs=1
bench_opt() { case "$1" in --sizes) sizes=$2 ;; --writers) writers=$2 ;; *) return 1 ;; esac; }
. "$(dirname "$0")/lib.sh"
bench_init bench/pg.sh "$@"
bench_need time jq python3 sqlite3
bench_build ctxfold ctxfold-gen
[ -x "$BIN" ] && [ -x "$GEN" ] || { echo "bench/pg.sh: $BIN or $GEN missing" >&2; exit 4; }
bench_workdir
. "$(dirname "$0")/pg_cluster.sh"
pg_cluster_start bench/pg.sh
pg_version=$(psql_ -tA -c 'SHOW server_version')

# settle DB: waits until the server's backends for DB have exited and been reaped, so that their
# CPU time is in the postmaster's (a backend exits after its client does).
settle() {
  local i
  for i in $(seq 100); do pgrep -P "$postmaster" -f " $1 " >/dev/null || break; sleep 0.05; done
  sleep 0.2
}

# sampler_start DB / sampler_stop: one psql session asks pg_stat_activity every 0.2 s what the
# client backends of DB wait for; the rows go to $work/waits.
sampler_start() {
  rm -f "$work/stop"
  (while [ ! -e "$work/stop" ]; do
     echo "SELECT pid, coalesce(wait_event_type, 'running'), coalesce(wait_event, ''), state FROM pg_stat_activity WHERE datname = '$1' AND backend_type = 'client backend' AND pid <> pg_backend_pid();"
     sleep 0.2
   done) | "$PG_BIN/psql" -X -At -F '|' >"$work/waits" 2>/dev/null &
  sampler=$!
}
sampler_stop() { touch "$work/stop"; wait "$sampler" || true; }

# writers ENGINE W DB [NAME]: the four files imported by W concurrent `ctxfold import`s into DB (a
# path, or a URL to the server's database NAME); appends one JSON line to $work/import.jsonl.
writers() {
  local engine=$1 w=$2 db=$3 i t0 t1 cpu0 cpu1 per=$((4 / $2)) pids=()
  cpu0=$(server_cpu)
  t0=$(now)
  for ((i = 0; i < w; i++)); do
    /usr/bin/time -f "%e %U %S %M" -o "$work/time.$i" \
      "$BIN" --db "$db" import "${files[@]:$((i * per)):$per}" >"$work/imp.$i" 2>"$work/imp.$i.err" &
    pids+=($!)
  done
  : >"$work/failed"
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" && continue
    # SQLite's writers wait 5 s for the write lock (busy timeout), then give up: recorded, not fatal.
    [ "$engine" = sqlite ] || { echo "bench/pg.sh: writer $i into $db failed:" >&2; tail -n 5 "$work/imp.$i.err" >&2; exit 3; }
    head -1 "$work/imp.$i.err" >>"$work/failed"
  done
  t1=$(now)
  if [ "$engine" = postgresql ]; then settle "$4"; fi
  cpu1=$(server_cpu)
  python3 - "$engine" "$w" "$n" "$t0" "$t1" "$cpu0" "$cpu1" "$work" <<'PY' >>"$work/import.jsonl"
import json, sys
engine, w, n, t0, t1, c0, c1, work = sys.argv[1:]
# /usr/bin/time writes "Command exited with non-zero status N" before its figures on a failure.
rows = [open(f"{work}/time.{i}").read().strip().split("\n")[-1].split() for i in range(int(w))]
print(json.dumps({"engine": engine, "writers": int(w), "nodes": int(n), "wall_s": (int(t1) - int(t0)) / 1e9,
  "client_cpu_s": sum(float(r[1]) + float(r[2]) for r in rows), "writer_wall_s": [float(r[0]) for r in rows],
  "peak_rss_mb": max(int(r[3]) for r in rows) / 1024,
  "server_cpu_s": (float(c1) - float(c0)) if engine == "postgresql" else 0.0,
  "failed_writers": [l.strip() for l in open(f"{work}/failed")]}))
PY
}

# waits LABEL: the sampled states of the last server run, as one JSON line in $work/waits.jsonl.
waits() {
  python3 - "$1" "$work/waits" <<'PY' >>"$work/waits.jsonl"
import collections, json, sys
label, path = sys.argv[1], sys.argv[2]
c = collections.Counter()
for line in open(path):
    p = line.rstrip("\n").split("|")
    if len(p) < 4: continue
    kind, event = p[1], p[2]
    if kind == "Lock" and event == "advisory": c["advisory_lock"] += 1
    elif kind == "Client" and event == "ClientRead": c["client_read"] += 1
    elif kind == "running": c["running"] += 1
    else: c["other:" + kind + "/" + event] += 1
print(json.dumps({"label": label, "samples": sum(c.values()), "states": dict(c)}))
PY
}

: >"$work/import.jsonl"; : >"$work/waits.jsonl"; : >"$work/verify.jsonl"
for s in $sizes; do
  n=$(python3 -c "print(int(float('$s')))")
  files=()
  for k in 1 2 3 4; do
    "$GEN" --nodes $((n / 4)) --compact-tail 50 --seed "$k" -q -o "$work/n$n.$k.jsonl"
    files+=("$work/n$n.$k.jsonl")
  done
  cat "${files[@]}" >/dev/null   # warm the page cache
  echo "== $n nodes: $(du -cb "${files[@]}" | tail -1 | cut -f1) bytes in 4 files" >&2
  for ((r = 0; r < runs; r++)); do
    for w in $writers; do
      rm -f "$work/lite.db"*
      echo "== $n nodes, SQLite, $w writer(s), run $((r + 1))" >&2
      writers sqlite "$w" "$work/lite.db"
      if [ "$w" = 1 ]; then mv "$work/lite.db" "$work/keep.db"; fi   # no -wal left once its writers closed
      db=imp_${n}_${w}_$r
      psql_ -c "CREATE DATABASE $db"
      echo "== $n nodes, PostgreSQL, $w writer(s), run $((r + 1))" >&2
      sampler_start "$db"
      writers postgresql "$w" "$(url_of "$db")" "$db"
      sampler_stop
      waits "$n nodes, $w writers"
      # The same data either way: node count, and a clean verify later for the 1-writer database.
      a=$(sqlite3 "$work/keep.db" "SELECT count(*) FROM nodes"); b=$(psql_ -d "$db" -tA -c "SELECT count(*) FROM nodes")
      [ "$a" = "$b" ] || { echo "bench/pg.sh: $n nodes, $w writers: $b nodes on the server, $a in SQLite" >&2; exit 3; }
      if [ "$w" != 1 ] || [ "$r" != 0 ]; then psql_ -c "DROP DATABASE $db"; fi
    done
  done
  # verify-invariants --all-sessions on both, the page cache and the server's buffers warmed by one
  # untimed run each.
  vdb=imp_${n}_1_0
  server_size=$(psql_ -tA -c "SELECT pg_database_size('$vdb')")
  for engine in sqlite postgresql; do
    if [ "$engine" = sqlite ]; then db=$work/keep.db; else db=$(url_of "$vdb"); fi
    "$BIN" --db "$db" verify-invariants --all-sessions >"$work/verify.$engine" 2>&1 || true
    for ((r = 0; r < runs; r++)); do
      cpu0=$(server_cpu); t0=$(now)
      rc=0
      /usr/bin/time -f "%e %U %S %M" -o "$work/time.v" "$BIN" --db "$db" verify-invariants --all-sessions >"$work/verify.$engine" 2>&1 || rc=$?
      t1=$(now)
      if [ "$engine" = postgresql ]; then settle "$vdb"; fi
      cpu1=$(server_cpu)
      ok=$(jq -r .ok "$work/verify.$engine" 2>/dev/null || echo null)
      read -r _ u sy m <"$work/time.v"
      python3 -c "import json; print(json.dumps({'engine': '$engine', 'nodes': $n, 'wall_s': ($t1 - $t0) / 1e9, 'client_cpu_s': $u + $sy,
        'server_cpu_s': ($cpu1 - $cpu0) if '$engine' == 'postgresql' else 0.0, 'peak_rss_mb': $m / 1024, 'exit': $rc, 'ok': '$ok',
        'db_bytes': $(if [ "$engine" = sqlite ]; then stat -c %s "$work/keep.db"; else echo "$server_size"; fi)}))" >>"$work/verify.jsonl"
    done
  done
  psql_ -c "DROP DATABASE $vdb"
  rm -f "${files[@]}" "$work/lite.db"* "$work/keep.db"
done

mkdir -p "$here/out"
python3 - "$work" "$here/out/pg.json" "$pg_version" "$runs" <<'PY'
import json, sys
work, out, version, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
load = lambda name: [json.loads(l) for l in open(f"{work}/{name}.jsonl")]
imports, waits, verifies = load("import"), load("waits"), load("verify")
def best(rows):   # fastest wall of the runs
    return min(rows, key=lambda r: r["wall_s"])
res = {"schema": "ctxfold.bench-pg/1", "postgresql": version, "runs": runs, "import": [], "verify": [], "waits": waits}
print("| nodes | engine | writers | wall s | writers' CPU s | server CPU s | wall ÷ SQLite 1 writer | CPU (all) ÷ SQLite 1 writer |")
print("|---:|---|---:|---:|---:|---:|---:|---:|")
for n in sorted({r["nodes"] for r in imports}):
    base = best([r for r in imports if r["nodes"] == n and r["engine"] == "sqlite" and r["writers"] == 1])
    for engine in ("sqlite", "postgresql"):
        for w in sorted({r["writers"] for r in imports}):
            rows = [r for r in imports if r["nodes"] == n and r["engine"] == engine and r["writers"] == w]
            if not rows: continue
            b = best(rows)
            b["wall_ratio"] = b["wall_s"] / base["wall_s"]
            b["cpu_ratio"] = (b["client_cpu_s"] + b["server_cpu_s"]) / base["client_cpu_s"]
            res["import"].append(b)
            failed = f" ({len(b['failed_writers'])} of {w} failed: {b['failed_writers'][0]})" if b["failed_writers"] else ""
            print(f"| {n:,} | {engine} | {w}{failed} | {b['wall_s']:.2f} | {b['client_cpu_s']:.2f} | {b['server_cpu_s']:.2f} | "
                  f"{b['wall_ratio']:.2f} | {b['cpu_ratio']:.2f} |")
print()
print("| nodes | engine | database MB | wall s | client CPU s | server CPU s | verify ok | wall ÷ SQLite | CPU (all) ÷ SQLite |")
print("|---:|---|---:|---:|---:|---:|---|---:|---:|")
for n in sorted({r["nodes"] for r in verifies}):
    base = best([r for r in verifies if r["nodes"] == n and r["engine"] == "sqlite"])
    for engine in ("sqlite", "postgresql"):
        b = best([r for r in verifies if r["nodes"] == n and r["engine"] == engine])
        b["wall_ratio"] = b["wall_s"] / base["wall_s"]
        b["cpu_ratio"] = (b["client_cpu_s"] + b["server_cpu_s"]) / base["client_cpu_s"]
        res["verify"].append(b)
        print(f"| {n:,} | {engine} | {b['db_bytes'] / 1e6:.0f} | {b['wall_s']:.2f} | {b['client_cpu_s']:.2f} | "
              f"{b['server_cpu_s']:.2f} | {b['ok']} | {b['wall_ratio']:.2f} | {b['cpu_ratio']:.2f} |")
print()
print("What the server's writer backends were doing (pg_stat_activity, every 0.2 s; share of samples):")
print("| run | samples | advisory lock | waiting for the client (ClientRead) | running | other |")
print("|---|---:|---:|---:|---:|---:|")
for wt in waits:
    s = wt["states"]; tot = max(wt["samples"], 1)
    other = sum(v for k, v in s.items() if k.startswith("other:"))
    print(f"| {wt['label']} | {wt['samples']} | {100 * s.get('advisory_lock', 0) / tot:.0f} % | "
          f"{100 * s.get('client_read', 0) / tot:.0f} % | {100 * s.get('running', 0) / tot:.0f} % | {100 * other / tot:.0f} % |")
json.dump(res, open(out, "w"), indent=1)
PY
