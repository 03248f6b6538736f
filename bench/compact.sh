#!/usr/bin/env bash
# Compaction benchmarks (issue 3, "Benchmarks"):
#  1. pipeline overhead without model time: compact an N-node generated session with the
#     extractive summarizer; wall/CPU/RSS, summarizer calls vs the minimum the chunk size allows
#     (min = ceil(evicted tokens / chunk tokens), chunk = summarizer window / 2; evicted tokens
#     from the --dry-run plan of the same compaction).
#  2. prompt-cache stability: render (anthropic and openai --body), append 100 nodes, render again;
#     common-prefix length of the two renders as a fraction of the old render (1.0 = the old render
#     minus its closing bytes is a byte-identical prefix of the new one).
# --strategy lcm (issue 4): the same run with `compact --strategy lcm` and `render --strategy lcm`;
#     chunk = plan.chunk_tokens (leafChunkTokens, default 20000), and the minimum calls the chunk
#     size allows = min_leaves + the parents those leaves condense into, min_leaves =
#     ceil(plan.evicted_tokens / chunk) (leaves are filled by the same node estimates), parents =
#     sum over levels of floor(n / fanout).
# --synthetic: ctxfold-gen --synthetic (built-in templates, no compaction boundary: the whole
#     session is live context) instead of replaying the real transcripts (whose own compactions
#     leave only the nodes after the last one to summarize). Sizes are generator lines; the
#     session's node count (streamed lines merge) is reported as session_nodes.
# The lcm benchmark of issue 4 (a 10^5-node session, extractive summarizer):
#     bench/compact.sh --strategy lcm --synthetic --sizes 1.23e5
# usage: bench/compact.sh [--sizes "1e4 1e5"] [--window 200000] [--summarizer-window W]
#                         [--strategy rolling|lcm] [--fanout F] [--leaf-chunk-tokens T]
#                         [--synthetic] [--no-build] [--keep] [--work DIR]
# Prints one JSON object per size on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
build=${BUILD_DIR:-$repo/build-bench}
sizes="1e4 1e5"; window=200000; swin=""; do_build=1; keep=0; work=""; strategy=rolling; fanout=""; leaf=""
gen_flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --summarizer-window) swin=$2; shift 2 ;;
    --strategy) strategy=$2; shift 2 ;;
    --fanout) fanout=$2; shift 2 ;;
    --leaf-chunk-tokens) leaf=$2; shift 2 ;;
    --synthetic) gen_flags+=(--synthetic); shift ;;
    --no-build) do_build=0; shift ;;
    --keep) keep=1; shift ;;
    --work) work=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "bench/compact.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for t in jq python3; do command -v $t >/dev/null || { echo "bench/compact.sh: $t required" >&2; exit 4; }; done
[ -x /usr/bin/time ] || { echo "bench/compact.sh: /usr/bin/time required" >&2; exit 4; }
if [ "$do_build" = 1 ]; then
  cmake --build "$build" -j2 --target ctxfold ctxfold-gen >/dev/null
fi
C=${CTXFOLD_BIN:-$build/ctxfold}
G=${CTXFOLD_GEN_BIN:-$build/bench/ctxfold-gen}
[ -z "$work" ] && work=$(mktemp -d "${TMPDIR:-/tmp}/ctxfold-cbench.XXXXXX")
mkdir -p "$work"
cleanup() { [ "$keep" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT
num() { python3 -c "import sys; print(int(float(sys.argv[1])))" "$1"; }

for s in $sizes; do
  n=$(num "$s"); name=n$n; db=$work/$name.db
  rm -f "$db" "$db"-wal "$db"-shm
  "$G" --nodes "$n" --seed 1 ${gen_flags[@]+"${gen_flags[@]}"} -o "$work/$name.jsonl" 2>/dev/null
  "$C" --db "$db" import "$work/$name.jsonl" >/dev/null
  cx() { "$C" --db "$db" --session "$name" "$@"; }
  flags=(--window "$window" --force --strategy "$strategy")
  [ -n "$swin" ] && flags+=(--summarizer-window "$swin")
  [ -n "$fanout" ] && flags+=(--fanout "$fanout")
  [ -n "$leaf" ] && flags+=(--leaf-chunk-tokens "$leaf")
  view=(--strategy "$strategy")
  session_nodes=$(cx sessions | jq -r --arg s "$name" 'select(.id == $s) | .node_count')
  cx compact --dry-run "${flags[@]}" > "$work/plan.json"
  # baseline renders (before compaction) for the report
  cx render "${view[@]}" --format anthropic --body > "$work/pre.anthropic"
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$C" --db "$db" --session "$name" compact "${flags[@]}" > "$work/compact.json"
  read -r wall usr sys rss < "$work/time"
  chunk=$( [ -n "$swin" ] && echo $((swin / 2)) || echo 64000 )   # extractive default window 128000
  [ "$strategy" = lcm ] && chunk=$(jq .plan.chunk_tokens "$work/plan.json")
  chunk_prov=$(cx list 2>/dev/null | jq -s -r '[.[] | .. | objects | select(has("chunk_tokens")) | .chunk_tokens][0] // empty' 2>/dev/null || true)
  [ -n "$chunk_prov" ] && chunk=$chunk_prov
  verify_rc=0; cx verify-invariants >/dev/null 2>&1 || verify_rc=$?
  for fmt in anthropic openai; do cx render "${view[@]}" --format $fmt --body > "$work/a.$fmt"; done
  python3 - "$work" > "$work/append.jsonl" <<'PY'
import json, sys
for i in range(100):
    r = "user" if i % 2 == 0 else "assistant"
    print(json.dumps({"role": r, "content": f"bench append {i}: " + "lorem ipsum dolor sit amet " * 8}))
PY
  head_before=$(jq -r .head "$work/compact.json")
  cx append < "$work/append.jsonl" > "$work/append.out"
  for fmt in anthropic openai; do cx render "${view[@]}" --format $fmt --body > "$work/b.$fmt"; done
  python3 - "$work" "$work/plan.json" "$work/compact.json" "$n" "$wall" "$usr" "$sys" "$rss" "$chunk" "$verify_rc" "$window" "$strategy" "$session_nodes" <<'PY'
import json, math, os, sys
w, planf, compf, n, wall, usr, sys_, rss, chunk, vrc, window, strategy, session_nodes = sys.argv[1:]
plan = json.load(open(planf)); comp = json.load(open(compf))
ev = plan["plan"]["evicted_tokens"]; chunk = int(chunk)
def prefix(a, b):
    i = 0; m = min(len(a), len(b))
    while i < m and a[i] == b[i]: i += 1  # fine for a few MB
    return i
cache = {}
for fmt in ("anthropic", "openai"):
    a = open(os.path.join(w, "a." + fmt), "rb").read(); b = open(os.path.join(w, "b." + fmt), "rb").read()
    import os.path as _
    # fast common prefix via binary search on slices
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]: lo = mid
        else: hi = mid - 1
    cache[fmt] = {"old_bytes": len(a), "new_bytes": len(b), "common_prefix": lo,
                  "fraction_of_old": round(lo / len(a), 6), "old_unmatched_tail_bytes": len(a) - lo}
out_lcm = {}
min_calls = math.ceil(ev / chunk)
if strategy == "lcm":
    fan = comp.get("fanout", 4)
    min_leaves = math.ceil(ev / chunk)
    lvl, min_parents = min_leaves, 0
    while lvl >= fan:
        lvl //= fan
        min_parents += lvl
    min_calls = min_leaves + min_parents
    out_lcm = {"leaves": len(comp.get("leaves", [])), "parents": len(comp.get("parents", [])), "fanout": fan,
               "min_leaves": min_leaves, "min_parents": min_parents}
print(json.dumps({
  "strategy": strategy,
  "nodes": int(n), "session_nodes": int(session_nodes), "window": int(window), "status": comp["status"], "partial": comp.get("partial"),
  "passes": comp.get("passes"), "covers": comp["covers"]["count"],
  "tokens_before": comp["estimated_tokens_before"], "tokens_after": comp["estimated_tokens_after"],
  "evicted_tokens_plan": ev, "chunk_tokens": chunk,
  "calls": comp["summarizer"]["calls"], "min_calls": min_calls,
  "calls_over_min": round(comp["summarizer"]["calls"] / max(1, min_calls), 3), **out_lcm,
  "wall_s": float(wall), "cpu_s": round(float(usr) + float(sys_), 2), "peak_rss_kb": int(rss),
  "verify_rc": int(vrc), "prompt_cache": cache}))
PY
done
