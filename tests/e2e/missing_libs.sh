#!/usr/bin/env bash
# libnettle, libcurl and libpq are dlopen'd on first use (util/dynlib.hpp). When one
# cannot be loaded (here: a broken file of its soname first on LD_LIBRARY_PATH), the command exits
# 4 (environment), not 3 as if the input were bad, names the Debian package, and writes nothing.
source "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/nonettle" "$WORK/nocurl"
printf 'not a library' >"$WORK/nonettle/libnettle.so.8"
printf 'not a library' >"$WORK/nocurl/libcurl.so.4"
mkdir -p "$WORK/nopq"
printf 'not a library' >"$WORK/nopq/libpq.so.5"
db="$WORK/t.db"

echo '{"id":"x1","role":"user","content":"hi"}' >"$WORK/one.jsonl"
expect_rc "append without libnettle (node digests) is an environment error" 4 \
  env LD_LIBRARY_PATH="$WORK/nonettle" "$CTXFOLD" --db "$db" --session s append <"$WORK/one.jsonl"
grep -q "libnettle8" "$WORK/err" && ok || fail "append names the package: $(cat "$WORK/err")"
grep -q "libnettle.so.8" "$WORK/err" && ok || fail "append names the library: $(cat "$WORK/err")"
expect_eq "nothing written: the database the failed call created is gone" "" "$(ls "$db" 2>/dev/null)"

for i in $(seq 1 30); do
  jq -cn --arg i "$i" '{id:("n"+$i), role:(if ($i|tonumber)%2==1 then "user" else "assistant" end),
                        content:("message number "+$i+" with some words in it to summarize later on")}'
done >"$WORK/thirty.jsonl"
expect_rc "append" 0 "$CTXFOLD" --db "$db" --session s append <"$WORK/thirty.jsonl"
"$CTXFOLD" --db "$db" --session s render >"$WORK/before.json"
expect_rc "http summarizer without libcurl" 4 env LD_LIBRARY_PATH="$WORK/nocurl" OPENAI_API_KEY=x \
  OPENAI_BASE_URL=http://127.0.0.1:9/v1 "$CTXFOLD" --db "$db" --session s compact --window 300 --tail-percent 10 \
  --force --summarizer openai:gpt-4o-mini
grep -q "libcurl4" "$WORK/err" && ok || fail "compact names the package: $(cat "$WORK/err")"
expect_eq "the reason names the package" true "$(jq '.reason | contains("Debian package libcurl4")' "$WORK/out")"
"$CTXFOLD" --db "$db" --session s render >"$WORK/after.json"
expect_eq "render unchanged" "" "$(cmp -s "$WORK/before.json" "$WORK/after.json" || echo differs)"

# A server URL without libpq: exit 4 naming the package, the password never shown; the commands
# on a SQLite file do not load it (the appends above ran with it broken on the path too).
expect_rc "a server URL without libpq is an environment error" 4 env LD_LIBRARY_PATH="$WORK/nopq" \
  "$CTXFOLD" --db 'postgresql://me:s3cr3t@127.0.0.1:9/db' list
grep -q "libpq5" "$WORK/err" && ok || fail "list names the package: $(cat "$WORK/err")"
grep -q "s3cr3t" "$WORK/err" && fail "the password reached stderr: $(cat "$WORK/err")" || ok
expect_rc "a SQLite file without libpq" 0 env LD_LIBRARY_PATH="$WORK/nopq" "$CTXFOLD" --db "$db" --session s render
# snapcompact's frames are base64 through libnettle too, which its archive and summary nodes'
# digests load first: without it the compaction stops before anything lands.
snap="$WORK/snap.db"
"$CTXFOLD" --db "$snap" --session s append <"$WORK/thirty.jsonl" >/dev/null
"$CTXFOLD" --db "$snap" --session s log >"$WORK/snap_before.json"
expect_rc "snapcompact without libnettle is an environment error" 4 \
  env LD_LIBRARY_PATH="$WORK/nonettle" "$CTXFOLD" --db "$snap" --session s compact --strategy snapcompact \
  --window 300 --tail-percent 10 --force
grep -q "libnettle8" "$WORK/err" && ok || fail "compact names the package: $(cat "$WORK/err")"
"$CTXFOLD" --db "$snap" --session s log >"$WORK/snap_after.json"
expect_eq "snapcompact stored nothing" "" "$(cmp -s "$WORK/snap_before.json" "$WORK/snap_after.json" || echo differs)"
expect_rc "snapcompact with libnettle" 0 "$CTXFOLD" --db "$snap" --session s compact --strategy snapcompact \
  --window 300 --tail-percent 10 --force
finish
