#!/usr/bin/env bash
# Compaction at scale against import (issue 22 item 3): for each size, one generated Claude Code
# history (ctxfold-gen, replaying the shipped transcripts; --synthetic for built-in templates) is
# imported once, timed, then compacted with the offline extractive summarizer by rolling, lcm and
# snapcompact, each on its own copy of the imported database, in the same run:
#   compact --strategy S --window W --force        (W: --window, default 20000)
# Per strategy: exit status, status, partial, summarizer calls against the --dry-run plan's
# (plan.summarizer: calls and input tokens stated before any is spent), wall and CPU seconds and
# peak RSS, verify-invariants' exit, and the ratios compact/import (wall and CPU). Target: exit 0,
# not partial, verify clean, compact <= 2x import.
#
# usage: bench/compact_scale.sh [--sizes "1e5 1e6"] [--window W] [--strategies "rolling lcm snapcompact"]
#                               [--synthetic 1] [--build DIR] [--work DIR] [--keep]
#   CTXFOLD_BIN / CTXFOLD_GEN_BIN: measure prebuilt binaries. One JSON object per size and
#   strategy on stdout; a table on stderr.
set -euo pipefail
sizes="1e5"
window=20000
strategies="rolling lcm snapcompact"
synthetic=0
runs=1
bench_opt() {
  case "$1" in
    --sizes) sizes=$2 ;;
    --window) window=$2 ;;
    --strategies) strategies=$2 ;;
    --synthetic) synthetic=$2 ;;
    *) return 1 ;;
  esac
}
source "$(dirname "$0")/lib.sh"
bench_init bench/compact_scale.sh "$@"
bench_need time jq
bench_build ctxfold ctxfold-gen
bench_workdir

# timed OUT CMD...: runs CMD with stdout to OUT; sets wall, cpu, rss_kb, rc.
timed() {
  local out=$1; shift
  set +e
  /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$@" > "$out" 2> "$work/stderr.txt"
  rc=$?
  set -e
  read -r wall usr sys rss_kb < <(tail -n 1 "$work/time.txt")
  cpu=$(python3 -c "print(round($usr + $sys, 2))")
}

for s in $sizes; do
  n=$(python3 -c "import sys; print(int(float(sys.argv[1])))" "$s")
  gen_flags=(--nodes "$n" --seed 1 -q)
  [ "$synthetic" = 1 ] && gen_flags+=(--synthetic)
  "$GEN" "${gen_flags[@]}" -o "$work/h$n.jsonl"
  raw=$work/h$n.db
  rm -f "$raw"*
  timed "$work/import.json" "$BIN" --db "$raw" import "$work/h$n.jsonl"
  [ "$rc" = 0 ] || { echo "import failed: $(cat "$work/stderr.txt")" >&2; exit 4; }
  import_wall=$wall; import_cpu=$cpu; import_rss=$rss_kb
  session=$(jq -r '.sessions[0].session' "$work/import.json")
  nodes=$("$BIN" --db "$raw" sessions | jq -r --arg s "$session" 'select(.id == $s) | .node_count')
  rm -f "$work/h$n.jsonl"
  for strategy in $strategies; do
    db=$work/$strategy$n.db
    cp "$raw" "$db"
    flags=(--strategy "$strategy" --window "$window" --force)
    "$BIN" --db "$db" --session "$session" compact "${flags[@]}" --dry-run > "$work/plan.json"
    timed "$work/compact.json" "$BIN" --db "$db" --session "$session" compact "${flags[@]}"
    compact_rc=$rc
    verify_rc=0
    "$BIN" --db "$db" verify-invariants > /dev/null 2>&1 || verify_rc=$?
    jq -c -n --slurpfile p "$work/plan.json" --slurpfile c "$work/compact.json" \
      --arg n "$n" --arg nodes "$nodes" --arg strategy "$strategy" --arg window "$window" \
      --arg iw "$import_wall" --arg ic "$import_cpu" --arg ir "$import_rss" \
      --arg cw "$wall" --arg cc "$cpu" --arg cr "$rss_kb" --arg rc "$compact_rc" --arg vrc "$verify_rc" '
      ($p[0]) as $p | ($c[0]) as $c |
      {generated_lines: ($n|tonumber), session_nodes: ($nodes|tonumber), strategy: $strategy,
       window: ($window|tonumber), exit: ($rc|tonumber), status: $c.status, partial: $c.partial,
       remaining: $c.remaining, reason: $c.reason,
       evicted_tokens: ($p.plan.evicted_tokens // $p.details.evicted_tokens // null),
       planned_calls: ($p.plan.summarizer.calls // 0), planned_input_tokens: ($p.plan.summarizer.input_tokens // 0),
       planned_depth: ($p.plan.summarizer.depth // 0), calls: $c.summarizer.calls,
       tokens_before: $c.tokens_before.value, tokens_before_kind: $c.tokens_before.kind,
       tokens_after: $c.tokens_after.value,
       import_wall_s: ($iw|tonumber), import_cpu_s: ($ic|tonumber), import_rss_mb: (($ir|tonumber)/1024|floor),
       compact_wall_s: ($cw|tonumber), compact_cpu_s: ($cc|tonumber), compact_rss_mb: (($cr|tonumber)/1024|floor),
       ratio_wall: ((($cw|tonumber) / ($iw|tonumber)) * 100 | round / 100),
       ratio_cpu: ((($cc|tonumber) / ($ic|tonumber)) * 100 | round / 100),
       verify_exit: ($vrc|tonumber)}' | tee "$work/row.json"
    jq -r '"\(.session_nodes) nodes \(.strategy): exit \(.exit) \(.status) partial=\(.partial) calls \(.calls)/\(.planned_calls) planned, compact \(.compact_wall_s) s wall \(.compact_cpu_s) s CPU vs import \(.import_wall_s) s / \(.import_cpu_s) s: ratio \(.ratio_wall) wall, \(.ratio_cpu) CPU; verify exit \(.verify_exit)"' "$work/row.json" >&2
    rm -f "$db"*
  done
  rm -f "$raw"*
done
