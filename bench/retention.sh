#!/usr/bin/env bash
# Summary quality benchmark (issue 10, issue 26 item 2): the real sessions with a compaction carry
# the summary their agent wrote (two Claude Code sessions, one Codex rollout). For the history each
# summary covers: identifier recall (files, commands, errors, ids) and precision, request and
# outcome coverage, the last plan and the next step, and the bytes against that anchor summary,
# for the anchor and for ctxfold's extractive summarizer given no more bytes than the anchor
# (bench/retention.cpp has the exact rules). Exit 1 when ctxfold misses the target on a Claude
# Code session.
#
# usage: bench/retention.sh [BUILD_DIR]   (default: build; needs ctxfold and bench/ctxfold-retention)
#   RETENTION_DUMP=DIR        writes each covered transcript and both summaries there
#   RETENTION_ALSO=LABEL=DIR  scores DIR/<session>.ours (another build's dump) in the same table
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
T=${CTXFOLD_TRANSCRIPTS:-$here/../../shared/data/transcripts}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
db=$work/r.db
codex=REDACTED_TEXT_compacted_rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9
for f in "$T"/claude-code/compaction_manual_v2.1.39_TRUNCATED/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl \
         "$T"/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl \
         "$T/codex/$codex.jsonl"; do
  "$build/ctxfold" --db "$db" import "$f" >/dev/null
done
"$build/bench/ctxfold-retention" "$db" ae4a77f8-aedd-4bc1-888f-c94edc91af04 fa812bfe-b295-4cca-9c2f-fdf01028cb46 \
  019c8a59-e9dd-71f0-9ae3-4079fe9726a9
