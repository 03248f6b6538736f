#!/usr/bin/env bash
# A source that is not a regular file is read exactly once: `import <(cat f)` (a pipe), a named
# FIFO with its writer in the background, /dev/stdin and `-` each store the same nodes as the
# regular file (ids, kinds, roles, content and links; a FIFO named like the file also the same
# sessions and metadata). Before, the pipe was read once to detect the format and reopened
# empty (exit 0, an empty session), and the FIFO hung. A FIFO inside a folder walked by --from
# is named as ignored, never opened.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
# A small Claude Code session of our own, and the real samples when they are here.
printf '%s\n' \
  '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","message":{"role":"user","content":"hi"}}' \
  '{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s1","message":{"role":"assistant","content":[{"type":"text","text":"hello"}]}}' \
  '{"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s1","message":{"role":"user","content":"bye"}}' > s1.jsonl
sources=("$WORK/s1.jsonl")
if [ -n "$CTXFOLD_TRANSCRIPTS" ] && [ -d "$CTXFOLD_TRANSCRIPTS" ]; then
  sources+=("$CTXFOLD_TRANSCRIPTS/claude-code/v2.1.38_tool_heavy_websearch_queue.jsonl"
            "$CTXFOLD_TRANSCRIPTS/codex/REDACTED_TEXT_compacted_rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
            "$CTXFOLD_TRANSCRIPTS/gemini/session-2025-12-30T07-24-a1c91f1a.json")
fi
# What a database holds of its nodes, without the session and metadata (which name the source).
nodes_of() {
  db_sql "$1" "select id, kind, role, content, coalesce(predecessor,'') from nodes order by seq" | sha256sum | cut -c1-16
}
count_of() { db_sql "$1" 'select count(*) from nodes'; }
everything_of() {
  db_sql "$1" "select id, session, kind, role, content, metadata, coalesce(predecessor,'') from nodes order by seq" |
    sha256sum | cut -c1-16
}
n=0
for src in "${sources[@]}"; do
  n=$((n + 1))
  name=$(basename "$src")
  expect_rc "$name: regular file" 0 "$CTXFOLD" --db "reg$n.db" import "$src"
  want=$(nodes_of "reg$n.db")
  count=$(count_of "reg$n.db")
  [ "$count" -gt 0 ] && ok || fail "$name: the regular file stored no nodes"

  expect_rc "$name: <(cat file)" 0 "$CTXFOLD" --db "pipe$n.db" import <(cat "$src")
  expect_eq "$name: <(cat file) stores the same nodes ($count)" "$count $want" "$(count_of "pipe$n.db") $(nodes_of "pipe$n.db")"
  expect_eq "$name: <(cat file) stores no empty session" "0" \
    "$(db_sql "pipe$n.db" 'select count(*) from sessions s where not exists (select 1 from nodes n where n.session=s.id) and not exists (select 1 from source_records r where r.session=s.id)')"

  mkdir -p "fifo$n" && mkfifo "fifo$n/$name"
  (cat "$src" > "fifo$n/$name") &
  writer=$!
  expect_rc "$name: a named FIFO" 0 "$CTXFOLD" --db "fifo$n.db" import "fifo$n/$name"
  kill "$writer" 2>/dev/null; wait "$writer" 2>/dev/null  # a writer still waiting for a reader: the import never opened it
  expect_eq "$name: the FIFO stores the same sessions, nodes and metadata" "$(everything_of "reg$n.db")" \
    "$(everything_of "fifo$n.db")"

  expect_rc "$name: /dev/stdin" 0 "$CTXFOLD" --db "stdin$n.db" import /dev/stdin < "$src"
  expect_eq "$name: /dev/stdin stores the same nodes" "$count $want" "$(count_of "stdin$n.db") $(nodes_of "stdin$n.db")"
  expect_rc "$name: -" 0 "$CTXFOLD" --db "dash$n.db" import - < "$src"
  expect_eq "$name: - and /dev/stdin name the same sessions" "$(everything_of "dash$n.db")" "$(everything_of "stdin$n.db")"
  # The same bytes piped again add nothing (the spool is named after its content).
  expect_rc "$name: <(cat file) again" 0 "$CTXFOLD" --db "pipe$n.db" import <(cat "$src")
  expect_eq "$name: a second pipe adds nothing" "0" "$(jq '[.sessions[].nodes_added] | add' "$WORK/out")"
done

# An empty pipe is an empty input (exit 3), not an empty session.
expect_rc "an empty pipe" 3 "$CTXFOLD" --db empty.db import <(true)
grep -q "empty" "$WORK/err" && ok || fail "empty pipe: $(cat "$WORK/err")"

# A FIFO in a folder walked by --from is not opened (no writer: opening it would wait forever);
# it is listed as ignored with the reason. The regular file beside it is imported.
mkdir -p home/proj && cp s1.jsonl home/proj/ && mkfifo home/proj/live.jsonl
expect_rc "--from all over a folder holding a FIFO" 0 "$CTXFOLD" --db home.db import --from all home
expect_eq "the FIFO is ignored with its reason" "ignored true" \
  "$(jq -r '.files[] | select(.path | endswith("live.jsonl")) | "\(.outcome) \(.reason | test("not a regular file"))"' "$WORK/out")"
expect_eq "the regular file is imported" "new" \
  "$(jq -r '.files[] | select(.path | endswith("s1.jsonl")) | .outcome' "$WORK/out")"
finish
