#!/usr/bin/env bash
# ctxfold sync between SQLite files (docs/backends.md "sync"; the server side is
# tests/e2e/pg_sync.sh): Claude Code, Codex and Gemini sessions copied into a new file read the
# same, seqs included; a fork synced after its parent moved on keeps rendering as its parent did at
# the fork point (its source_boundary_seq translated, I9 clean); a compaction's boundary too; a
# destination that is not a ctxfold database is refused with nothing written.
source "$(dirname "$0")/lib.sh"
need_transcripts

T="$CTXFOLD_TRANSCRIPTS"
src="$WORK/src.db"
codex=$(ls "$T"/codex/*.jsonl | head -1)
gemini=$(ls "$T"/gemini/*.json | head -1)
small="$T/claude-code/v2.1.38_short_parallel_tool_rejection.jsonl"
for f in "$codex" "$gemini" "$small"; do
  [ -f "$f" ] || { fail "missing transcript $f"; finish; }
  "$CTXFOLD" --db "$src" import "$f" >/dev/null || fail "import $(basename "$f")"
done
cc=$("$CTXFOLD" --db "$src" sessions | jq -r 'select(.agent=="claude-code") | .id' | head -1)
[ -n "$cc" ] || { fail "no Claude Code session"; finish; }

# A fork at HEAD's predecessor, then the parent moves on (an append) and compacts.
at=$("$CTXFOLD" --db "$src" --session "$cc" log --limit 2 | sed -n 2p | jq -r .id)
"$CTXFOLD" --db "$src" --session "$cc" fork --at "$at" --name pf >/dev/null || fail "fork"
echo '{"role":"user","content":[{"type":"text","text":"one more thing"}],"id":"sf-app-1"}' |
  "$CTXFOLD" --db "$src" --session "$cc" append >/dev/null || fail "append"
"$CTXFOLD" --db "$src" --session "$cc" compact --window 1000 --force >/dev/null
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 5 ] && ok || fail "compact: exit $rc"

# Everything into a new file: the same database, command by command.
all="$WORK/all.db"
"$CTXFOLD" --db "$src" sync --to "$all" >"$WORK/out"
expect_eq "sync into a new file: exit" 0 $?
expect_eq "sync: every node" "$(sqlite3 "$src" "SELECT count(*) FROM nodes")" "$(jq -r .nodes "$WORK/out")"
for s in $(sqlite3 "$src" "SELECT id FROM sessions"); do
  for args in "render --format anthropic" "render --format openai --strategy raw" "log" "export" "snapshot" "compactions"; do
    # shellcheck disable=SC2086
    a=$("$CTXFOLD" --db "$src" --session "$s" $args 2>&1 | sed "s#$src#DB#g" | sha256sum)
    # shellcheck disable=SC2086
    b=$("$CTXFOLD" --db "$all" --session "$s" $args 2>&1 | sed "s#$all#DB#g" | sha256sum)
    expect_eq "$s: $args" "$a" "$b"
  done
done
expect_eq "the same ledger rows" \
  "$(sqlite3 "$src" "SELECT seq, id, digest, tokens FROM nodes ORDER BY seq; SELECT * FROM head_moves; SELECT * FROM covers; SELECT seq, session, type, ref, payload, boundary_seq FROM events" | sha256sum)" \
  "$(sqlite3 "$all" "SELECT seq, id, digest, tokens FROM nodes ORDER BY seq; SELECT * FROM head_moves; SELECT * FROM covers; SELECT seq, session, type, ref, payload, boundary_seq FROM events" | sha256sum)"

# The parent first (with its later append and compaction), the fork afterwards: the fork's
# boundary must name the parent's state at the fork point, not the destination's newest seq.
two="$WORK/two.db"
"$CTXFOLD" --db "$src" --session "$cc" sync --to "$two" >/dev/null || fail "sync the parent"
"$CTXFOLD" --db "$src" sync --to "$two" >"$WORK/out2" || fail "sync the rest"
expect_eq "the fork arrives second" "pf new" \
  "$(jq -r '.sessions[] | select(.id=="pf") | "\(.id) \(.state)"' "$WORK/out2")"
"$CTXFOLD" --db "$two" verify-invariants --all-sessions >"$WORK/v2"
expect_eq "fork synced after its parent moved on: verify clean (I9)" true "$(jq -r .ok "$WORK/v2")"
expect_eq "its source_boundary_seq: the parent's HEAD at the fork, there" \
  "$(sqlite3 "$two" "SELECT seq FROM nodes WHERE id=(SELECT predecessor FROM nodes WHERE id='sf-app-1')")" \
  "$(sqlite3 "$two" "SELECT json_extract(metadata,'\$.source_boundary_seq') FROM sessions WHERE id='pf'")"
expect_eq "the fork renders the same" "$("$CTXFOLD" --db "$src" --session pf render | sha256sum)" \
  "$("$CTXFOLD" --db "$two" --session pf render | sha256sum)"
# compact/start's session_seq names the same node (the session's newest when it started) there.
q="SELECT json_extract(payload,'\$.session_seq') FROM events WHERE type='compact/start' AND session='$cc' ORDER BY seq LIMIT 1"
newest=$(sqlite3 "$src" "SELECT id FROM nodes WHERE seq=($q)")
[ -n "$newest" ] && ok || fail "no compact/start in the source"
expect_eq "compact/start session_seq translated" "$(sqlite3 "$two" "SELECT seq FROM nodes WHERE id='$newest'")" \
  "$(sqlite3 "$two" "$q")"
if [ "$(sqlite3 "$two" "$q")" != "$(sqlite3 "$src" "$q")" ]; then ok; else fail "session_seq: the same seq in both files (the test shows nothing)"; fi

# A destination that is not a ctxfold database: refused, left as it was.
echo "not a database" >"$WORK/junk.db"
expect_rc "a destination that is not a database" 3 "$CTXFOLD" --db "$src" sync --to "$WORK/junk.db"
expect_eq "junk left as it was" "not a database" "$(cat "$WORK/junk.db")"
# A libpq key=value string is not a file name: refused, nothing created, the password not shown.
(cd "$WORK" && "$CTXFOLD" --db "$src" sync --to "dbname=ctxfold password=hunter2" >"$WORK/ci.out" 2>"$WORK/ci.err")
expect_eq "a conninfo string: exit 2" 2 $?
if grep -q hunter2 "$WORK/ci.out" "$WORK/ci.err"; then fail "conninfo: the password is shown"; else ok; fi
expect_eq "conninfo: no file made" "" "$(ls "$WORK" | grep -F dbname || true)"
finish
