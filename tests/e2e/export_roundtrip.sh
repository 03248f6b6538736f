#!/usr/bin/env bash
# export → import round-trips every real transcript: the ctxfold JSONL export of every session,
# imported into a fresh database, gives the same ids, HEADs, summaries and byte-identical renders
# (rolling and raw, openai format); the openai and anthropic exports, imported as those formats,
# give the same messages again. Plus the export contract: summary record, read-only, bad input.
# On a server (tests/e2e/server/run.sh) the transcripts are transcripts_for_run's subset (lib.sh).
source "$(dirname "$0")/lib.sh"
need_transcripts
cd "$WORK"
files=$(find "$CTXFOLD_TRANSCRIPTS" -type f \( -name '*.jsonl' -o -name '*.json' \) ! -path '*/subagents/*' | sort | transcripts_for_run)
[ -n "$files" ] || fail "no transcripts found"
n=0
while IFS= read -r f; do
  n=$((n+1)); d="t$n"; mkdir -p "$d"
  "$CTXFOLD" --db "$d/a.db" import "$f" >/dev/null 2>"$d/import.err" || { fail "import $f: $(head -c 300 "$d/import.err")"; continue; }
  before=$(sha256sum "$d/a.db" | cut -c1-64)
  "$CTXFOLD" --db "$d/a.db" export --all-sessions > "$d/x.jsonl" || { fail "export $f"; continue; }
  expect_eq "$f: export is read-only" "$before" "$(sha256sum "$d/a.db" | cut -c1-64)"
  last=$(tail -n1 "$d/x.jsonl")
  expect_eq "$f: closing summary record" "ctxfold.export/1" "$(jq -r .schema <<<"$last")"
  expect_eq "$f: summary counts the node records" "$(grep -c '"schema":"ctxfold.node/1"' "$d/x.jsonl")" "$(jq .nodes <<<"$last")"
  "$CTXFOLD" --db "$d/b.db" import --format ctxfold "$d/x.jsonl" >"$d/reimport.json" 2>"$d/reimport.err" \
    || { fail "$f: re-import: $(head -c 300 "$d/reimport.err")"; continue; }
  [ ! -s "$d/reimport.err" ] && ok || fail "$f: re-import warned: $(head -c 300 "$d/reimport.err")"
  expect_eq "$f: same sessions" "$("$CTXFOLD" --db "$d/a.db" sessions | jq -cs '[.[] | select(.type=="session") | [.id,.kind,.parent_session,.head]]')" \
    "$("$CTXFOLD" --db "$d/b.db" sessions | jq -cs '[.[] | select(.type=="session") | [.id,.kind,.parent_session,.head]]')"
  ss=$("$CTXFOLD" --db "$d/a.db" sessions | jq -r 'select(.type=="session" and .head != null) | .id')
  [ -n "$ss" ] && ok || fail "$f: no session with a HEAD to compare"
  for s in $ss; do
    for strat in rolling raw; do
      ra=$("$CTXFOLD" --db "$d/a.db" --session "$s" render --strategy $strat --format openai)
      rb=$("$CTXFOLD" --db "$d/b.db" --session "$s" render --strategy $strat --format openai)
      [ -n "$ra" ] && [ "$ra" == "$rb" ] && ok || fail "$f: session $s: $strat render differs after the ctxfold round trip"
    done
    expect_eq "$f: $s: same stored summaries" "$("$CTXFOLD" --db "$d/a.db" --session "$s" list | jq -c '[.items[].id]')" \
      "$("$CTXFOLD" --db "$d/b.db" --session "$s" list | jq -c '[.items[].id]')"
    for fmt in openai anthropic; do
      "$CTXFOLD" --db "$d/a.db" --session "$s" export --format $fmt > "$d/m.$fmt.json" || { fail "$f: export --format $fmt"; continue; }
      db_rm "$d/c.db"
      "$CTXFOLD" --db "$d/c.db" import --format $fmt "$d/m.$fmt.json" >/dev/null 2>"$d/c.err" || { fail "$f: $s: import $fmt export: $(head -c 300 "$d/c.err")"; continue; }
      again=$("$CTXFOLD" --db "$d/c.db" export --format $fmt | jq -c .messages)
      expect_eq "$f: $s: $fmt export → import → export keeps the messages" "$(jq -c .messages "$d/m.$fmt.json")" "$again"
    done
  done
done <<<"$files"
min=10; on_server && min=5
[ "$n" -ge $min ] && ok || fail "only $n transcripts"

# the summary of a real compaction survives with its coverage
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
if [ -f "$f" ]; then
  "$CTXFOLD" --db ac.db import "$f" >/dev/null && "$CTXFOLD" --db ac.db export > ac.jsonl
  views=$(jq -s '[.[] | select(.schema=="ctxfold.node/1" and (.covers_ids|length) > 0)] | length' ac.jsonl)
  [ "$views" -ge 1 ] && ok || fail "the imported compaction is not exported as a view node with covers_ids"
fi
# bad input
expect_rc "unknown format: usage" 2 "$CTXFOLD" --db ac.db export --format yaml
expect_rc "--all-sessions with messages: usage" 2 "$CTXFOLD" --db ac.db export --format openai --all-sessions
expect_rc "unknown session: bad input" 3 "$CTXFOLD" --db ac.db --session nosuch export
expect_rc "no database: environment, as every command" 4 "$CTXFOLD" --db nosuch.db export
[ ! -e nosuch.db ] && ok || fail "export created a database"
finish
