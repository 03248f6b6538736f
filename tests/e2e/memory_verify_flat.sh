#!/usr/bin/env bash
# verify-invariants of a compacted session holds the same memory whatever the history's length
# (docs/invariants.md "Memory", bench/README.md "Memory", fifth pass): two generated Claude Code
# sessions (ctxfold-gen --synthetic --compact-tail 50) of 2x10^4 and 5x10^4 nodes, each one summary
# covering all but its last ~50 nodes, verify ok with peak RSS (getrusage ru_maxrss of the child)
# within 12 MB of each other and under 64 MB. The database-wide checks read every page of the file
# (I11's integrity_check); read through a memory map, every page touched counted in RSS and the
# peak followed the file (main before: 47 and 96 MB for 33 and 81 MB files); read ahead into
# SQLite's bounded page cache, it stays put (32 and 35 MB).
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is required"
command -v jq >/dev/null || skip "jq is required"
gen=${CTXFOLD_GEN:-}
[ -n "$gen" ] && [ -x "$gen" ] || skip "no ctxfold-gen binary (CTXFOLD_GEN='$gen'): build the ctxfold-gen target"

declare -A peak
for n in 20000 50000; do
  "$gen" --synthetic --nodes "$n" --compact-tail 50 --seed 1 -q -o "$WORK/h$n.jsonl"
  expect_rc "import $n" 0 "$CTXFOLD" --db "$WORK/h$n.db" import "$WORK/h$n.jsonl"
  rm -f "$WORK/h$n.jsonl"
  on_server || echo "$n nodes: database file $(($(stat -c %s "$WORK/h$n.db") / 1000000)) MB" >&2
  read -r kb rc < <(peak_kb "$CTXFOLD" --db "$WORK/h$n.db" verify-invariants)
  expect_eq "verify-invariants exit ($n nodes)" 0 "$rc"
  expect_eq "verified ok ($n nodes)" true "$(jq -r .ok "$WORK/peak.out")"
  echo "$n nodes: verify-invariants peak RSS $((kb / 1024)) MB" >&2
  peak[$n]=$kb
  db_rm "$WORK/h$n.db"
done
growth=$((peak[50000] - peak[20000]))
if [ "$growth" -le $((12 * 1024)) ]; then ok; else
  fail "verify-invariants peak RSS grows with history: $((peak[20000] / 1024)) MB at 2x10^4 nodes, $((peak[50000] / 1024)) MB at 5x10^4"
fi
if [ "${peak[50000]}" -le $((64 * 1024)) ]; then ok; else fail "verify-invariants: peak RSS $((peak[50000] / 1024)) MB at 5x10^4 nodes, bound 64 MB"; fi
finish
