#!/usr/bin/env bash
# compact at scale (docs/strategies.md "Summarizer calls at scale"): a generated history whose
# eviction needs more than 64 extractive calls (the cap that once stopped it partial, exit 4)
# compacts in one run, exit 0, and verifies clean; so do lcm and snapcompact on the same history.
# --dry-run states the calls and input tokens first; a cap set by the user gives a partial result,
# exit 5, with "remaining". Small summarizer chunks (--summarizer-window) keep the history small.
source "$(dirname "$0")/lib.sh"

import_generated 1e4
db_cp "$db" "$WORK/lcm.db"
db_cp "$db" "$WORK/snap.db"
db_cp "$db" "$WORK/cap.db"
flags=(--window 20000 --force --summarizer-window 12000)

# The plan states what the compaction will spend before spending it.
expect_rc "dry run" 0 "$CTXFOLD" --db "$db" --session "$session" compact "${flags[@]}" --dry-run
cp "$WORK/out" "$WORK/plan.json"
planned=$(jq .plan.summarizer.calls "$WORK/plan.json")
expect_eq "the plan needs more than 64 calls" "true" "$(jq '.plan.summarizer.calls > 64' "$WORK/plan.json")"
expect_eq "the plan states input tokens" "true" "$(jq '.plan.summarizer.input_tokens > .plan.evicted_tokens / 2' "$WORK/plan.json")"
expect_eq "no cap for the extractive summarizer" "null true" \
  "$(jq -r '"\(.plan.summarizer.call_cap) \(.plan.summarizer.within_cap)"' "$WORK/plan.json")"
expect_eq "the reason says the calls" "true" "$(jq '.reason | test("summarizer calls")' "$WORK/plan.json")"

# rolling: one run, every evicted unit summarized.
expect_rc "rolling compact" 0 "$CTXFOLD" --db "$db" --session "$session" compact "${flags[@]}"
cp "$WORK/out" "$WORK/c.json"
expect_eq "rolling status" "compacted false null" "$(jq -r '"\(.status) \(.partial) \(.remaining)"' "$WORK/c.json")"
calls=$(jq .summarizer.calls "$WORK/c.json")
expect_eq "more than 64 calls, within the plan" "true" "$([ "$calls" -gt 64 ] && [ "$calls" -le "$planned" ] && echo true)"
expect_eq "the render fits the window" "true" "$(jq '.tokens_after.value < 20000' "$WORK/c.json")"
expect_rc "rolling verifies clean" 0 "$CTXFOLD" --db "$db" verify-invariants

# lcm and snapcompact on the same history.
expect_rc "lcm compact" 0 "$CTXFOLD" --db "$WORK/lcm.db" --session "$session" compact --strategy lcm "${flags[@]}"
expect_eq "lcm status" "compacted false" "$(jq -r '"\(.status) \(.partial)"' "$WORK/out")"
expect_rc "lcm verifies clean" 0 "$CTXFOLD" --db "$WORK/lcm.db" verify-invariants
expect_rc "snapcompact compact" 0 "$CTXFOLD" --db "$WORK/snap.db" --session "$session" compact --strategy snapcompact \
  "${flags[@]}"
expect_eq "snapcompact status" "compacted false" "$(jq -r '"\(.status) \(.partial)"' "$WORK/out")"
expect_rc "snapcompact verifies clean" 0 "$CTXFOLD" --db "$WORK/snap.db" verify-invariants

# A cap the user sets: committed, partial, exit 5 (not 4: nothing failed), and what remains.
expect_rc "capped compact exits 5" 5 "$CTXFOLD" --db "$WORK/cap.db" --session "$session" compact "${flags[@]}" \
  --max-calls 5
cp "$WORK/out" "$WORK/cap.json"
expect_eq "capped status" "compacted true summarizer.calls" "$(jq -r '"\(.status) \(.partial) \(.error)"' "$WORK/cap.json")"
expect_eq "capped calls" "true" "$(jq '.summarizer.calls <= 5' "$WORK/cap.json")"
expect_eq "remaining units" "true" "$(jq '.remaining.units > 0 and .remaining.tokens > 0' "$WORK/cap.json")"
expect_eq "the capped plan says so" "false" \
  "$("$CTXFOLD" --db "$WORK/cap.db" --session "$session" compact "${flags[@]}" --max-calls 5 --dry-run | jq .plan.summarizer.within_cap)"
expect_rc "capped verifies clean" 0 "$CTXFOLD" --db "$WORK/cap.db" verify-invariants
expect_rc "the next run finishes" 0 "$CTXFOLD" --db "$WORK/cap.db" --session "$session" compact "${flags[@]}"
expect_rc "bad --max-calls" 2 "$CTXFOLD" --db "$WORK/cap.db" compact "${flags[@]}" --max-calls 0
finish
