#!/usr/bin/env bash
# Issue 23: a Claude Code transcript archived by `ctxfold hook claude-code` while it grows (the
# incremental path of `import --from`, call after call while Claude Code writes it) ends up as
# one import of the finished file
# (docs/formats/claude-code.md "Read while it is written"). Each real main transcript is grown
# in place from nothing, line by line for the small ones and in steps plus a few seeded random
# cut points for the big ones, sometimes with half of the next line already written; after each
# PreCompact call every node stored is a node of one import of the finished file (same id, digest and
# predecessor). A SessionEnd call stores the last reply; `import --from` then reads what follows
# it as it is, and the session holds exactly the nodes of one import, renders the same request body
# from HEAD and verifies.
source "$(dirname "$0")/lib.sh"
need_transcripts
T=$CTXFOLD_TRANSCRIPTS/claude-code
RANDOM=23  # the random cut points are the same on every run

# grow FILE STEP: the checks above for one transcript.
grow() {
  local src=$1 step=$2 stem d n i k cuts
  stem=$(basename "$src" .jsonl); d=$WORK/$stem; mkdir -p "$d/p"
  local f=$d/p/$stem.jsonl
  # the sub-agent folder beside it, as Claude Code lays it out (read in place, never copied)
  [ -d "$(dirname "$src")/$stem" ] && ln -s "$(dirname "$src")/$stem" "$d/p/$stem"
  # one import of the finished file at the same path, for the comparisons
  cp "$src" "$f"
  "$CTXFOLD" --db "$d/one.db" import "$f" >/dev/null 2>"$d/err" || fail "$stem: one import: $(head -c 300 "$d/err")"
  # Its nodes as "id digest predecessor" lines, sorted, to compare the growing archive's with.
  local q="SELECT id || ' ' || digest || ' ' || coalesce(predecessor, '-') FROM nodes WHERE session='$stem' ORDER BY id"
  db_sql "$d/one.db" "$q" | LC_ALL=C sort >"$d/one.nodes"
  : >"$f"
  n=$(wc -l <"$src")
  cuts=$(for ((i = step; i < n; i += step)); do echo "$i"; done
         [ "$step" -gt 1 ] && for k in 1 2 3 4 5; do echo $((RANDOM % n + 1)); done
         echo "$n")
  local bad=0 runs=0
  for i in $(echo "$cuts" | sort -n -u); do
    head -n "$i" "$src" >"$d/next"
    # every third cut also has half of the next line written (a line Claude Code is writing)
    if [ $((i % 3)) = 0 ] && [ "$i" -lt "$n" ]; then
      sed -n "$((i + 1))p" "$src" | head -c 200 >>"$d/next"
    fi
    cat "$d/next" >"$f"
    runs=$((runs + 1))
    if ! printf '{"hook_event_name":"PreCompact","session_id":"%s","transcript_path":"%s","cwd":"%s","trigger":"auto"}' \
        "$stem" "$f" "$d" | "$CTXFOLD" --db "$d/inc.db" hook claude-code >"$d/out" 2>"$d/err"; then
      fail "$stem: hook call at line $i: $(head -c 300 "$d/err")"; return
    fi
    k=$(db_sql "$d/inc.db" "$q" | LC_ALL=C sort | LC_ALL=C comm -23 - "$d/one.nodes" | wc -l)
    [ "$k" = 0 ] || { bad=$((bad + 1)); [ "$bad" = 1 ] && fail "$stem: after line $i, $k stored nodes are not nodes of one import"; }
  done
  [ "$bad" = 0 ] && ok
  printf '{"hook_event_name":"SessionEnd","session_id":"%s","transcript_path":"%s","cwd":"%s","reason":"other"}' \
    "$stem" "$f" "$d" | "$CTXFOLD" --db "$d/inc.db" hook claude-code >/dev/null 2>"$d/err" \
    || fail "$stem: SessionEnd hook: $(head -c 300 "$d/err")"
  k=$(db_sql "$d/inc.db" "$q" | LC_ALL=C sort | LC_ALL=C comm -23 - "$d/one.nodes" | wc -l)
  expect_eq "$stem: after SessionEnd, every node one of one import" 0 "$k"
  # What follows the last reply waits for more lines (an unanswered prompt may yet get its
  # attachments); `import --from` by hand reads the file as it is.
  "$CTXFOLD" --db "$d/inc.db" import --from claude-code "$d/p" >/dev/null 2>"$d/err" || fail "$stem: import --from: $(head -c 300 "$d/err")"
  expect_eq "$stem: nodes after $runs runs (count)" "$(db_sql "$d/one.db" "SELECT count(*) FROM nodes WHERE session='$stem'")" \
    "$(db_sql "$d/inc.db" "SELECT count(*) FROM nodes WHERE session='$stem'")"
  expect_eq "$stem: the same nodes as one import" "" "$(diff <(db_sql "$d/one.db" "$q") <(db_sql "$d/inc.db" "$q") | head -3)"
  "$CTXFOLD" --db "$d/one.db" --session "$stem" render --format anthropic --body >"$d/one.body" 2>&1
  "$CTXFOLD" --db "$d/inc.db" --session "$stem" render --format anthropic --body >"$d/inc.body" 2>&1
  if cmp -s "$d/one.body" "$d/inc.body"; then ok; else fail "$stem: render --body of HEAD differs from one import"; fi
  expect_rc "$stem: verify-invariants" 0 "$CTXFOLD" --db "$d/inc.db" verify-invariants --all-sessions
  rm -rf "$d"
}

while read -r rel step; do
  [ -f "$T/$rel" ] || { fail "missing transcript $rel"; continue; }
  grow "$T/$rel" "$step"
done <<'EOF'
v2.1.11_image_in_tool_result_EXCERPT.jsonl 1
v2.1.38_short_parallel_tool_rejection.jsonl 1
v2.1.38_tool_heavy_websearch_queue.jsonl 1
images_resume_branch_v2.1.22-2.1.29/47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c.jsonl 1
inline_sidechains_v1.0.98/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl 1
async_agents_api_errors_v2.1.15/0ccf1a04-1b4c-43b6-8aa5-79e41db43a68.jsonl 3
inline_sidechains_v1.0.98/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl 22
compaction_manual_v2.1.39_TRUNCATED/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl 120
auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl 120
EOF
finish
