#!/usr/bin/env bash
# The real auto-compaction session renders from its imported summary onward: the summary is the
# first non-system section, the pre-boundary history is not rendered raw, HEAD's spine is whole.
source "$(dirname "$0")/lib.sh"
need_transcripts
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
db="$WORK/a.db"
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$f"
expect_rc "render" 0 "$CTXFOLD" --db "$db" --session fa812bfe-b295-4cca-9c2f-fdf01028cb46 render --format anthropic
cp "$WORK/out" "$WORK/r.json"
# The isCompactSummary line of the source (line 1585) is the summary view node.
summary_id=$(sed -n 1585p "$f" | jq -r .uuid)
expect_eq "summary section holds the imported summary" "$summary_id" "$(jq -r '[.sections[] | select(.kind=="summary")][0].ids[0]' "$WORK/r.json")"
expect_eq "summary comes before the tail" "summary" "$(jq -r '[.sections[] | select(.kind!="system")][0].kind' "$WORK/r.json")"
first_user=$(jq -r '[.messages[] | select(.role=="user")][0].content | if type=="string" then . else (map(select(.type=="text") | .text) | join("")) end' "$WORK/r.json")
case "$first_user" in
  *"This session is being continued from a previous conversation"*) ok ;;
  *) fail "first user message is not the compact summary: ${first_user:0:120}" ;;
esac
# A pre-boundary user prompt (line 3's uuid) must not be read.
early=$(sed -n 3p "$f" | jq -r .uuid)
expect_eq "pre-boundary node not in reads" "false" "$(jq --arg e "$early" '.reads | index($e) != null' "$WORK/r.json")"
expect_rc "verify" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
finish
