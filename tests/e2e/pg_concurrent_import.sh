#!/usr/bin/env bash
# Many writers on the PostgreSQL backend (docs/backends.md "Many writers"): four importers run at
# once into one new server database, three different real Claude Code transcripts and one of them
# a second time. The database must verify clean and hold every node exactly once: the same node
# ids, sessions, HEAD moves, covers, source records and renders as a serial SQLite import of the
# same files, seq running 1..n, and every node in exactly one text pack.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pg_lib.sh"
need_transcripts
start_pg

files=("$CC_COMPACTED" "$CC_RESUMED" "$CC_WEBSEARCH" "$CC_COMPACTED")
for f in "${files[@]}"; do [ -f "$f" ] || { fail "missing transcript $f"; finish; }; done
lite="$WORK/lite.db"
for f in "${files[@]}"; do "$CTXFOLD" --db "$lite" import "$f" >/dev/null 2>&1 || fail "serial SQLite import of $f"; done

url=$(pg_createdb race)
start=$(date +%s%N)
pids=()
for i in "${!files[@]}"; do
  "$CTXFOLD" --db "$url" import "${files[$i]}" >"$WORK/imp$i.out" 2>"$WORK/imp$i.err" &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then ok; else fail "importer $i exited $?: $(head -c 300 "$WORK/imp$i.err")"; fi
done
echo "four concurrent importers: $(( ($(date +%s%N) - start) / 1000000 )) ms wall" >&2
expect_rc "verify after the race" 0 "$CTXFOLD" --db "$url" verify-invariants --all-sessions
[ "$(jq -r .ok "$WORK/out" 2>/dev/null)" = true ] && ok || fail "verify: $(head -c 600 "$WORK/out")"

# Every node once, as the serial import has them.
lite_q() { sqlite3 "$lite" "$1"; }
pg_q() { pg_psql -d race -tA -c "$1"; }
for q in "SELECT count(*) FROM nodes" "SELECT count(DISTINCT id) FROM nodes" "SELECT count(*) FROM sessions" \
         "SELECT count(*) FROM head_moves" "SELECT count(*) FROM covers" "SELECT count(*) FROM source_records" \
         "SELECT count(*) FROM events"; do
  expect_eq "$q" "$(lite_q "$q")" "$(pg_q "$q")"
done
expect_eq "seq is 1..n" "$(pg_q 'SELECT count(*) FROM nodes')" "$(pg_q 'SELECT max(seq) FROM nodes')"
lite_q "SELECT id || ' ' || session || ' ' || digest FROM nodes ORDER BY id" >"$WORK/lite.ids"
pg_q "SELECT id || ' ' || session || ' ' || digest FROM nodes ORDER BY id" >"$WORK/pg.ids"
if cmp -s "$WORK/lite.ids" "$WORK/pg.ids"; then ok; else fail "node ids differ: $(diff "$WORK/lite.ids" "$WORK/pg.ids" | head -3)"; fi
lite_q "SELECT session || ' ' || node_id || ' ' || cause FROM head_moves ORDER BY session, seq" >"$WORK/lite.heads"
pg_q "SELECT session || ' ' || node_id || ' ' || cause FROM head_moves ORDER BY session, seq" >"$WORK/pg.heads"
if cmp -s "$WORK/lite.heads" "$WORK/pg.heads"; then ok; else fail "HEAD moves differ: $(diff "$WORK/lite.heads" "$WORK/pg.heads" | head -3)"; fi
# grep's packed text: each node in one pack, however the importers' pack updates interleaved.
expect_eq "every node packed once" "$(pg_q 'SELECT count(*) FROM nodes')" "$(pg_q 'SELECT coalesce(sum(nodes), 0) FROM text_pack')"
# Each importer reports what it did: the file imported twice was written once.
added=0
for i in "${!files[@]}"; do added=$((added + $(jq '[.sessions[].nodes_added // 0] | add // 0' "$WORK/imp$i.out" 2>/dev/null || echo 0))); done
expect_eq "nodes added over the four importers" "$(pg_q 'SELECT count(*) FROM nodes')" "$added"
# The renders are the serial import's, byte for byte.
mapfile -t all < <(lite_q "SELECT id FROM sessions WHERE kind='main' ORDER BY id")
for s in "${all[@]}"; do
  "$CTXFOLD" --db "$lite" --session "$s" render --format anthropic >"$WORK/a" 2>&1
  "$CTXFOLD" --db "$url" --session "$s" render --format anthropic >"$WORK/b" 2>&1
  if cmp -s "$WORK/a" "$WORK/b" && [ -s "$WORK/a" ]; then ok; else fail "render of $s differs"; fi
done
finish
