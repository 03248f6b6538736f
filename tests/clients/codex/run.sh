#!/usr/bin/env bash
# Codex CLI conformance: drives the real `codex exec` (tests/clients/node_modules) against the
# loopback mock (mock/responses.py) for every scenario here (*.json), imports the rollouts it wrote
# into a fresh database, renders `--format responses --body` at the node each checked request was
# built from (checkpoints.py) and compares it with the request Codex really sent (lib.sh
# compare_to). Exit status: report.py's (0 only when every difference is allow-listed).
#
# A scenario file is the mock scenario (mock/server.py) plus:
#   "steps":  [{"prompt": TEXT, "resume": BOOL, "images": [FILE...]}]  run in order; a resume step
#             runs `codex exec resume --last`
#   "files":  {NAME: TEXT}   written into the project directory first ("pic.png" is a generated PNG)
#   "config": [TOML LINE...] added to config.toml's top level
#   "expect": what the run must show (expect.py): item types, calls in one turn, texts, checkpoints
# Usage: CTXFOLD=build/ctxfold bash tests/clients/codex/run.sh [SCENARIO...]
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
source "$HERE/../lib.sh"
need_clients
CODEX="$NODE_BIN/codex"
: > "$RESULTS_DIR/codex.jsonl"

# write_config CODEX_HOME SCENARIO: config.toml for the mock provider (config.sh)
source "$HERE/config.sh"

write_png() { # FILE: a 4x4 RGB PNG
  python3 - "$1" <<'PY'
import struct, sys, zlib
w = h = 4
rows = b"".join(b"\0" + b"".join(bytes([(x * 60) % 256, (y * 60) % 256, 128]) for x in range(w)) for y in range(h))
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) \
    + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY
}

run_scenario() { # SCENARIO.json
  local scen=$1 name dir n steps i prompt resume imgs
  name=$(basename "$scen" .json)
  dir="$WORK/$name"
  mkdir -p "$dir/home" "$dir/codex" "$dir/proj" "$dir/rec"
  start_mock "$scen" "$dir/rec"
  write_config "$dir/codex" "$scen"
  jq -r '.files // {} | keys[]' "$scen" | while read -r f; do
    if [ "$f" = pic.png ]; then write_png "$dir/proj/$f"; else jq -r --arg f "$f" '.files[$f]' "$scen" > "$dir/proj/$f"; fi
  done
  steps=$(jq '.steps | length' "$scen")
  for ((i = 0; i < steps; i++)); do
    prompt=$(jq -r ".steps[$i].prompt" "$scen")
    resume=$(jq -r ".steps[$i].resume // false" "$scen")
    local args=(exec)
    [ "$resume" = true ] && args+=(resume --last)
    args+=(--skip-git-repo-check --json)
    args+=("$prompt")
    # after the prompt: --image takes several values and would swallow it
    while read -r img; do [ -n "$img" ] && args+=(--image "$dir/proj/$img"); done < <(jq -r ".steps[$i].images // [] | .[]" "$scen")
    (cd "$dir/proj" && HOME="$dir/home" CODEX_HOME="$dir/codex" MOCK_API_KEY=sk-mock-not-a-secret \
       timeout 60 "$CODEX" "${args[@]}" < /dev/null > "$dir/step$i.out" 2> "$dir/step$i.err")
    local rc=$?
    [ $rc -eq 0 ] || echo "codex/$name: step $i exited $rc: $(tail -c 400 "$dir/step$i.err")" >&2
  done
  stop_mock
  local db="$dir/ctxfold.db"
  mapfile -t rollouts < <(find "$dir/codex/sessions" -name '*.jsonl' 2>/dev/null | sort)
  if [ ${#rollouts[@]} -eq 0 ]; then echo "codex/$name: no rollout written" >&2; return; fi
  "$CTXFOLD" --db "$db" import "${rollouts[@]}" > "$dir/import.json" 2> "$dir/import.err" \
    || echo "codex/$name: import failed: $(tail -c 400 "$dir/import.err")" >&2
  "$CTXFOLD" --db "$db" log > "$dir/log.jsonl" 2>/dev/null
  n=0
  local names=()
  while read -r cp rec head; do
    n=$((n + 1))
    names+=("$cp")
    "$CTXFOLD" --db "$db" render --format responses --body --head "$head" > "$dir/render-$cp.json" 2> "$dir/render-$cp.err" \
      || { echo "codex/$name: render at $head failed: $(tail -c 400 "$dir/render-$cp.err")" >&2
           echo '{}' > "$dir/render-$cp.json"; }
    compare_to codex "$name" "$cp" "$rec" responses "$dir/render-$cp.json" responses
  done < <(python3 "$HERE/checkpoints.py" "$dir/rec" "$dir/codex/sessions" "$dir/log.jsonl")
  [ $n -gt 0 ] || echo "codex/$name: no main request recorded" >&2
  # What the scenario is for really happened (expect.py); an unmet expectation is a difference.
  python3 "$HERE/expect.py" "$scen" "$dir/rec" "${names[@]}" \
  | jq -c --arg s "$name" '{client:"codex", scenario:$s, checkpoint:"expectations"} + .' >> "$RESULTS_DIR/codex.jsonl"
  if [ -n "${CTXFOLD_CLIENTS_KEEP:-}" ]; then mkdir -p "$CTXFOLD_CLIENTS_KEEP"; cp -r "$dir" "$CTXFOLD_CLIENTS_KEEP/"; fi
}

if [ $# -gt 0 ]; then scenarios=("$@"); else scenarios=("$HERE"/*.json); fi
for s in "${scenarios[@]}"; do
  case $s in /*) ;; *) [ -f "$s" ] || s="$HERE/$s.json" ;; esac
  run_scenario "$s"
done
python3 "$CLIENTS_DIR/report.py" --client codex
