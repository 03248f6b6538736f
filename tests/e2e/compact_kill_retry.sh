#!/usr/bin/env bash
# A compaction killed at any crash point and then retried ends where an uninterrupted run ends
# (docs/strategies.md "The compaction bracket"): the same view node ids (summaries, lcm folds,
# archives, notes), the same request bodies in every provider format, and for snapcompact the same
# frame cache. A frame cache that lost rows (an older kill, rows deleted) changes no render, no
# read command refills it, and the next snapcompact compaction does.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
gen_session 16 >"$WORK/s.jsonl"
fresh() { db_rm "$1"; "$CTXFOLD" --db "$1" --session s append <"$WORK/s.jsonl" >/dev/null 2>&1; }
views() { count "$1" "select id from nodes where kind in ('summary','archive','notes') order by seq" | xargs; }
frames() { count "$1" "select count(*) from snapcompact_frames"; }
bodies() { # bodies DB: every provider body and the text render, one line each
  for f in openai anthropic gemini responses; do "$CTXFOLD" --db "$1" render --format "$f" --body | sha256sum; done
  "$CTXFOLD" --db "$1" render --text | sha256sum
}
compact() { "$CTXFOLD" --db "$1" compact --strategy "$2" --window 16000 --notes; }

for strategy in rolling lcm snapcompact; do
  ref="$WORK/ref-$strategy.db"
  fresh "$ref"
  compact "$ref" "$strategy" >"$WORK/ref.json" 2>"$WORK/err" || fail "$strategy: uninterrupted compaction"
  expect_eq "$strategy: uninterrupted compacts" "compacted" "$(jq -r .status "$WORK/ref.json")"
  ref_views=$(views "$ref")
  [ -n "$ref_views" ] && ok || fail "$strategy: no view node written"
  ref_bodies=$(bodies "$ref")
  for point in after_start after_summary after_commit; do
    db="$WORK/k.db"
    fresh "$db"
    (CTXFOLD_TEST_CRASH_AT=$point exec "$CTXFOLD" --db "$db" compact --strategy "$strategy" --window 16000 --notes \
      >/dev/null 2>&1) 2>/dev/null
    expect_eq "$strategy $point: killed" "137" "$?"
    compact "$db" "$strategy" >"$WORK/retry.json" 2>"$WORK/err" || fail "$strategy $point: retry: $(head -c 300 "$WORK/err")"
    if [ "$point" != after_commit ]; then
      expect_eq "$strategy $point: retry compacts" "compacted" "$(jq -r .status "$WORK/retry.json")"
      expect_eq "$strategy $point: the ids of an uninterrupted run" "$ref_views" "$(views "$db")"
    else
      # Committed before the kill: the retry has nothing left to do (the notes, written after the
      # commit, are what the kill cost; the next compaction covers them).
      expect_eq "$strategy $point: retry is a no-op" "noop" "$(jq -r .status "$WORK/retry.json")"
      expect_eq "$strategy $point: the committed ids are the uninterrupted run's" \
        "$(count "$ref" "select id from nodes where kind in ('summary','archive') order by seq" | xargs)" \
        "$(count "$db" "select id from nodes where kind in ('summary','archive') order by seq" | xargs)"
    fi
    [ "$point" != after_commit ] && expect_eq "$strategy $point: the same request bodies" "$ref_bodies" "$(bodies "$db")"
    [ "$strategy" = snapcompact ] && expect_eq "$strategy $point: the frames are cached" "$(frames "$ref")" "$(frames "$db")"
    expect_rc "$strategy $point: verify" 0 "$CTXFOLD" --db "$db" verify-invariants
  done
done

# The frame cache heals: rows lost, renders unchanged and read-only, refilled by the next compaction.
db="$WORK/heal.db"
fresh "$db"
compact "$db" snapcompact >/dev/null 2>&1 || fail "heal: compact"
n=$(frames "$db")
[ "$n" -gt 0 ] && ok || fail "heal: no frames cached"
before=$(bodies "$db")
count "$db" "delete from snapcompact_frames where key = (select min(key) from snapcompact_frames)"
expect_eq "heal: one row lost" "$((n - 1))" "$(frames "$db")"
expect_eq "heal: the render draws the missing frame" "$before" "$(bodies "$db")"
expect_eq "heal: the render says a frame was drawn" "false" \
  "$("$CTXFOLD" --db "$db" render --strategy snapcompact | jq '[.frames.frames[].cached] | all')"
expect_eq "heal: read commands do not refill" "$((n - 1))" "$(frames "$db")"
expect_rc "heal: dry run" 0 "$CTXFOLD" --db "$db" compact --strategy snapcompact --window 16000 --dry-run
expect_eq "heal: a dry run does not refill" "$((n - 1))" "$(frames "$db")"
expect_rc "heal: the next compaction" 0 "$CTXFOLD" --db "$db" compact --strategy snapcompact --window 16000
expect_eq "heal: it was a no-op" "noop" "$(jq -r .status "$WORK/out")"
expect_eq "heal: it says it stored the frame" "1" "$(jq -r .frames_cached "$WORK/out")"
expect_eq "heal: the cache is whole again" "$n" "$(frames "$db")"
expect_eq "heal: the render is unchanged" "$before" "$(bodies "$db")"
expect_eq "heal: every frame from the cache" "true" \
  "$("$CTXFOLD" --db "$db" render --strategy snapcompact | jq '[.frames.frames[].cached] | all')"
finish
