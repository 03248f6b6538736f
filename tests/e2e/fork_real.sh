#!/usr/bin/env bash
# Issue 5 "Done when", over the real transcripts with a branch or a compaction: a fork at a
# mid-session node (and at every branch point's children, and inside a summary's coverage)
# renders the same provider messages as `render --head` of that node in the source, holds none
# of the sibling branches, leaves the source's bytes of render and snapshot unchanged, and
# verifies clean.
source "$(dirname "$0")/lib.sh"
need_transcripts
C="$CTXFOLD_TRANSCRIPTS/claude-code"
files=(
  "$C/images_resume_branch_v2.1.22-2.1.29/47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c.jsonl"
  "$C/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
  "$C/compaction_manual_v2.1.39_TRUNCATED/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
)
n=0
for f in "${files[@]}"; do
  [ -f "$f" ] || { echo "SKIP: no $f" >&2; continue; }
  n=$((n+1))
  db="$WORK/f$n.db"
  cf() { "$CTXFOLD" --db "$db" "$@"; }
  expect_rc "import $(basename "$f")" 0 cf import "$f"
  S=$(basename "$f" .jsonl)
  cf --session "$S" snapshot >"$WORK/snap.json"
  cf --session "$S" render --format openai >"$WORK/src.json"
  # Fork points: the middle of HEAD's spine, every child of a branch point, the middle of the
  # first summary's coverage.
  mapfile -t spine < <(cf --session "$S" log | jq -r 'select(.type=="node") | .id' | tac)
  points=("${spine[$(( ${#spine[@]} / 2 ))]}")
  mapfile -t -O ${#points[@]} points < <(db_sql "$db" \
    "SELECT n.id FROM nodes n WHERE n.session='$S' AND n.kind IN ('message','event') AND n.predecessor IN
       (SELECT predecessor FROM nodes WHERE session='$S' AND kind IN ('message','event') AND predecessor IS NOT NULL
        GROUP BY predecessor HAVING count(*) > 1) ORDER BY n.seq LIMIT 6")
  inside=$(db_sql "$db" "SELECT c.node_id FROM covers c JOIN nodes n ON n.seq=c.summary_seq WHERE n.session='$S'
                          ORDER BY c.summary_seq, c.pos LIMIT 1 OFFSET 5")
  [ -n "$inside" ] && points+=("$inside")
  for at in "${points[@]}"; do
    [ -n "$at" ] || continue
    expect_rc "fork $S at $at" 0 cf --session "$S" fork --at "$at"
    cp "$WORK/out" "$WORK/fork.json"
    F=$(jq -r .session "$WORK/fork.json")
    cf --session "$S" render --format openai --head "$at" | jq -c .messages >"$WORK/want"
    # Quoted node ids (the rolling recap) are the fork's: read them back as the source's.
    cf --session "$F" render --format openai | jq -c .messages | sed "s/$F://g" >"$WORK/got"
    if cmp -s "$WORK/want" "$WORK/got"; then ok; else fail "fork at $at renders differently from render --head"; fi
    # Every copied chain node comes from the path root→at.
    cf --session "$S" log --head "$at" | jq -r 'select(.type=="node") | .id' | sort >"$WORK/path"
    db_sql "$db" "SELECT json_extract(metadata,'\$.forked_from.id') FROM nodes WHERE session='$F'
                   AND kind IN ('message','event')" | sort >"$WORK/copied"
    expect_eq "fork at $at holds exactly the path" "" "$(comm -13 "$WORK/path" "$WORK/copied" | head -3)"
    expect_eq "fork at $at holds the whole path" "" "$(comm -23 "$WORK/path" "$WORK/copied" | head -3)"
  done
  cf --session "$S" render --format openai >"$WORK/src2.json"
  if cmp -s "$WORK/src.json" "$WORK/src2.json"; then ok; else fail "forks changed the source's render"; fi
  expect_eq "forks leave the source's snapshot digest" "$(jq -r .digest "$WORK/snap.json")" \
    "$(cf --session "$S" snapshot | jq -r .digest)"
  expect_rc "verify $S with its forks" 0 cf verify-invariants --all-sessions
done
finish
