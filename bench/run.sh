#!/usr/bin/env bash
# ctxfold benchmarks (issue 2), side by side in one run:
#   import throughput (MB/s) vs `jq -c . FILE >/dev/null` on the same JSONL   target: ratio >= 1
#   render latency on a compacted session, 10^6 vs 10^3 nodes                  target: ratio <= 2
#   peak RSS: render at 10^6 (< 64 MB); import at 10^4/10^5/10^6 (must not grow with the file)
#   verify-invariants time at 10^5 (extra)
# Results: bench/out/results.json and a table on stdout. Method: bench/README.md.
#
# usage: bench/run.sh [--max 1e6] [--sizes "1e3 1e4 1e5 1e6"] [--runs N] [--no-build] [--keep]
#                     [--work DIR] [--budget SECONDS]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
build=${BUILD_DIR:-$repo/build-bench}
max=1e6
sizes="1e3 1e4 1e5 1e6"
runs=""
do_build=1
keep=0
work=""
budget=${BENCH_BUDGET:-780}   # seconds for the whole run (< 15 minutes)
tail_k=50

while [ $# -gt 0 ]; do
  case "$1" in
    --max) max=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --keep) keep=1; shift ;;
    --work) work=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "bench/run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

num() { python3 -c "import sys; print(int(float(sys.argv[1])))" "$1"; }
max_n=$(num "$max")
t_start=$(date +%s)

for tool in jq python3; do
  command -v "$tool" >/dev/null || { echo "bench/run.sh: $tool is required (scripts/deps.sh installs it)" >&2; exit 4; }
done
[ -x /usr/bin/time ] || { echo "bench/run.sh: /usr/bin/time is required for peak RSS (apt-get install time)" >&2; exit 4; }
have_hf=0
command -v hyperfine >/dev/null && have_hf=1

if [ "$do_build" = 1 ]; then
  echo "== build (Release) in $build" >&2
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target ctxfold ctxfold-gen -j2 >/dev/null
fi
CTXFOLD=${CTXFOLD_BIN:-$build/ctxfold}
GEN=${CTXFOLD_GEN_BIN:-$build/bench/ctxfold-gen}
[ -x "$CTXFOLD" ] && [ -x "$GEN" ] || { echo "bench/run.sh: $CTXFOLD or $GEN missing" >&2; exit 4; }

mkdir -p "$here/out"
if [ -z "$work" ]; then work=$(mktemp -d "${TMPDIR:-/tmp}/ctxfold-bench.XXXXXX"); fi
mkdir -p "$work"
cleanup() { if [ "$keep" = 0 ]; then rm -rf "$work"; fi; }
trap cleanup EXIT
rec=$here/out/measurements.jsonl
: > "$rec"

# record KEY JSON-VALUE...: one measurement object per line, assembled into results.json at the end.
record() { echo "$1" >> "$rec"; }

now_ns() { date +%s%N; }

# timed OUTFILE CMD...: runs CMD with stdout to OUTFILE; sets T_NS (wall ns), CPU_NS (user+sys), RSS_KB, RC.
timed() {
  local outfile=$1; shift
  local tf=$work/time.$$
  local t0 t1
  t0=$(now_ns)
  set +e
  /usr/bin/time -f "%M %U %S" -o "$tf" "$@" > "$outfile" 2> "$work/stderr.$$"
  RC=$?
  set -e
  t1=$(now_ns)
  T_NS=$((t1 - t0))
  local m u sy
  read -r m u sy < <(tail -n 1 "$tf" 2>/dev/null || true)
  RSS_KB=$(echo "${m:-0}" | tr -dc 0-9); [ -n "$RSS_KB" ] || RSS_KB=0
  CPU_NS=$(python3 -c "import sys; print(int((float(sys.argv[1])+float(sys.argv[2]))*1e9))" "${u:-0}" "${sy:-0}" 2>/dev/null || echo 0)
}

runs_for() {  # best-of count per size
  if [ -n "$runs" ]; then echo "$runs"; return; fi
  if [ "$1" -le 1000 ]; then echo 5; elif [ "$1" -le 10000 ]; then echo 3; else echo 1; fi
}

elapsed() { echo $(( $(date +%s) - t_start )); }

import_bps=""   # bytes/second of the last import, to predict the next size's time
bytes_per_node=""
hf_version=""
[ "$have_hf" = 1 ] && hf_version=$(hyperfine --version | awk '{print $2}')
record "{\"kind\":\"env\",\"date\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\",\"nproc\":$(nproc),\"cpu\":$(python3 -c 'import json,re;print(json.dumps(next((l.split(":",1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),"unknown")))'),\"jq\":\"$(jq --version)\",\"hyperfine\":\"$hf_version\",\"commit\":\"$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)\",\"tail_k\":$tail_k}"

for s in $sizes; do
  n=$(num "$s")
  [ "$n" -le "$max_n" ] || continue
  file=$work/n$n.jsonl
  db=$work/n$n.db

  # Disk and time budget: predicted from the previous size (bytes per node, import bytes/s).
  if [ -n "$bytes_per_node" ]; then
    need=$(python3 -c "print(int($n*$bytes_per_node*3.5))")   # JSONL + database (+WAL) headroom
    avail=$(( $(df -Pk "$work" | awk 'NR==2{print $4}') * 1024 ))
    if [ "$need" -gt "$avail" ]; then
      echo "== skip $n nodes: needs ~$((need/1000000)) MB of disk, $((avail/1000000)) MB free" >&2
      record "{\"kind\":\"skipped\",\"nodes\":$n,\"reason\":\"disk: needs ~$((need/1000000)) MB, $((avail/1000000)) MB free\"}"
      continue
    fi
    if [ -n "$import_bps" ]; then
      predicted=$(python3 -c "print(int($n*$bytes_per_node/$import_bps*1.3 + $n*$bytes_per_node/40e6 + 20))")
      left=$(( budget - $(elapsed) ))
      if [ "$predicted" -gt "$left" ]; then
        echo "== skip $n nodes: predicted ~${predicted}s, ${left}s of the budget left" >&2
        record "{\"kind\":\"skipped\",\"nodes\":$n,\"reason\":\"time: predicted ${predicted}s, ${left}s left of ${budget}s\"}"
        continue
      fi
    fi
  fi

  echo "== $n nodes: generate" >&2
  timed /dev/null "$GEN" --nodes "$n" --compact-tail "$tail_k" --seed 1 -o "$file"
  [ "$RC" = 0 ] || { cat "$work/stderr.$$" >&2; exit 3; }
  gen_stats=$(tail -n 1 "$work/stderr.$$")
  bytes=$(stat -c %s "$file")
  bytes_per_node=$(python3 -c "print($bytes/$n)")
  record "{\"kind\":\"gen\",\"nodes\":$n,\"bytes\":$bytes,\"seconds\":$(python3 -c "print($T_NS/1e9)"),\"stats\":$gen_stats}"
  cat "$file" > /dev/null   # same page-cache state for jq and ctxfold

  R=$(runs_for "$n")
  echo "== $n nodes ($((bytes/1000000)) MB): jq -c . vs ctxfold import, best of $R" >&2
  best_jq=0; best_imp=0; rss_imp=0; rss_jq=0; imp_rc=0; cpu_jq=0; cpu_imp=0
  for ((r = 0; r < R; r++)); do
    timed /dev/null jq -c . "$file"
    { [ "$best_jq" = 0 ] || [ "$T_NS" -lt "$best_jq" ]; } && best_jq=$T_NS
    { [ "$cpu_jq" = 0 ] || [ "$CPU_NS" -lt "$cpu_jq" ]; } && cpu_jq=$CPU_NS
    rss_jq=$RSS_KB
    rm -f "$db" "$db-wal" "$db-shm"
    timed "$work/import.json" "$CTXFOLD" --db "$db" import "$file"
    imp_rc=$RC
    if [ "$RC" != 0 ]; then
      echo "   import failed (exit $RC):" >&2; tail -n 5 "$work/stderr.$$" >&2
      break
    fi
    { [ "$best_imp" = 0 ] || [ "$T_NS" -lt "$best_imp" ]; } && best_imp=$T_NS
    { [ "$cpu_imp" = 0 ] || [ "$CPU_NS" -lt "$cpu_imp" ]; } && cpu_imp=$CPU_NS
    [ "$RSS_KB" -gt "$rss_imp" ] && rss_imp=$RSS_KB
  done
  warnings=$(grep -c 'warning' "$work/stderr.$$" || true)
  nodes_added=$(jq '[.sessions[]?.nodes_added] | add // 0' "$work/import.json" 2>/dev/null || echo null)
  db_bytes=$(( $(stat -c %s "$db" 2>/dev/null || echo 0) + $(stat -c %s "$db-wal" 2>/dev/null || echo 0) ))
  record "{\"kind\":\"import\",\"nodes\":$n,\"bytes\":$bytes,\"runs\":$R,\"exit\":$imp_rc,\"import_ns\":$best_imp,\"jq_ns\":$best_jq,\"import_cpu_ns\":$cpu_imp,\"jq_cpu_ns\":$cpu_jq,\"import_rss_kb\":$rss_imp,\"jq_rss_kb\":$rss_jq,\"nodes_added\":$nodes_added,\"stderr_warnings\":$warnings,\"db_bytes\":$db_bytes}"
  [ "$imp_rc" = 0 ] || continue
  import_bps=$(python3 -c "print($bytes/($best_imp/1e9))")

  # The main session: the one the generator wrote (sessionId), else the biggest main session.
  gen_session=$(echo "$gen_stats" | jq -r .session)
  # `sessions` prints JSON Lines (one session per line): slurp them into one array.
  session=$("$CTXFOLD" --db "$db" sessions | jq -rs --arg s "$gen_session" \
    '[.[] | select(.kind=="main")] | (map(select(.id==$s)) + sort_by(-.node_count)) | .[0].id // empty')
  [ -n "$session" ] || { echo "   no main session in $db" >&2; continue; }

  echo "== $n nodes: render --format openai (session $session)" >&2
  rcmd=("$CTXFOLD" --db "$db" --session "$session" render --format openai)
  set +e
  "${rcmd[@]}" > "$work/render.json" 2> "$work/render.err"
  render_rc=$?
  set -e
  if [ "$render_rc" != 0 ]; then
    echo "   render failed (exit $render_rc):" >&2; tail -n 5 "$work/render.err" >&2
    record "{\"kind\":\"render\",\"nodes\":$n,\"exit\":$render_rc}"
  else
    facts=$(jq -c '{summary_substituted: (.summary != null), reads: (.reads|length), messages: (.messages|length), spine_length, estimated_tokens}' "$work/render.json")
    RR=$(( n >= 100000 ? 10 : 20 ))
    if [ "$have_hf" = 1 ]; then
      hyperfine -N --warmup 3 --runs "$RR" --export-json "$work/hf.json" "${rcmd[*]}" >/dev/null 2>&1
      r_min=$(jq '.results[0].min' "$work/hf.json"); r_med=$(jq '.results[0].median' "$work/hf.json")
      r_cpu=$(jq '.results[0].user + .results[0].system' "$work/hf.json")
      method="hyperfine -N --warmup 3 --runs $RR"
    else
      ts=()
      for ((r = 0; r < RR + 3; r++)); do
        t0=$(now_ns); "${rcmd[@]}" > /dev/null; t1=$(now_ns)
        [ "$r" -ge 3 ] && ts+=($((t1 - t0)))
      done
      read -r r_min r_med < <(printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END{printf "%.6f %.6f\n", a[1]/1e9, a[int((NR+1)/2)]/1e9}')
      method="date +%s%N loop, 3 warmup + $RR runs"
      r_cpu=null
    fi
    timed /dev/null "${rcmd[@]}"
    record "{\"kind\":\"render\",\"nodes\":$n,\"exit\":0,\"min_s\":$r_min,\"median_s\":$r_med,\"cpu_mean_s\":$r_cpu,\"rss_kb\":$RSS_KB,\"method\":\"$method\",\"facts\":$facts}"
  fi

  if [ "$n" = 100000 ]; then
    echo "== $n nodes: verify-invariants" >&2
    timed "$work/verify.json" "$CTXFOLD" --db "$db" --session "$session" verify-invariants
    vok=$(jq -c '.ok // null' "$work/verify.json" 2>/dev/null || echo null)
    record "{\"kind\":\"verify\",\"nodes\":$n,\"exit\":$RC,\"seconds\":$(python3 -c "print($T_NS/1e9)"),\"cpu_seconds\":$(python3 -c "print($CPU_NS/1e9)"),\"rss_kb\":$RSS_KB,\"ok\":${vok:-null}}"
  fi

  if [ "$keep" = 0 ]; then rm -f "$file" "$db" "$db-wal" "$db-shm"; fi
done

record "{\"kind\":\"total\",\"seconds\":$(elapsed)}"
python3 "$here/report.py" "$rec" "$here/out/results.json"
