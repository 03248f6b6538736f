#!/usr/bin/env bash
# grep and expand on the PostgreSQL backend (docs/backends.md "grep on a server"): the same
# imports (real Claude Code transcripts, plus appended nodes with non-ASCII text) on a SQLite file
# and on a throwaway server give the same grep output for every pattern below (literal, -i with
# Unicode case folding, --regex, --in, --scope, --offset/--limit), byte for byte: first both
# scanning, then after `ctxfold index` on both (SQLite's FTS5 and trigram tables, the server's
# pg_trgm GIN index over grep_like), where the matches are the same and the summaries differ only
# in how the search ran (index, indexed_through, nodes_scanned, packed_through, elapsed_ms).
# expand pages the same rows. `index` by a role that may not create pg_trgm exits 4 and writes
# nothing, and grep then scans.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pg_lib.sh"
need_transcripts
start_pg

files=("$CC_COMPACTED" "$CC_RESUMED" "$CC_SIDECHAINS" "$CC_WEBSEARCH")
lite="$WORK/lite.db"
big=fa812bfe-b295-4cca-9c2f-fdf01028cb46
small=47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c

: >"$WORK/stdin"
for f in "${files[@]}"; do
  [ -f "$f" ] || { fail "missing transcript $f"; continue; }
  same "import $(basename "$f")" import "$f"
done

# Text the transcripts lack: case folding beyond ASCII (ß folds to ss, the titlecase digraph
# ǅ, final sigma, Kelvin sign, a ligature), CJK, LIKE's own wildcards, a long line.
append_unicode() { # append_unicode TAG
  local tag=$1
  {
    printf '{"role":"user","content":[{"type":"text","text":"Die Straße heißt GROSSE STRASSE %s"}],"id":"u1-%s"}\n' "$tag" "$tag"
    printf '{"role":"assistant","content":[{"type":"text","text":"ǅemal Ǆ ǆ — ΣΊΣΥΦΟΣ σίσυφος ὈΔΥΣΣΕΎΣ %s"}],"id":"u2-%s"}\n' "$tag" "$tag"
    printf '{"role":"user","content":[{"type":"text","text":"50%% off_sale\\\\path 2 K (Kelvin) ﬁle 東京都 %s"}],"id":"u3-%s"}\n' "$tag" "$tag"
    printf '{"role":"assistant","content":[{"type":"text","text":"line one\\nstrasse on line two\\n  fn   main() {}\\nΣΊΣΥΦΟΣ again %s"}],"id":"u4-%s"}\n' "$tag" "$tag"
  } >"$WORK/stdin"
  same "append $tag" --session "$small" append
  : >"$WORK/stdin"
}
append_unicode a

# The grep argument lists compared (each: one line, split on spaces; @ stands for a space).
patterns=(
  "--all-sessions error"
  "--all-sessions Error"
  "--all-sessions -i error"
  "--all-sessions function"
  "--all-sessions -i COMPACT"
  "--all-sessions git@status"
  "--all-sessions --limit 3 error"
  "--all-sessions --offset 5 --limit 4 error"
  "--all-sessions --offset 100000 error"
  "--all-sessions --limit 0 -i the"
  "--all-sessions --in raw -i summary"
  "--all-sessions --in summaries -i summary"
  "--all-sessions --in thinking -i the"
  "--all-sessions →"
  "--all-sessions -i │"
  "--all-sessions xyzzy-not-there"
  "--all-sessions Straße"
  "--all-sessions -i STRASSE"
  "--all-sessions -i straße"
  "--all-sessions -i GROSSE"
  "--all-sessions -i ǆemal"
  "--all-sessions -i Ǆ"
  "--all-sessions ǅ"
  "--all-sessions -i σίσυφος"
  "--all-sessions -i ΣΊΣΥΦΟΣ"
  "--all-sessions -i ὀδυσσεύς"
  "--all-sessions -i kelvin@k"
  "--all-sessions -i 2@K"
  "--all-sessions -i FILE"
  "--all-sessions 東京"
  "--all-sessions 50%"
  "--all-sessions off_sale"
  "--all-sessions _"
  "--all-sessions --regex fn\\s+\\w+"
  "--all-sessions --regex ^strasse"
  "--all-sessions --regex -i ^STRASSE@on"
  "--all-sessions --regex (?i)σίσυφος"
  "--all-sessions --regex TODO|FIXME"
  "--all-sessions --regex [A-Z][a-z]+Error"
  "--all-sessions --regex -i import\\s+\\w+"
  "--all-sessions --regex --limit 2 --offset 1 \\d{4}-\\d{2}-\\d{2}"
  "--session $small -i straße"
  "--session $small --limit 2 -i the"
  "--session $big -i compaction"
  "--session $big --regex --in summaries -i (summary|context)"
)
# --scope: the big session's summaries, and one pattern each.
scopes=$(sqlite3 "$lite" "SELECT id FROM nodes WHERE session='$big' AND kind='summary' ORDER BY seq LIMIT 3")
[ -n "$scopes" ] || fail "no summary in $big to scope a grep to"
for id in $scopes; do
  patterns+=("--scope $id -i error" "--scope $id --regex -i \\bfile\\b" "--scope $id --limit 1 --offset 1 the")
done

run_patterns() { # run_patterns LABEL COMPARE: COMPARE is same or same_matches
  local label=$1 compare=$2 p args
  for p in "${patterns[@]}"; do
    # shellcheck disable=SC2206
    args=($p)
    args=("${args[@]//@/ }")
    "$compare" "$label grep $p" grep "${args[@]}"
  done
}

# Both scanning: the whole output, the summary's counts included, is the same.
run_patterns "scan:" same
compared=${#patterns[@]}

# expand: several summaries, paged.
for id in $scopes; do
  same "expand $id" expand "$id"
  same "expand $id page 2" expand "$id" --offset 300 --limit 500
done
same "expand of a raw node" expand "$(sqlite3 "$lite" "SELECT id FROM nodes WHERE session='$small' LIMIT 1")"
same "expand of an unknown id" expand no-such-id
printf '%s\n' $scopes >"$WORK/stdin"
same "expand - (ids on stdin)" expand - --limit 200
: >"$WORK/stdin"

# Indexed: SQLite's FTS5/trigram tables and the server's grep_like under pg_trgm. The matches
# are the same; of the summary, the counts.
same_matches() { # same_matches WHAT ARGS...: same match records, exit code and match counts
  local what=$1; shift
  "$CTXFOLD" --db "$lite" "$@" >"$WORK/a" 2>"$WORK/a.err"; local ra=$?
  "$CTXFOLD" --db "$PGURL" "$@" >"$WORK/b" 2>"$WORK/b.err"; local rb=$?
  local keep='if .type == "summary" then {raw_matches, summary_matches, offset, limit} else . end'
  jq -c "$keep" "$WORK/a" >"$WORK/a.m" 2>/dev/null
  jq -c "$keep" "$WORK/b" >"$WORK/b.m" 2>/dev/null
  if [ "$ra" != "$rb" ]; then fail "$what: exit $ra on SQLite, $rb on PostgreSQL: $(head -c 300 "$WORK/b.err")"; return; fi
  if [ -s "$WORK/a.m" ] && cmp -s "$WORK/a.m" "$WORK/b.m"; then ok; else
    fail "$what: matches differ: $(diff "$WORK/a.m" "$WORK/b.m" | head -5 | cut -c1-300)"; fi
  if [ "$(tail -1 "$WORK/b" | jq -r .index)" = pg_trgm ]; then pg_indexed=$((pg_indexed + 1)); fi
}
expect_rc "index on SQLite" 0 "$CTXFOLD" --db "$lite" index
expect_rc "index on the server" 0 "$CTXFOLD" --db "$PGURL" index
expect_eq "the server's index reaches every node" "$(pg_psql -tA -c 'SELECT max(seq) FROM nodes')" "$(jq -r .through_seq "$WORK/out")"
expect_eq "grep_like has the pg_trgm GIN index" 1 \
  "$(pg_psql -tA -c "SELECT count(*) FROM pg_indexes WHERE indexname='grep_like_trgm' AND indexdef LIKE '%gin_trgm_ops%'")"
append_unicode b  # an unindexed tail, scanned after the index's candidates
pg_indexed=0
run_patterns "indexed:" same_matches
compared=$((compared + ${#patterns[@]}))
if [ "$pg_indexed" -ge 10 ]; then ok; else fail "only $pg_indexed greps used the server's pg_trgm index"; fi
echo "$pg_indexed of ${#patterns[@]} indexed greps answered by the server's pg_trgm index" >&2
same_matches "indexed: grep --no-index" grep --all-sessions --no-index -i straße
expect_rc "index again (only the tail)" 0 "$CTXFOLD" --db "$PGURL" index
expect_eq "the second index run adds the tail" 4 "$(jq -r .indexed "$WORK/out")"
expect_rc "index --rebuild" 0 "$CTXFOLD" --db "$PGURL" index --rebuild
expect_eq "a rebuild indexes every node" "$(pg_psql -tA -c 'SELECT count(*) FROM nodes')" "$(jq -r .indexed "$WORK/out")"
same_matches "after a rebuild" grep --all-sessions -i ΣΊΣΥΦΟΣ
expect_rc "verify with the server's index present" 0 "$CTXFOLD" --db "$PGURL" verify-invariants --all-sessions
# SQLite's expand now skips rows by its derived spans; the server walks the covers: same pages.
for id in $scopes; do
  same "expand $id after index" expand "$id" --offset 1000 --limit 700
done

# A role that may not create pg_trgm: index exits 4 naming it, writes nothing, and grep scans.
url2=$(pg_createdb plainidx)
pg_psql -d plainidx -c "CREATE ROLE plain LOGIN PASSWORD 'plain-pw'; GRANT CREATE ON SCHEMA public TO plain;
  REVOKE CREATE ON DATABASE plainidx FROM PUBLIC" >/dev/null || fail "create role plain"
url2="postgresql://plain:plain-pw@/plainidx?host=$PG_DIR"
expect_rc "import as plain" 0 "$CTXFOLD" --db "$url2" import "${files[1]}"
expect_rc "index without pg_trgm" 4 "$CTXFOLD" --db "$url2" index
if grep -q 'pg_trgm' "$WORK/err" && ! grep -q plain-pw "$WORK/err"; then ok; else fail "index without pg_trgm: $(head -c 300 "$WORK/err")"; fi
expect_eq "nothing of the index was written" "" "$(pg_psql -d plainidx -tA -c "SELECT to_regclass('grep_like')")"
expect_rc "grep still scans" 0 "$CTXFOLD" --db "$url2" grep --all-sessions -i the
expect_eq "grep scanned" scan "$(tail -1 "$WORK/out" | jq -r .index)"

# Time on both (the largest pattern set above, once each): printed for the record.
for db in "$lite" "$PGURL"; do
  t0=$(date +%s%N)
  "$CTXFOLD" --db "$db" grep --all-sessions --no-index -i error >/dev/null
  t1=$(date +%s%N)
  "$CTXFOLD" --db "$db" grep --all-sessions -i straße >/dev/null
  t2=$(date +%s%N)
  echo "grep -i error (scan) $(( (t1 - t0) / 1000000 )) ms, -i straße (indexed) $(( (t2 - t1) / 1000000 )) ms on $([ "$db" = "$lite" ] && echo SQLite || echo PostgreSQL)" >&2
done
echo "$compared grep runs compared" >&2
finish
