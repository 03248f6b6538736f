#!/usr/bin/env bash
# ctxfold sync killed after every one of its batches in turn (docs/backends.md "sync", "Batches,
# kills and resumption"): each run commits one batch more and is SIGKILLed; after every kill the
# destination must verify clean, and the last run completes with every node once. The source holds
# the two kinds of source transaction that write rows past a HEAD move or event of their own
# boundary: an lcm compaction (summary nodes, compact/summary events and compact/end in one
# transaction) and a fork made just after an import (the fork's session is created at the
# boundary of the import's HEAD move, in the transaction that writes its nodes and HEAD move).
# A rerun that copies nothing still packs the text grep reads when the packs lag. SQLite on both
# sides: the batches are the same code on a server.
source "$(dirname "$0")/lib.sh"
need_transcripts

src="$WORK/src.db"
dst="$WORK/dst.db"
codex=$(ls "$CTXFOLD_TRANSCRIPTS"/codex/*.jsonl 2>/dev/null | head -1)
gemini="$CTXFOLD_TRANSCRIPTS/gemini/session-2025-12-13T19-01-049d9bb6.json"
[ -f "$codex" ] && [ -f "$gemini" ] || { fail "missing transcripts"; finish; }
"$CTXFOLD" --db "$src" import "$codex" >/dev/null 2>&1 || fail "import codex"
cx=$(sqlite3 "$src" "SELECT id FROM sessions LIMIT 1")
"$CTXFOLD" --db "$src" --session "$cx" compact --strategy lcm --window 30000 --force >/dev/null || fail "compact lcm"
expect_eq "the lcm compaction wrote several summaries in its one transaction" 1 \
  "$(sqlite3 "$src" "SELECT count(*) > 1 FROM events WHERE type='compact/summary'")"
"$CTXFOLD" --db "$src" import "$gemini" >/dev/null 2>&1 || fail "import gemini"
gm=session-2025-12-13T19-01-049d9bb6
at=$(sqlite3 "$src" "SELECT id FROM nodes WHERE session='$gm' ORDER BY seq LIMIT 1 OFFSET 5")
"$CTXFOLD" --db "$src" --session "$gm" fork --at "$at" --name kw-fork >/dev/null || fail "fork"
expect_eq "the fork is created at the boundary of the import's HEAD move" 1 \
  "$(sqlite3 "$src" "SELECT created_seq = (SELECT boundary_seq FROM head_moves WHERE session='$gm') FROM sessions WHERE id='kw-fork'")"
# Appended nodes: a HEAD move each, so the walk also stops between them.
for i in $(seq 20); do
  printf '{"role":"%s","content":[{"type":"text","text":"walk %s"}],"id":"kw-%s"}\n' \
    "$([ $((i % 2)) = 1 ] && echo user || echo assistant)" "$i" "$i"
done | "$CTXFOLD" --db "$src" --session kw-fork append >/dev/null || fail "append"
nodes=$(sqlite3 "$src" "SELECT count(*) FROM nodes")

runs=0
while :; do
  (CTXFOLD_TEST_CRASH_AT=sync_after_batch exec "$CTXFOLD" --db "$src" sync --to "$dst" --batch 1 >/dev/null 2>"$WORK/err")
  rc=$?
  runs=$((runs + 1))
  "$CTXFOLD" --db "$dst" verify-invariants --all-sessions >"$WORK/v" 2>&1
  vr=$?
  msg=$(jq -c '[.checks[]? | select(.ok == false) | .violations[0].message] | .[0] // empty' "$WORK/v")
  expect_eq "run $runs (exit $rc, $(sqlite3 "$dst" "SELECT count(*) FROM nodes") nodes): verify-invariants" \
    "0" "$vr${msg:+ $msg}"
  [ "$rc" = 137 ] || break
  [ "$runs" -lt 400 ] || { fail "more than 400 runs"; break; }
done
expect_eq "the last run completes" 0 "$rc"
if [ "$runs" -gt 20 ]; then ok; else fail "only $runs batches: the walk tests little"; fi
expect_eq "every node once" "$nodes $nodes" "$(sqlite3 "$dst" "SELECT count(*) || ' ' || count(DISTINCT id) FROM nodes")"
for s in "$cx" "$gm" kw-fork; do
  expect_eq "render $s" "$("$CTXFOLD" --db "$src" --session "$s" render | sha256sum)" \
    "$("$CTXFOLD" --db "$dst" --session "$s" render | sha256sum)"
done

# Killed between its last commit and the packing of grep's text: the rerun copies nothing and
# still brings the packs up to date (the state a kill leaves is made by clearing the packs).
sqlite3 "$dst" "DELETE FROM text_pack; UPDATE text_pack_state SET through_seq=0" || fail "clear the packs"
"$CTXFOLD" --db "$src" sync --to "$dst" >"$WORK/again" || fail "sync again"
expect_eq "the rerun copies nothing" 0 "$(jq -r .nodes "$WORK/again")"
expect_eq "the rerun packs grep's text" "$(sqlite3 "$dst" "SELECT max(seq) FROM nodes")" \
  "$("$CTXFOLD" --db "$dst" grep --all-sessions curry | tail -1 | jq -r .packed_through)"
finish
