#!/usr/bin/env bash
# The HEAD-moving write commands and the forensics commands on the PostgreSQL backend
# (docs/backends.md "What works"): checkout, rewind, fork, append and snapshot give the same output
# and leave the same renders on a SQLite file and on a throwaway server; sessions, log, show,
# tokens, usage, compactions, files and commands read the same, byte for byte; appends racing on
# one session chain one after the other (the HEAD single-writer rule) and verify clean; compact
# with the extractive summarizer (rolling, lcm, snapcompact) folds the same nodes on both.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pg_lib.sh"
need_transcripts
start_pg

files=("$CC_COMPACTED" "$CC_RESUMED")
lite="$WORK/lite.db"

: >"$WORK/stdin"
for f in "${files[@]}"; do
  [ -f "$f" ] || { fail "missing transcript $f"; continue; }
  same "import $(basename "$f")" import "$f"
done
big=fa812bfe-b295-4cca-9c2f-fdf01028cb46
small=47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c

# Forensics, read-only.
for args in "sessions" "sessions --agent claude-code" "usage" "usage --by model" "usage --by day"; do
  # shellcheck disable=SC2086
  same "$args" $args
done
for s in "$big" "$small"; do
  for args in "log" "tokens" "usage" "compactions" "files" "commands" "snapshot"; do
    # shellcheck disable=SC2086
    same "$args $s" --session "$s" $args
  done
done
for id in $(sqlite3 "$lite" "SELECT id FROM nodes WHERE session='$small' ORDER BY seq LIMIT 3") \
          $(sqlite3 "$lite" "SELECT id FROM nodes WHERE session='$big' AND kind='summary' LIMIT 1"); do
  same "show $id" show "$id"
done

# The write commands that move HEAD or add nodes, then what they leave.
at=$(sqlite3 "$lite" "SELECT id FROM nodes WHERE session='$small' AND role='user' ORDER BY seq LIMIT 1 OFFSET 3")
same "checkout" --session "$small" checkout "$at"
same "checkout again (no move)" --session "$small" checkout "$at"
same "rewind 2" --session "$small" rewind 2
same "fork" --session "$small" fork --at "$at" --name f1
same "fork: an existing name" --session "$small" fork --at "$at" --name f1
printf '%s\n' '{"role":"user","content":[{"type":"text","text":"hello from a harness"}],"id":"app-1"}' \
  '{"role":"assistant","content":[{"type":"text","text":"hi"}],"id":"app-2"}' >"$WORK/stdin"
same "append" --session "$small" append
same "append again (skipped)" --session "$small" append
: >"$WORK/stdin"
same "checkout of another session's node" --session "$small" checkout "$(sqlite3 "$lite" "SELECT id FROM nodes WHERE session='$big' LIMIT 1")"
for s in "$small" f1; do
  same "render $s" --session "$s" render --format anthropic
  same "log $s" --session "$s" log
  same "snapshot $s" --session "$s" snapshot
done
same "sessions after the writes" sessions
same "verify after the writes" verify-invariants --all-sessions
expect_eq "verify is clean" true "$(jq -r .ok "$WORK/b")"
expect_eq "seq is 1..n" "$(pg_psql -tA -c 'SELECT count(*) FROM nodes')" "$(pg_psql -tA -c 'SELECT max(seq) FROM nodes')"

# compact with the offline extractive summarizer: rolling and lcm fold the same nodes into the
# same summaries; snapcompact archives the same nodes and caches the same frames.
same "compact --dry-run" --session "$big" compact --dry-run
same "compact rolling" --session "$big" compact --strategy rolling --summarizer extractive --force
expect_eq "rolling compacted" compacted "$(jq -r .status "$WORK/b")"
same "render after rolling" --session "$big" render --format anthropic
same "compact lcm" --session "$big" compact --strategy lcm --summarizer extractive --force
expect_eq "lcm compacted" compacted "$(jq -r .status "$WORK/b")"
same "render lcm" --session "$big" render --format openai --strategy lcm
same "compactions after compact" --session "$big" compactions
expect_rc "compact snapcompact" 0 "$CTXFOLD" --db "$PGURL" --session "$small" compact --strategy snapcompact --summarizer extractive --force
"$CTXFOLD" --db "$lite" --session "$small" compact --strategy snapcompact --summarizer extractive --force >"$WORK/snap.lite"
expect_eq "snapcompact archives the same nodes" "$(jq -c '[.summary_id, .covers, .frames_cached]' "$WORK/snap.lite")" "$(jq -c '[.summary_id, .covers, .frames_cached]' "$WORK/out")"
expect_eq "snapcompact caches its frames" true "$(jq '.frames_cached > 0' "$WORK/out")"
# The same render, each frame read from the cache on both.
same "render after snapcompact" --session "$small" render --format anthropic --strategy snapcompact
expect_eq "every frame read from the server's cache" true "$(jq '[.frames.frames[].cached] | (length > 0 and all)' "$WORK/b")"
expect_eq "the server holds the frames" "$(sqlite3 "$lite" 'SELECT count(*) FROM snapcompact_frames')" "$(pg_psql -tA -c 'SELECT count(*) FROM snapcompact_frames')"
same "verify after compact" verify-invariants --all-sessions
expect_eq "verify is clean after compact" true "$(jq -r .ok "$WORK/b")"

# HEAD's single writer: six appends racing on one session chain one after the other.
pids=()
for i in 1 2 3 4 5 6; do
  printf '{"role":"user","content":[{"type":"text","text":"racing %s"}],"id":"race-%s"}\n' "$i" "$i" |
    "$CTXFOLD" --db "$PGURL" --session f1 append >"$WORK/race$i.out" 2>"$WORK/race$i.err" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" && ok || fail "a racing append failed: $(cat "$WORK"/race*.err | head -c 300)"; done
expect_eq "six nodes appended" 6 "$(pg_psql -tA -c "SELECT count(*) FROM nodes WHERE id LIKE 'race-%'")"
expect_eq "each extends the HEAD before it (one chain)" 6 \
  "$(pg_psql -tA -c "SELECT count(DISTINCT predecessor) FROM nodes WHERE id LIKE 'race-%'")"
expect_eq "each HEAD move names the HEAD before it" 0 \
  "$(pg_psql -tA -c "SELECT count(*) FROM head_moves h WHERE h.session='f1' AND h.previous IS DISTINCT FROM
       (SELECT p.node_id FROM head_moves p WHERE p.session='f1' AND p.seq < h.seq ORDER BY p.seq DESC LIMIT 1)")"
expect_eq "HEAD is the newest racing node" "$(pg_psql -tA -c "SELECT id FROM nodes WHERE id LIKE 'race-%' ORDER BY seq DESC LIMIT 1")" \
  "$("$CTXFOLD" --db "$PGURL" --session f1 snapshot | jq -r .head)"
expect_rc "verify after the race" 0 "$CTXFOLD" --db "$PGURL" verify-invariants --all-sessions
finish
