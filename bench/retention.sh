#!/usr/bin/env bash
# Retention benchmark (issue 10): the two real Claude Code sessions with compactions carry the
# summary Claude Code itself wrote. For the history each summary covers, the share of file names
# and Bash commands the real summary keeps, side by side with ctxfold's extractive summarizer
# given no more bytes than the real summary (bench/retention.cpp has the exact rules).
# Target: ctxfold keeps >= 80% of file names and >= 50% of commands. Exit 1 when missed.
#
# usage: bench/retention.sh [BUILD_DIR]   (default: build; needs ctxfold and bench/ctxfold-retention)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
T=${CTXFOLD_TRANSCRIPTS:-$here/../../shared/data/transcripts}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
db=$work/r.db
for f in "$T"/claude-code/compaction_manual_v2.1.39_TRUNCATED/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl \
         "$T"/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl; do
  "$build/ctxfold" --db "$db" import "$f" >/dev/null
done
"$build/bench/ctxfold-retention" "$db" ae4a77f8-aedd-4bc1-888f-c94edc91af04 fa812bfe-b295-4cca-9c2f-fdf01028cb46
