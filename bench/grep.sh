#!/usr/bin/env bash
# grep and expand benchmarks (issue 4), measured side by side in one run:
#   grep vs ripgrep: the same history as a ctxfold database and as plain text (one node per line,
#     newlines escaped: bench/export_text.cpp), `rg -F -i -c P` vs `ctxfold grep -i --all-sessions
#     --limit 0 P`, for a common, a rare and CJK patterns. Targets: full scan (--no-index, on a
#     plain import) at least ripgrep's throughput (issue 22; CPU ns per node shown); indexed query
#     (after `ctxfold index`) >= 10x faster than ripgrep; identical matching-row counts.
#   expand: a page at 90% of the covered range vs the first page (same summary). Target: <= 2x.
# Results: bench/out/grep-results.json and a Markdown table on stdout. Method: bench/README.md.
#
# usage: bench/grep.sh [--nodes N] [--runs N] [--full-history | --short B] [--no-build] [--keep] [--work DIR]
#   --full-history: replay the transcripts whole (thinking, images, tool metadata); by default
#   ctxfold-gen --text-dense keeps mostly searchable text, so a 500 MB text corpus fits on disk.
#   --short B: ctxfold-gen --short B, every message string cut to B bytes: many short nodes (a few
#   hundred bytes of text each), the shape where a per-node cost shows (issue 22).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
build=${BUILD_DIR:-$repo/build-bench}
nodes=1200k
runs=3
dense=--text-dense
do_build=1
keep=0
work=""
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --full-history) dense=""; shift ;;
    --short) dense="--short $2"; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --keep) keep=1; shift ;;
    --work) work=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "bench/grep.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for tool in rg hyperfine jq python3 sqlite3; do
  command -v "$tool" >/dev/null || { echo "bench/grep.sh: $tool is required (scripts/deps.sh installs it)" >&2; exit 4; }
done
if [ "$do_build" = 1 ]; then
  echo "== build (Release) in $build" >&2
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target ctxfold ctxfold-gen ctxfold-export-text -j2 >/dev/null
fi
CTXFOLD=${CTXFOLD_BIN:-$build/ctxfold}
GEN=$build/bench/ctxfold-gen
EXPORT=$build/bench/ctxfold-export-text
mkdir -p "$here/out"
[ -n "$work" ] || work=$(mktemp -d "${TMPDIR:-/tmp}/ctxfold-grepbench.XXXXXX")
mkdir -p "$work"
cleanup() { [ "$keep" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT
out="$here/out/grep-results.json"
log() { echo "== $*" >&2; }
secs() { python3 -c "import sys; print(f'{float(sys.argv[1]):.3f}')" "$1"; }

db="$work/h.db"; txt="$work/h.txt"; jsonl="$work/h.jsonl"
if [ ! -s "$db" ]; then
  log "generate $nodes nodes (real transcripts + --cjk, one compaction leaving 50 nodes)"
  "$GEN" --nodes "$nodes" --cjk $dense --compact-tail 50 --seed 1 -o "$jsonl" 2> "$work/gen.json"
  log "import $(du -h "$jsonl" | cut -f1)"
  t0=$(date +%s.%N)
  "$CTXFOLD" --db "$db" import "$jsonl" > /dev/null
  import_s=$(python3 -c "import sys; print(float(sys.argv[2])-float(sys.argv[1]))" "$t0" "$(date +%s.%N)")
  rm -f "$jsonl"
else
  import_s=null
fi
log "export text"
"$EXPORT" "$db" "$txt"
text_bytes=$(stat -c %s "$txt")
rows=$(wc -l < "$txt")
log "text corpus: $text_bytes bytes, $rows rows"
cat "$txt" > /dev/null  # page cache warm for rg, as the database is for ctxfold after its first run

# One hyperfine measurement: prints the mean seconds.
bench_cmd() {  # name command...
  shift
  local cmd="" a
  for a in "$@"; do cmd+="'${a//\'/\'\\\'\'}' "; done  # single-quoted words (hyperfine splits like a shell)
  hyperfine -N -i --style none --warmup 1 --runs "$runs" --export-json "$work/hf.json" "$cmd" > /dev/null
  jq -r '.results[0] | "\(.mean) \(.min) \(.user + .system)"' "$work/hf.json"
}
ctx_count() {  # args... -> raw+summary matches
  "$CTXFOLD" --db "$db" grep -i --all-sessions --limit 0 "$@" | tail -1 | jq -r '.raw_matches + .summary_matches'
}

patterns=("error" "tmux waiting overlay summaries" "签名校验失败" "飞书")
labels=("common" "rare" "CJK" "CJK, 2 chars")
results="[]"
measure_all() {  # phase (scan|index)
  local phase=$1 i
  for i in "${!patterns[@]}"; do
    local p=${patterns[$i]}
    local rg_count ctx
    rg_count=$(rg -F -i -c -- "$p" "$txt" || echo 0)
    read -r rg_mean rg_min rg_cpu < <(bench_cmd rg rg -F -i -c -- "$p" "$txt")
    if [ "$phase" = scan ]; then
      ctx=$(ctx_count --no-index -- "$p")
      read -r c_mean c_min c_cpu < <(bench_cmd ctx "$CTXFOLD" --db "$db" grep -i --all-sessions --limit 0 --no-index -- "$p")
    else
      ctx=$(ctx_count -- "$p")
      read -r c_mean c_min c_cpu < <(bench_cmd ctx "$CTXFOLD" --db "$db" grep -i --all-sessions --limit 0 -- "$p")
    fi
    local how
    how=$("$CTXFOLD" --db "$db" grep -i --all-sessions --limit 0 $([ "$phase" = scan ] && echo --no-index) -- "$p" | tail -1 | jq -r .index)
    log "$phase '$p': rg $rg_count rows $(secs "$rg_mean") s; ctxfold ($how) $ctx rows $(secs "$c_mean") s"
    results=$(jq -c --arg phase "$phase" --arg p "$p" --arg lbl "${labels[$i]}" --arg how "$how" \
      --argjson rgc "$rg_count" --argjson cc "$ctx" --argjson rgm "$rg_mean" --argjson rgmin "$rg_min" \
      --argjson rgcpu "$rg_cpu" --argjson cm "$c_mean" --argjson cmin "$c_min" --argjson ccpu "$c_cpu" \
      --argjson bytes "$text_bytes" --argjson nodes "$rows" \
      '. + [{phase:$phase, pattern:$p, label:$lbl, answered_by:$how, rg_rows:$rgc, ctxfold_rows:$cc,
             same_count:($rgc==$cc), rg_s:$rgm, rg_min_s:$rgmin, rg_cpu_s:$rgcpu, ctxfold_s:$cm,
             ctxfold_min_s:$cmin, ctxfold_cpu_s:$ccpu, rg_mb_s:($bytes/$rgm/1e6), ctxfold_mb_s:($bytes/$cm/1e6),
             throughput_ratio:($rgm/$cm), cpu_ratio:($rgcpu/$ccpu),
             rg_cpu_ns_per_node:($rgcpu*1e9/$nodes), ctxfold_cpu_ns_per_node:($ccpu*1e9/$nodes)}]' <<< "$results")
  done
}

log "grep: full scan (no index) vs rg"
measure_all scan
log "ctxfold index"
t0=$(date +%s.%N)
"$CTXFOLD" --db "$db" index > "$work/index.json"
index_s=$(python3 -c "import sys; print(float(sys.argv[2])-float(sys.argv[1]))" "$t0" "$(date +%s.%N)")
db_bytes=$(stat -c %s "$db")
fts_bytes=$(sqlite3 "file:$db?mode=ro" "SELECT coalesce(sum(pgsize),0) FROM dbstat WHERE name LIKE 'grep_fts%'" 2>/dev/null || echo null)
log "index: $(secs "$index_s") s; database now $db_bytes bytes (FTS tables $fts_bytes)"
log "grep: indexed vs rg"
measure_all index

log "expand: first page vs a page at 90% of the covered range"
sid=$(jq -r .compact.summary "$work/gen.json")  # the generator's compaction: covers all but ~50 nodes
total=$(sqlite3 "file:$db?mode=ro" "SELECT sum(t.graphemes) + 2*(count(*)-1), sum(t.bytes), count(*) FROM covers c JOIN nodes n ON n.id=c.node_id JOIN node_text t ON t.seq=n.seq WHERE c.summary_seq=(SELECT seq FROM nodes WHERE id='$sid')")
IFS='|' read -r range_g range_b range_rows <<< "$total"
off90=$(( range_g * 9 / 10 ))
read -r e0_mean e0_min e0_cpu < <(bench_cmd e0 "$CTXFOLD" --db "$db" expand "$sid" --offset 0 --limit 20000)
read -r e9_mean e9_min e9_cpu < <(bench_cmd e9 "$CTXFOLD" --db "$db" expand "$sid" --offset "$off90" --limit 20000)
log "expand $sid: $range_rows rows, $range_b bytes; page 0 $(secs "$e0_mean") s, page at 90% $(secs "$e9_mean") s"

jq -n --argjson grep "$results" --arg nodes "$nodes" --argjson text_bytes "$text_bytes" --argjson rows "$rows" \
  --argjson import_s "$import_s" --argjson index_s "$index_s" --argjson db_bytes "$db_bytes" \
  --argjson fts_bytes "${fts_bytes:-null}" --argjson index "$(cat "$work/index.json")" \
  --arg sid "$sid" --argjson range_rows "$range_rows" --argjson range_bytes "$range_b" --argjson range_g "$range_g" \
  --argjson e0 "$e0_mean" --argjson e9 "$e9_mean" --argjson e0cpu "$e0_cpu" --argjson e9cpu "$e9_cpu" \
  --arg rg "$(rg --version | head -1)" --arg commit "$(git -C "$repo" rev-parse --short HEAD)" --arg when "$(date -u +%FT%TZ)" \
  '{schema:"ctxfold.bench.grep/1", when:$when, commit:$commit, ripgrep:$rg, nodes:$nodes, text_bytes:$text_bytes,
    rows:$rows, import_s:$import_s, index_s:$index_s, db_bytes:$db_bytes, fts_bytes:$fts_bytes, index:$index,
    grep:$grep,
    expand:{summary:$sid, rows:$range_rows, bytes:$range_bytes, graphemes:$range_g, first_page_s:$e0,
            page_90_s:$e9, first_page_cpu_s:$e0cpu, page_90_cpu_s:$e9cpu, ratio:($e9/$e0)}}' > "$out"

echo "| phase | pattern | answered by | rg rows | ctxfold rows | rg s | ctxfold s | rg / ctxfold CPU s | rg / ctxfold CPU ns per node | ctxfold/rg throughput (wall) | (CPU) |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
jq -r '.grep[] | "| \(.phase) | `\(.pattern)` (\(.label)) | \(.answered_by) | \(.rg_rows) | \(.ctxfold_rows) | \(.rg_s*1000|round/1000) | \(.ctxfold_s*1000|round/1000) | \(.rg_cpu_s*1000|round/1000) / \(.ctxfold_cpu_s*1000|round/1000) | \(.rg_cpu_ns_per_node|round) / \(.ctxfold_cpu_ns_per_node|round) | **\(.throughput_ratio*100|round/100)** | **\(.cpu_ratio*100|round/100)** |"' "$out"
jq -r '"\nexpand \(.expand.rows) rows, \(.expand.bytes) bytes: first page \(.expand.first_page_s*1000|round) ms, page at 90% \(.expand.page_90_s*1000|round) ms, ratio \(.expand.ratio*100|round/100)"' "$out"
echo "results: $out" >&2
