#!/usr/bin/env bash
# Sets everything up and runs ctxfold's main job on a real transcript: import it into a session
# database, verify the invariants and render what the model read.
#   transcript: $1, else the shared real sample, else your newest Claude Code session,
#   else a session written by ctxfold's generator.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh ctxfold >/dev/null   # only the binary; the test command builds the rest
bin=build/ctxfold
src="${1:-}"
sample=../shared/data/transcripts/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl
if [ -z "$src" ] && [ -f "$sample" ]; then src=$sample; fi
if [ -z "$src" ]; then
  root="${CLAUDE_CONFIG_DIR:-$HOME/.claude}/projects"
  [ -d "$root" ] && src=$(find "$root" -maxdepth 2 -name '*.jsonl' -printf '%T@ %p\n' 2>/dev/null | sort -nr | head -1 | cut -d' ' -f2-)
fi
if [ -z "$src" ]; then
  src=$(mktemp --suffix=.jsonl)
  bash scripts/build.sh ctxfold-gen >/dev/null
  build/bench/ctxfold-gen --synthetic --nodes 400 > "$src"
fi
db=demo.db
rm -f "$db" "$db-wal" "$db-shm"
echo "== import $src" >&2
$bin --db "$db" import "$src" | jq -c '{sessions: [.sessions[] | {session, format, nodes_added, head}], warnings: (.warnings | length)}'
echo "== verify-invariants --all-sessions" >&2
$bin --db "$db" verify-invariants --all-sessions | jq -c '{ok, checks: [.checks[] | {id, ok}]}'
echo "== render --format anthropic (sections; the request body is under .messages)" >&2
$bin --db "$db" render --format anthropic | jq -c '{session, head, estimated_tokens, sections: [.sections[] | {kind, nodes: (.ids | length), estimated_tokens}], messages: (.messages | length)}'
echo "== render --text (last 25 lines)" >&2
$bin --db "$db" --text render | tail -n 25
