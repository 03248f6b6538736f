#!/usr/bin/env bash
# The scenario suite on a real imported database (issue 5): chat → fork → checkout → compact → chat
# → compact → chat → a new process renders, checking HEAD and the rendered bytes after every step; a
# retry from inside a covered range renders raw (branch isolation); HEAD moving to branch B while a
# compaction of A is running (B's render is unchanged), and a new process rendering the compacted
# session byte-identically (docs/strategies.md "Hard cases"); snapshots read back with --as-of;
# rewind; bad input. Compaction steps are skipped, with a message, when this binary has no
# `compact`.
source "$(dirname "$0")/lib.sh"
need_transcripts
f="$CTXFOLD_TRANSCRIPTS/claude-code/images_resume_branch_v2.1.22-2.1.29/47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c.jsonl"
[ -f "$f" ] || skip "no $f"
db="$WORK/s.db"
S=47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c
cf() { "$CTXFOLD" --db "$db" "$@"; }
HAVE_COMPACT=0
"$CTXFOLD" --help 2>/dev/null | grep -qE '^ +compact' && HAVE_COMPACT=1
[ "$HAVE_COMPACT" = 1 ] || echo "NOTE: this ctxfold has no 'compact': compaction steps are skipped" >&2

head_of() { cf --session "${1:-$S}" snapshot | jq -r .head; }
# render_to FILE [render args...]: the session's openai render document.
render_to() { local out=$1; shift; cf --session "$S" render --format openai "$@" >"$out" 2>"$WORK/render.err" || fail "render $*: $(head -c 300 "$WORK/render.err")"; }
same_bytes() { # same_bytes WHAT A B
  if cmp -s "$2" "$3"; then ok; else fail "$1: $2 and $3 differ"; diff <(jq . "$2") <(jq . "$3") | head -20 >&2; fi
}
# chat NAME: one user turn and one assistant answer, appended where HEAD is (the harness path).
chat() {
  local words
  words=$(printf 'word%s ' $(seq 1 250))
  jq -nc --arg s "$S" --arg id "$1" --arg w "$words" \
    '{session:$s, id:($id+"-u"), role:"user", content:("please look at " + $id + " " + $w)},
     {session:$s, id:($id+"-a"), role:"assistant", content:("done with " + $id + " " + $w)}' \
    | cf append >"$WORK/append.out" 2>"$WORK/append.err" || fail "append $1: $(cat "$WORK/append.err")"
}
compact() { # compact [extra args]: force a rolling compaction of HEAD's branch
  cf --session "$S" compact --force --window "${WINDOW:-3000}" "$@" >"$WORK/compact.out" 2>"$WORK/compact.err"
}
db_sum() { sha256sum "$db" | cut -d' ' -f1; }

# 0. import
expect_rc "import" 0 cf import "$f"
H0=$(head_of)
expect_eq "import sets HEAD" "cb89eb5b-b63e-4b86-8801-795b1d033311" "$H0"
render_to "$WORK/r0.json"
render_to "$WORK/r0b.json"
same_bytes "two renders of the same state" "$WORK/r0.json" "$WORK/r0b.json"

# 1. chat
chat t1
expect_eq "chat extends HEAD" "t1-a" "$(head_of)"
render_to "$WORK/r1.json"
expect_eq "chat keeps the rendered prefix" "$(jq -c '.messages' "$WORK/r0.json")" \
  "$(jq -c '.messages[0:-2]' "$WORK/r1.json")"
cf --session "$S" snapshot >"$WORK/snap1.json"
expect_eq "snapshot names HEAD" "t1-a" "$(jq -r .head "$WORK/snap1.json")"

# 2. fork at a mid-session node of HEAD's spine
AT=583af010-fb3f-4e85-918d-58a500007682
cf --session "$S" render --format openai --head "$AT" >"$WORK/at.json"
expect_rc "fork" 0 cf --session "$S" fork --at "$AT" --name F1
cp "$WORK/out" "$WORK/fork.json"
expect_eq "fork head" "F1:$AT" "$(jq -r .head "$WORK/fork.json")"
expect_eq "fork leaves the source HEAD" "t1-a" "$(head_of)"
render_to "$WORK/r2.json"
same_bytes "fork leaves the source render" "$WORK/r1.json" "$WORK/r2.json"
expect_eq "fork HEAD" "F1:$AT" "$(head_of F1)"
cf --session F1 render --format openai >"$WORK/f1.json"
expect_eq "fork renders as the source at the fork point" "$(jq -c .messages "$WORK/at.json")" "$(jq -c .messages "$WORK/f1.json" | sed 's/F1://g')"
# The sibling branch (a9f65f98 → 95ba8fb4) and the later chat did not come along.
expect_eq "fork holds only the path" 0 \
  "$(cf --session F1 log | jq -s '[.[] | select(.type=="node") | .id | select(test("95ba8fb4|a9f65f98|t1-"))] | length')"
expect_rc "verify after fork" 0 cf verify-invariants --all-sessions

# 3. checkout the sibling branch and back
B=95ba8fb4-5bc8-489e-a639-1788836a15d0
render_to "$WORK/b_before.json" --head "$B"
expect_rc "checkout B" 0 cf --session "$S" checkout "$B"
expect_eq "checkout moves HEAD" "$B" "$(head_of)"
render_to "$WORK/r3b.json"
same_bytes "render at B equals render --head B" "$WORK/b_before.json" "$WORK/r3b.json"
expect_rc "checkout back" 0 cf --session "$S" checkout t1-a
render_to "$WORK/r3.json"
same_bytes "back on the main branch renders as before" "$WORK/r1.json" "$WORK/r3.json"

if [ "$HAVE_COMPACT" = 1 ]; then
  # 4. compact, then a new process renders the same bytes
  chat t2
  chat t3
  render_to "$WORK/r4pre.json"
  if compact; then ok; else fail "compact: $(cat "$WORK/compact.err")"; fi
  SUM1=$(jq -r '.summary_id // empty' "$WORK/compact.out")
  [ -n "$SUM1" ] && ok || fail "compact wrote no summary: $(cat "$WORK/compact.out")"
  expect_eq "compaction never moves HEAD" "t3-a" "$(head_of)"
  render_to "$WORK/r4.json"
  expect_eq "the summary is rendered" "$SUM1" "$(jq -r .summary "$WORK/r4.json")"
  # Covered nodes are not rendered raw (the recap may quote covered user messages).
  expect_eq "covered nodes are not rendered raw" 0 "$(jq --argjson c "$(cf show "$SUM1" | jq '.node.covers_ids')" \
    '[.sections[] | select(.kind != "summary" and .kind != "recap") | .ids[] | select(. as $r | $c | index($r))] | length' "$WORK/r4.json")"
  render_to "$WORK/r4c.json"
  same_bytes "a new process renders the compacted session byte-identically" "$WORK/r4.json" "$WORK/r4c.json"
  render_to "$WORK/b4.json" --head "$B"
  same_bytes "the sibling branch renders raw, unchanged by the compaction" "$WORK/b_before.json" "$WORK/b4.json"
  cf --session F1 render --format openai >"$WORK/f1b.json"
  same_bytes "the source's compaction leaves the fork's render" "$WORK/f1.json" "$WORK/f1b.json"

  # 5. chat → compact → chat
  chat t4
  expect_eq "chat after compaction extends HEAD" "t4-a" "$(head_of)"
  render_to "$WORK/r5.json"
  expect_eq "chat after compaction keeps the rendered prefix" "$(jq -c '.messages' "$WORK/r4.json")" \
    "$(jq -c '.messages[0:-2]' "$WORK/r5.json")"
  chat t5
  if compact; then ok; else fail "second compact: $(cat "$WORK/compact.err")"; fi
  SUM2=$(jq -r '.summary_id // empty' "$WORK/compact.out")
  expect_eq "second compaction never moves HEAD" "t5-a" "$(head_of)"
  render_to "$WORK/r6.json"
  [ -n "$SUM2" ] && expect_eq "the second summary is rendered" "$SUM2" "$(jq -r .summary "$WORK/r6.json")"
  chat t6
  expect_eq "chat after the second compaction" "t6-a" "$(head_of)"
  render_to "$WORK/r7.json"
  render_to "$WORK/r7b.json"
  same_bytes "a new process renders the final state byte-identically" "$WORK/r7.json" "$WORK/r7b.json"

  # 6. a retry from inside the covered range renders raw and never inherits the summary
  COVERED=$(cf show "${SUM2:-$SUM1}" | jq -r '.node.covers_ids[2]')
  jq -nc --arg s "$S" --arg p "$COVERED" '{session:$s, id:"retry-u", predecessor:$p, role:"user", content:"try that again differently"}' \
    | cf append >/dev/null
  expect_eq "a side-branch append leaves HEAD" "t6-a" "$(head_of)"
  render_to "$WORK/r8.json"
  same_bytes "a side-branch append leaves HEAD's render" "$WORK/r7.json" "$WORK/r8.json"
  expect_rc "checkout the retry" 0 cf --session "$S" checkout retry-u
  render_to "$WORK/retry.json"
  expect_eq "the retry branch renders raw" "null" "$(jq -r .summary "$WORK/retry.json")"
  expect_eq "the retry branch reads the covered turns it holds" "true" \
    "$(jq --arg p "$COVERED" '.reads | index($p) != null' "$WORK/retry.json")"
  # fork at a node inside the coverage: the raw path, the summary omitted
  expect_rc "fork inside coverage" 0 cf --session "$S" fork --at "$COVERED" --name F2
  expect_eq "crossing summary omitted" "true" \
    "$(jq --arg s "${SUM2:-$SUM1}" '[.omitted_summaries[].id] | index($s) != null' "$WORK/out")"
  expect_eq "fork inside coverage renders raw" "null" "$(cf --session F2 render | jq -r .summary)"
  expect_rc "checkout back to t6-a" 0 cf --session "$S" checkout t6-a
  render_to "$WORK/r9.json"
  same_bytes "back on the compacted branch" "$WORK/r7.json" "$WORK/r9.json"

  # 7. a compaction of A runs while HEAD moves to B; B's render is unchanged, HEAD stays on B
  render_to "$WORK/race_b.json" --head "$B"
  SNAP_BEFORE=$(cf --session "$S" snapshot | jq -r .boundary_seq)
  mover="$WORK/mover.sh"
  cat >"$mover" <<EOF
#!/bin/sh
cat >/dev/null
"$CTXFOLD" --db "$db" --session "$S" checkout "$B" >/dev/null 2>&1
echo "short summary of the earlier turns"
EOF
  chmod +x "$mover"
  chat t7
  compact --summarizer "command:$mover"
  race_rc=$?
  echo "race: compaction status $(jq -r .status "$WORK/compact.out" 2>/dev/null) ($(jq -c "{reason, error}" "$WORK/compact.out" 2>/dev/null)), exit $race_rc" >&2
  expect_eq "race: HEAD stays where the user moved it" "$B" "$(head_of)"
  status=$(jq -r '.status // empty' "$WORK/compact.out" 2>/dev/null)
  case "$status:$race_rc" in
    failed:4 | compacted:0) ok ;;
    *) fail "race: compaction status '$status' exit $race_rc: $(head -c 300 "$WORK/compact.err")" ;;
  esac
  render_to "$WORK/race_after.json"
  same_bytes "race: B's render is unchanged" "$WORK/race_b.json" "$WORK/race_after.json"
  cf --session "$S" checkout t7-a >/dev/null
fi

# 8. --as-of: the snapshot of step 1 reads back byte for byte after everything since
cf --session "$S" render --format openai --as-of "$(jq .boundary_seq "$WORK/snap1.json")" >"$WORK/asof.json"
same_bytes "render --as-of the step-1 boundary equals the step-1 render" "$WORK/r1.json" "$WORK/asof.json"
cf --session "$S" render --format openai --as-of - <"$WORK/snap1.json" >"$WORK/asof2.json"
same_bytes "render --as-of - (a piped snapshot)" "$WORK/r1.json" "$WORK/asof2.json"
expect_eq "snapshot --as-of gives the same digest" "$(jq -r .digest "$WORK/snap1.json")" \
  "$(cf --session "$S" snapshot --as-of "$(jq .boundary_seq "$WORK/snap1.json")" | jq -r .digest)"
expect_eq "sessions --as-of lists what existed" "$S" \
  "$(cf sessions --as-of "$(jq .boundary_seq "$WORK/snap1.json")" | jq -rs 'map(select(.type=="session") | .id) | join(",")')"

# 9. rewind
H=$(head_of)
expect_rc "rewind 2" 0 cf --session "$S" rewind 2
cp "$WORK/out" "$WORK/rewind.json"
R=$(jq -r .head "$WORK/rewind.json")
expect_eq "rewind reports the previous HEAD" "$H" "$(jq -r .previous "$WORK/rewind.json")"
expect_eq "rewind moves HEAD" "$R" "$(head_of)"
render_to "$WORK/rw.json"
render_to "$WORK/rw_head.json" --head "$R"
same_bytes "render after rewind equals render --head" "$WORK/rw_head.json" "$WORK/rw.json"
expect_rc "rewind --to a node off the spine" 3 cf --session "$S" rewind --to "$B"
expect_rc "rewind --to back is not possible (a descendant)" 3 cf --session "$S" rewind --to "$H"
expect_rc "checkout back" 0 cf --session "$S" checkout "$H"

# 10. bad input changes nothing
before=$(db_sum)
expect_rc "fork at an unknown id" 3 cf --session "$S" fork --at no-such-node
expect_rc "fork at a node of another session" 2 cf --session F1 fork --at "$B"
expect_rc "fork --name reuse" 3 cf --session "$S" fork --at "$AT" --name F1
expect_rc "--as-of beyond the boundary" 3 cf --session "$S" render --as-of 999999
expect_rc "--as-of before the session began" 3 cf --session F1 render --as-of 1
expect_rc "snapshot --as-of beyond the boundary" 3 cf --session "$S" snapshot --as-of 999999
expect_rc "--as-of not a number" 2 cf --session "$S" render --as-of yesterday
expect_rc "checkout a node of another session" 3 cf --session F1 checkout "$B"
expect_eq "bad input wrote nothing" "$before" "$(db_sum)"

# 11. the record proves who moved HEAD: no compaction, load or read ever did
expect_eq "HEAD moves have only user-facing causes" "" \
  "$(db_sql "$db" "SELECT DISTINCT cause FROM head_moves WHERE cause NOT IN ('import','append','checkout','rewind','fork')")"
expect_eq "every rewind is recorded" 1 "$(db_sql "$db" "SELECT count(*) FROM head_moves WHERE cause='rewind'")"
expect_eq "every fork's HEAD is recorded with cause fork" "$(db_sql "$db" "SELECT count(*) FROM sessions WHERE kind='fork'")" \
  "$(db_sql "$db" "SELECT count(*) FROM head_moves WHERE cause='fork'")"
expect_rc "verify at the end" 0 cf verify-invariants --all-sessions
finish
