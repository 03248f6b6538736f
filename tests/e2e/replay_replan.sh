#!/usr/bin/env bash
# Issue 11 part 4, re-planned replay: `ctxfold replay` re-plans a rolling compaction from the
# ledger state before its summary (the same covered range selected again at its compact/start
# boundary, the same chunked summarizer requests issued again, answered by the recorded
# responses) and compares the covered ids, the input digest and the summary bytes. On a copy of the
# real auto-compaction session: a 5-chunk compaction, then a second one merging the first, both
# reproduce; a compaction whose recorded start boundary was rewritten is refused with the reason;
# a rewritten answer gives a different text (exit 1); a region summary re-plans as well.
source "$(dirname "$0")/lib.sh"
need_transcripts
s=fa812bfe-b295-4cca-9c2f-fdf01028cb46
cp "$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/$s.jsonl" "$WORK/"
db="$WORK/a.db"
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$WORK/$s.jsonl"
compact=(--db "$db" --session $s compact --window 12000 --tail-percent 10 --force --summarizer-window 12000)
expect_rc "compact" 0 "$CTXFOLD" "${compact[@]}"
sid1=$(jq -r .summary_id "$WORK/out")
calls1=$(jq .summarizer.calls "$WORK/out")
expect_eq "several chunks" true "$([ "$calls1" -ge 2 ] && echo true || echo false)"
expect_rc "replay 1" 0 "$CTXFOLD" --db "$db" replay "$sid1"
expect_eq "replay 1 re-planned" true "$(jq .replanned "$WORK/out")"
expect_eq "replay 1 identical" true "$(jq .identical "$WORK/out")"
expect_eq "replay 1 issued every request again" "$calls1" "$(jq .replan_calls "$WORK/out")"
expect_eq "replay 1 content is the stored text" "$("$CTXFOLD" --db "$db" show "$sid1" | jq -c '.node.content[0].text')" \
  "$(jq -c .content "$WORK/out")"

# A later compaction merges the first summary; both still re-plan (each at its own boundary).
for i in $(seq 1 8); do
  jq -cn --arg i "$i" --arg pad "$(printf 'word %.0s' $(seq 1 600))" '{role:"user", content:("more work " + $i + " " + $pad)}'
done | "$CTXFOLD" --db "$db" --session $s append >/dev/null || fail "append"
expect_rc "compact 2" 0 "$CTXFOLD" "${compact[@]}"
sid2=$(jq -r .summary_id "$WORK/out")
expect_eq "a second summary" true "$([ "$sid2" != "$sid1" ] && [ "$sid2" != null ] && echo true || echo false)"
expect_rc "replay 2" 0 "$CTXFOLD" --db "$db" replay "$sid2"
expect_eq "replay 2 identical" true "$(jq '.identical and .replanned' "$WORK/out")"
expect_rc "replay 1 after the second compaction" 0 "$CTXFOLD" --db "$db" replay "$sid1"
expect_eq "replay 1 still identical" true "$(jq '.identical and .replanned' "$WORK/out")"
expect_rc "replay --text" 0 "$CTXFOLD" --db "$db" --text replay "$sid2"
grep -q "re-planned from the ledger" "$WORK/out" && ok || fail "text names the re-plan: $(cat "$WORK/out")"

# The second compaction's start boundary rewritten to the first's: the re-plan issues requests
# that were never recorded, and replay refuses (exit 3) saying so. Nothing else is touched.
db_cp "$db" "$WORK/t.db"
c1=$("$CTXFOLD" --db "$db" show "$sid1" | jq -r .node.metadata.compaction)
c2=$("$CTXFOLD" --db "$db" show "$sid2" | jq -r .node.metadata.compaction)
db_tamper "$WORK/t.db" "UPDATE events SET payload = $(sql_json_set payload boundary_seq \
    "CAST((SELECT json_extract(payload, '\$.boundary_seq') FROM events WHERE type = 'compact/start' AND ref = '$c1') AS INTEGER)")
  WHERE type = 'compact/start' AND ref = '$c2';" >/dev/null || fail "tamper boundary"
expect_rc "re-plan mismatch refused" 3 "$CTXFOLD" --db "$WORK/t.db" replay "$sid2"
grep -q "does not reproduce its recorded requests" "$WORK/err" && grep -q "not among the recorded calls" "$WORK/err" && ok \
  || fail "the refusal says why: $(cat "$WORK/err")"
expect_eq "nothing printed on refusal" 0 "$(wc -c <"$WORK/out")"

# A rewritten recorded answer, its request still matching its digest: an earlier chunk's answer
# is carried into the next request, so the re-plan asks something never recorded (refused, 3);
# the last answer is the summary itself, so the text differs (exit 1).
tamper_answer() {  # tamper_answer DB INDEX
  db_tamper "$1" "UPDATE events SET payload = $(sql_json_set payload response.text "CAST('## User requests
- something else entirely' AS TEXT)") WHERE type = 'summarizer/call' AND json_extract(payload, '\$.compaction') = '$c1'
    AND CAST(json_extract(payload, '\$.index') AS INTEGER) = $2;" >/dev/null || fail "tamper answer $2"
}
db_cp "$db" "$WORK/u.db"; tamper_answer "$WORK/u.db" 0
expect_rc "an earlier answer rewritten: refused" 3 "$CTXFOLD" --db "$WORK/u.db" replay "$sid1"
grep -q "not among the recorded calls" "$WORK/err" && ok || fail "says why: $(cat "$WORK/err")"
db_cp "$db" "$WORK/v.db"; tamper_answer "$WORK/v.db" $((calls1 - 1))
expect_rc "the last answer rewritten: differs" 1 "$CTXFOLD" --db "$WORK/v.db" replay "$sid1"
expect_eq "identical false" false "$(jq .identical "$WORK/out")"
# A region summary (compact --from/--to) is re-planned too: the recorded segment selected again at
# its boundary (a fresh import: the session's long last turn of tool steps).
expect_rc "verify" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
db="$WORK/g.db"
expect_rc "import again" 0 "$CTXFOLD" --db "$db" import "$WORK/$s.jsonl"
"$CTXFOLD" --db "$db" --session $s render >"$WORK/now.json"
from=$(jq -r '[.messages[] | select(.role=="assistant")][1].ids[0]' "$WORK/now.json")
to=$(jq -r '[.messages[] | select(.kind=="tool_results")][4].ids[-1]' "$WORK/now.json")
expect_rc "region" 0 "$CTXFOLD" --db "$db" --session $s compact --from "$from" --to "$to" --summarizer-window 4000
rid=$(jq -r .summary_id "$WORK/out")
expect_rc "replay region" 0 "$CTXFOLD" --db "$db" replay "$rid"
expect_eq "region re-planned and identical" '"region" true' "$(jq -c '.replan_pass, .identical' "$WORK/out" | paste -sd' ')"
expect_rc "verify" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
finish
