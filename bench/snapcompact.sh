#!/usr/bin/env bash
# Issue 7 benchmarks, in one run, reported as ratios:
#  - frames per second drawing and PNG-encoding a 1 MB archive (ctxfold-snapbench), and PNG bytes
#    per frame against the estimate of about 50 KB a frame the inline-data budget assumes;
#  - the frames of one render (archive_frames, 80 frames) read from the cache against drawn and
#    encoded (target: cached >= 10x faster), and the whole `render --strategy snapcompact` command
#    with every frame cached (what compact leaves) against the same command after the cache is
#    emptied, with a rolling text render of the same session as the floor of any render.
# The archive is real: a synthetic session (ctxfold-gen) compacted with --strategy snapcompact, its
# archive text cut to 1 MB at a line break for the throughput run.
# Usage: bench/snapcompact.sh [--nodes 6000] [--runs 3] [--build DIR] [--work DIR] [--keep]
# Needs sqlite3, jq, python3. Prints one JSON object (schema ctxfold.bench-snapcompact/1), also
# written to bench/out/snapcompact.json.
set -euo pipefail
nodes=6000; runs=3
bench_opt() { case "$1" in --nodes) nodes=$2 ;; *) return 1 ;; esac; }
. "$(dirname "$0")/lib.sh"
bench_init bench/snapcompact.sh "$@"
bench_build ctxfold ctxfold-gen ctxfold-snapbench
SNAP=${CTXFOLD_SNAPBENCH_BIN:-$build/bench/ctxfold-snapbench}
bench_workdir

"$GEN" --synthetic -n "$nodes" -q -o "$work/s.jsonl"
"$BIN" --db "$work/a.db" import "$work/s.jsonl" >/dev/null
s=$("$BIN" --db "$work/a.db" sessions | jq -r .id | head -n 1)
# A large window with a 1% tail: nearly everything is archived and the frame budget is the hard
# cap of 80 frames (provider "claude" has no inline-data cap).
"$BIN" --db "$work/a.db" --session "$s" compact --strategy snapcompact --window 2000000 --tail-percent 1 --force \
  --model claude --max-frames 80 >"$work/c.json"
arc=$(jq -r .summary_id "$work/c.json")
"$BIN" --db "$work/a.db" show "$arc" | jq -j '.node.content[0].text' >"$work/archive.txt"
python3 - "$work/archive.txt" "$work/1mb.txt" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
while len(data) < 1 << 20: data += b"\n\n" + data
cut = data.rfind(b"\n", 0, 1 << 20)
open(sys.argv[2], "wb").write(data[:cut + 1])
PY
frames_json=$("$SNAP" "$work/1mb.txt" --runs "$runs" --model claude --db "$work/a.db" --archive "$arc" --max-frames 80)

render() { "$BIN" --db "$1" --session "$s" render --strategy snapcompact --model claude --format anthropic; }
cp "$work/a.db" "$work/uncached.db"
sqlite3 "$work/uncached.db" "DELETE FROM snapcompact_frames"
kept=$(render "$work/a.db" | jq '.frames.kept')
cached_all=$(render "$work/a.db" | jq '[.frames.frames[].cached] | all')
uncached_none=$(render "$work/uncached.db" | jq '[.frames.frames[].cached] | any | not')
t_cached=$(best_of render "$work/a.db")
t_uncached=$(best_of render "$work/uncached.db")
raw=$(best_of "$BIN" --db "$work/a.db" --session "$s" render --strategy rolling --format anthropic)

out=$(jq -n --argjson f "$frames_json" --argjson c "$(jq '{archive_bytes, frames: .frames | {total, kept, geometry}}' "$work/c.json")" \
  --arg tc "$t_cached" --arg tu "$t_uncached" --arg tr "$raw" --arg kept "$kept" \
  --argjson ca "$cached_all" --argjson un "$uncached_none" --arg nodes "$nodes" '
  {schema: "ctxfold.bench-snapcompact/1", nodes: ($nodes | tonumber), compaction: $c,
   throughput_1mb: $f,
   render: {frames: ($kept | tonumber), cached_seconds: ($tc | tonumber), uncached_seconds: ($tu | tonumber),
            rolling_text_seconds: ($tr | tonumber), all_cached: $ca, none_cached: $un,
            uncached_over_cached: (($tu | tonumber) / ($tc | tonumber)),
            target_cached_10x: ((($tu | tonumber) / ($tc | tonumber)) >= 10)}}')
mkdir -p "$here/out"
echo "$out" | tee "$here/out/snapcompact.json"
