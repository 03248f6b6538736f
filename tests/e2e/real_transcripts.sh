#!/usr/bin/env bash
# Every real transcript imports with exit 0, renders in openai and anthropic form with no orphan
# tool call or result, verifies clean, re-imports adding nothing, and read commands leave the
# database's bytes unchanged. On a server (tests/e2e/server/run.sh) the transcripts are
# transcripts_for_run's subset (lib.sh).
source "$(dirname "$0")/lib.sh"
need_transcripts
while IFS= read -r f; do
  name=$(basename "$f")
  db="$WORK/$name.db"
  expect_rc "import $name" 0 "$CTXFOLD" --db "$db" import "$f"
  added=$(jq '[.sessions[].nodes_added] | add // 0' "$WORK/out")
  [ "$added" -gt 0 ] && ok || fail "import $name added no node"
  expect_rc "render openai $name" 0 "$CTXFOLD" --db "$db" render --format openai
  cp "$WORK/out" "$WORK/openai.json"
  expect_eq "openai orphans in $name" 0 "$(openai_orphans "$WORK/openai.json")"
  expect_rc "render anthropic $name" 0 "$CTXFOLD" --db "$db" render --format anthropic
  cp "$WORK/out" "$WORK/anthropic.json"
  expect_eq "anthropic orphans in $name" 0 "$(anthropic_orphans "$WORK/anthropic.json")"
  expect_eq "anthropic request starts with a user turn in $name" "user" "$(jq -r '.messages[0].role // "user"' "$WORK/anthropic.json")"
  # Anthropic messages alternate roles.
  expect_eq "anthropic alternation in $name" 0 \
    "$(jq '[.messages | . as $m | range(1; length) | select($m[.].role == $m[.-1].role)] | length' "$WORK/anthropic.json")"
  before=$(sha256sum "$db" | cut -d' ' -f1)
  expect_rc "verify $name" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
  expect_rc "render text $name" 0 "$CTXFOLD" --db "$db" --text render
  expect_rc "sessions $name" 0 "$CTXFOLD" --db "$db" sessions
  expect_rc "log $name" 0 "$CTXFOLD" --db "$db" log
  expect_eq "read commands leave $name's bytes unchanged" "$before" "$(sha256sum "$db" | cut -d' ' -f1)"
  expect_rc "re-import $name" 0 "$CTXFOLD" --db "$db" import "$f"
  expect_eq "re-import of $name adds nothing" 0 "$(jq '[.sessions[].nodes_added] | add // 0' "$WORK/out")"
  expect_rc "verify after re-import of $name" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
done < <(find "$CTXFOLD_TRANSCRIPTS" -maxdepth 3 \( -name '*.jsonl' -o -name '*.json' \) -not -path '*/subagents/*' | sort | transcripts_for_run)
finish
