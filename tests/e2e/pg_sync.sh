#!/usr/bin/env bash
# ctxfold sync between a SQLite file and a throwaway PostgreSQL server (docs/backends.md "sync"):
# the real auto-compaction session, compacted, forked, checked out and appended to, is pushed to
# the server and pulled back into new files; every command reads the same, byte for byte, on the
# three; a second sync copies nothing, a later one only what was added; a sync killed between
# batches leaves a database that verifies clean and resumes; a destination written on its own is
# refused (diverged) or reported ahead, a source row that does not match its digest is refused,
# and nothing is written by a refusal.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pg_lib.sh"
need_transcripts
start_pg

lite="$WORK/lite.db"
big=fa812bfe-b295-4cca-9c2f-fdf01028cb46
small=47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c
for f in "$CC_COMPACTED" "$CC_RESUMED"; do
  [ -f "$f" ] || { fail "missing transcript $f"; finish; }
  "$CTXFOLD" --db "$lite" import "$f" >/dev/null || fail "import $(basename "$f")"
done
# Rows of every kind sync copies: ctxfold's own summaries and compaction events (lcm on one
# session, rolling on the other), a fork, HEAD moves by checkout and rewind, appended nodes.
"$CTXFOLD" --db "$lite" --session "$big" compact --strategy lcm --window 30000 --force >/dev/null || fail "compact lcm"
"$CTXFOLD" --db "$lite" --session "$small" compact --window 2000 --force >/dev/null || fail "compact rolling"
at=$(sqlite3 "$lite" "SELECT id FROM nodes WHERE session='$small' AND role='user' ORDER BY seq LIMIT 1 OFFSET 3")
"$CTXFOLD" --db "$lite" --session "$small" fork --at "$at" --name f1 >/dev/null || fail "fork"
"$CTXFOLD" --db "$lite" --session "$small" checkout "$at" >/dev/null || fail "checkout"
"$CTXFOLD" --db "$lite" --session "$small" rewind 1 >/dev/null || fail "rewind"
nodes=$(sqlite3 "$lite" "SELECT count(*) FROM nodes")
expect_eq "the source holds summaries of both strategies" 1 \
  "$(sqlite3 "$lite" "SELECT count(DISTINCT json_extract(metadata,'\$.strategy')) >= 2 AND count(*) > 10 FROM nodes n JOIN events e ON e.type='compact/summary' AND json_extract(e.payload,'\$.summary_id')=n.id")"

# Every command that reads a session: the same output on $lite and on the server.
compare_all() {
  local tag=$1
  same "$tag: sessions" sessions
  same "$tag: verify" verify-invariants --all-sessions
  expect_eq "$tag: verify is clean" true "$(jq -r .ok "$WORK/b")"
  for s in $(sqlite3 "$lite" "SELECT id FROM sessions ORDER BY created_seq"); do
    for args in "render --format anthropic" "render --format openai --strategy raw" "render --strategy lcm" \
                "log" "snapshot" "compactions" "context" "export" "list"; do
      # shellcheck disable=SC2086
      same "$tag: $args $s" --session "$s" $args
    done
  done
}

# Push into the empty server.
"$CTXFOLD" --db "$lite" sync --to "$PGURL" >"$WORK/push" 2>"$WORK/push.err"
expect_eq "push: exit" 0 $?
expect_eq "push: every node copied" "$nodes" "$(jq -r .nodes "$WORK/push")"
expect_eq "push: every session new" "$(sqlite3 "$lite" "SELECT count(*) FROM sessions")" \
  "$(jq '[.sessions[] | select(.state=="new")] | length' "$WORK/push")"
expect_eq "push: digests checked (nodes and source records)" \
  "$(sqlite3 "$lite" "SELECT (SELECT count(*) FROM nodes) + (SELECT count(*) FROM source_records)")" \
  "$(jq -r .digests_checked "$WORK/push")"
if grep -qF "$PG_PASS" "$WORK/push" "$WORK/push.err"; then fail "push: the password is shown"; fi
compare_all "after the push"

# Again: nothing to copy, nothing written.
"$CTXFOLD" --db "$lite" sync --to "$PGURL" >"$WORK/again"
expect_eq "push again: exit" 0 $?
expect_eq "push again: nodes, commits" "0 0" "$(jq -r '"\(.nodes) \(.commits)"' "$WORK/again")"
expect_eq "push again: every session unchanged" 0 "$(jq '[.sessions[] | select(.state!="unchanged")] | length' "$WORK/again")"

# Incremental: two appended nodes and a HEAD move travel, nothing else.
printf '%s\n' '{"role":"user","content":[{"type":"text","text":"after the push"}],"id":"sync-app-1"}' \
  '{"role":"assistant","content":[{"type":"text","text":"noted"}],"id":"sync-app-2"}' |
  "$CTXFOLD" --db "$lite" --session "$big" append >/dev/null || fail "append"
"$CTXFOLD" --db "$lite" sync --to "$PGURL" >"$WORK/inc"
expect_eq "incremental push" "2 $(sqlite3 "$lite" "SELECT count(*) FROM head_moves WHERE cause='append'")" \
  "$(jq -r '"\(.nodes) \(.head_moves)"' "$WORK/inc")"
expect_eq "incremental push: one session extended" "$big extended" \
  "$(jq -r '.sessions[] | select(.state!="unchanged") | "\(.id) \(.state)"' "$WORK/inc")"
compare_all "after the incremental push"

# Pull the compacted session back into a new file: it brings that session alone (its sub-agents
# are sessions of their own) and reads as the original, but for the seqs, which are the new
# file's own.
pulled="$WORK/pulled.db"
"$CTXFOLD" --db "$pulled" --session "$big" sync --from "$PGURL" >"$WORK/pull"
expect_eq "pull one session: exit" 0 $?
expect_eq "pull one session: sessions" "$big" "$(jq -r '.sessions[].id' "$WORK/pull")"
no_seqs='walk(if type == "object" then with_entries(select(.key | test("seq|^db$") | not)) else . end)'
for args in "render --format anthropic" "render --strategy lcm" "render --format openai --strategy raw" "log" "compactions"; do
  # shellcheck disable=SC2086
  a=$("$CTXFOLD" --db "$lite" --session "$big" $args | jq -c "$no_seqs" | sha256sum)
  # shellcheck disable=SC2086
  b=$("$CTXFOLD" --db "$pulled" --session "$big" $args | jq -c "$no_seqs" | sha256sum)
  expect_eq "pulled session: $args" "$a" "$b"
done
"$CTXFOLD" --db "$pulled" verify-invariants --all-sessions >/dev/null
expect_eq "pulled session: verify" 0 $?

# The fork pulls its parent with it.
"$CTXFOLD" --db "$WORK/fork.db" --session f1 sync --from "$PGURL" >"$WORK/pullf"
expect_eq "pull a fork: its parent comes along" "$small true f1 false" \
  "$(jq -r '[.sessions[] | "\(.id) \(.ancestor)"] | join(" ")' "$WORK/pullf")"
"$CTXFOLD" --db "$WORK/fork.db" verify-invariants --all-sessions >/dev/null
expect_eq "pulled fork: verify (I9: the fork renders as its parent did)" 0 $?

# Everything back: the round trip SQLite -> server -> SQLite gives the same database, command by command.
lite_orig=$lite
lite="$WORK/back.db"
"$CTXFOLD" --db "$lite" sync --from "$PGURL" >/dev/null || fail "pull everything"
compare_all "pulled back"
expect_eq "pulled back: the same ledger rows" \
  "$(sqlite3 "$lite_orig" "SELECT seq, id, digest FROM nodes ORDER BY seq" | sha256sum)" \
  "$(sqlite3 "$lite" "SELECT seq, id, digest FROM nodes ORDER BY seq" | sha256sum)"
lite=$lite_orig

# Killed after its first batch: the server holds whole batches and verifies clean; a second run
# finishes, with every node once.
url2=$(pg_createdb killed)
(CTXFOLD_TEST_CRASH_AT=sync_after_batch exec "$CTXFOLD" --db "$lite" sync --to "$url2" --batch 100 >/dev/null 2>&1)
expect_eq "killed sync: exit (SIGKILL)" 137 $?
part=$("$PG_BIN/psql" -X -At -d killed -c "SELECT count(*) FROM nodes")
if [ "$part" -gt 0 ] && [ "$part" -lt "$((nodes + 2))" ]; then ok; else fail "killed sync: $part nodes stored"; fi
"$CTXFOLD" --db "$url2" verify-invariants --all-sessions >"$WORK/kv"
expect_eq "killed sync: what it left verifies clean" true "$(jq -r .ok "$WORK/kv")"
"$CTXFOLD" --db "$lite" sync --to "$url2" >"$WORK/resumed"
expect_eq "resumed sync: the rest" "$((nodes + 2 - part))" "$(jq -r .nodes "$WORK/resumed")"
expect_eq "resumed sync: every node once" "$((nodes + 2)) $((nodes + 2))" \
  "$("$PG_BIN/psql" -X -At -d killed -c "SELECT count(DISTINCT id) || ' ' || count(*) FROM nodes")"
expect_eq "resumed sync: same renders" "$("$CTXFOLD" --db "$lite" --session "$big" render | sha256sum)" \
  "$("$CTXFOLD" --db "$url2" --session "$big" render | sha256sum)"
"$CTXFOLD" --db "$url2" verify-invariants --all-sessions >"$WORK/kv"
expect_eq "resumed sync: verify" true "$(jq -r .ok "$WORK/kv")"

# Written on both sides: refused before anything is written.
before=$("$PG_BIN/psql" -X -At -c "SELECT count(*) FROM nodes")
echo '{"role":"user","content":[{"type":"text","text":"on the server"}],"id":"srv-1"}' |
  "$CTXFOLD" --db "$PGURL" --session "$small" append >/dev/null || fail "append on the server"
"$CTXFOLD" --db "$lite" sync --to "$PGURL" >"$WORK/ahead"
expect_eq "server ahead: exit 0" 0 $?
expect_eq "server ahead: reported" "destination_ahead 0" \
  "$(jq -r --arg s "$small" '.sessions[] | select(.id==$s) | "\(.state) \(.nodes)"' "$WORK/ahead")"
echo '{"role":"user","content":[{"type":"text","text":"on the laptop"}],"id":"lap-1"}' |
  "$CTXFOLD" --db "$lite" --session "$small" append >/dev/null || fail "append on the laptop"
"$CTXFOLD" --db "$lite" sync --to "$PGURL" >"$WORK/div" 2>"$WORK/div.err"
expect_eq "diverged: exit 4" 4 $?
grep -q "sync.diverged\|is not a copy" "$WORK/div.err" && ok || fail "diverged: message: $(cat "$WORK/div.err")"
grep -q "$small" "$WORK/div.err" && ok || fail "diverged: names the session"
expect_eq "diverged: nothing written" "$((before + 1))" "$("$PG_BIN/psql" -X -At -c "SELECT count(*) FROM nodes")"
[ -s "$WORK/div" ] && fail "diverged: something on stdout"

# A source row changed behind ctxfold's back: refused, nothing of it written.
bad="$WORK/bad.db"
cp "$lite" "$bad"
sqlite3 "$bad" "DROP TRIGGER nodes_no_update; UPDATE nodes SET content=replace(content,'e','E') WHERE id='sync-app-1'"
url3=$(pg_createdb bad)
"$CTXFOLD" --db "$bad" sync --to "$url3" >/dev/null 2>"$WORK/bad.err"
expect_eq "changed row: exit 3" 3 $?
grep -q "sync-app-1" "$WORK/bad.err" && ok || fail "changed row: names the node: $(cat "$WORK/bad.err")"
expect_eq "changed row: nothing written" 0 "$("$PG_BIN/psql" -X -At -d bad -c "SELECT count(*) FROM nodes")"

# Usage.
expect_rc "neither --to nor --from" 2 "$CTXFOLD" --db "$lite" sync
expect_rc "both --to and --from" 2 "$CTXFOLD" --db "$lite" sync --to "$PGURL" --from "$PGURL"
expect_rc "--to the database itself" 2 "$CTXFOLD" --db "$lite" sync --to "$lite"
expect_rc "an unknown session" 3 "$CTXFOLD" --db "$lite" --session nope sync --to "$WORK/x.db"
finish
