#!/usr/bin/env bash
# compact with openai:/anthropic: summarizers against the loopback fake provider
# (tests/fixtures/fake_llm_server.py). The model name carries the server's cue ("CUE:hang"), so a
# real session can be driven into every failure: each one exits 4, says why, never prints the
# API key, and leaves a database that verifies clean and renders exactly as before. Then both
# providers compact for real (the rate-limited one after honouring Retry-After).
source "$(dirname "$0")/lib.sh"
need_transcripts
command -v python3 >/dev/null || skip "no python3"
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
s=fa812bfe-b295-4cca-9c2f-fdf01028cb46
db="$WORK/a.db"

start_fake_llm_server

key=sk-test-SECRET123
export OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_API_KEY=$key
export ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=$key
export CTXFOLD_HTTP_TIMEOUT_MS=1000 CTXFOLD_HTTP_BACKOFF_MS=10 CTXFOLD_HTTP_RETRIES=2
export NO_PROXY=127.0.0.1 no_proxy=127.0.0.1
compact=(compact --window 30000 --tail-percent 10 --force)

expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$f"
"$CTXFOLD" --db "$db" --session "$s" render >"$WORK/before.json"

for spec in openai:CUE:hang anthropic:CUE:hang openai:CUE:context_length anthropic:CUE:context_length \
            openai:CUE:malformed anthropic:CUE:malformed openai:CUE:empty anthropic:CUE:empty \
            openai:CUE:error500 anthropic:CUE:error500 openai:CUE:auth anthropic:CUE:auth \
            openai:CUE:bigger anthropic:CUE:bigger; do
  expect_rc "$spec exits 4" 4 "$CTXFOLD" --db "$db" --session "$s" "${compact[@]}" --summarizer "$spec"
  expect_eq "$spec status" failed "$(jq -r .status "$WORK/out")"
  if grep -q "$key" "$WORK/out" "$WORK/err"; then fail "$spec: the API key was printed"; else ok; fi
  expect_rc "$spec verify" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
  "$CTXFOLD" --db "$db" --session "$s" render >"$WORK/after.json"
  if cmp -s "$WORK/before.json" "$WORK/after.json"; then ok; else fail "$spec: render changed after a failure"; fi
done
db_dump "$db" >"$WORK/dump.sql"  # not a pipe: grep -q ends it early, and pipefail reads that as no match
if grep -q "$key" "$WORK/dump.sql"; then fail "the API key reached the database"; else ok; fi

for spec in anthropic:CUE:rate_limit openai:gpt-4o-mini; do
  db_cp "$db" "$WORK/ok.db"
  expect_rc "$spec compacts" 0 "$CTXFOLD" --db "$WORK/ok.db" --session "$s" "${compact[@]}" --summarizer "$spec"
  expect_eq "$spec status" compacted "$(jq -r .status "$WORK/out")"
  sid=$(jq -r .summary_id "$WORK/out")
  expect_rc "$spec verify" 0 "$CTXFOLD" --db "$WORK/ok.db" verify-invariants --all-sessions
  db_dump "$WORK/ok.db" >"$WORK/dump.sql"
  grep -q "summarizer/call" "$WORK/dump.sql" && ok || fail "$spec: the dump holds no summarizer call (no dump?)"
  if grep -q "$key" "$WORK/dump.sql"; then fail "$spec: the API key reached the database"; else ok; fi
  # Replayable summaries (issue 11 part 4): every call is recorded; replay reproduces the summary
  # byte for byte offline, exports the answers, and replay:DIR re-runs the compaction with no network.
  expect_rc "$spec replay" 0 "$CTXFOLD" --db "$WORK/ok.db" replay "$sid" --export "$WORK/rec-$spec"
  expect_eq "$spec replay identical" "true" "$(jq .identical "$WORK/out")"
  expect_eq "$spec stored content" "$("$CTXFOLD" --db "$WORK/ok.db" show "$sid" | jq -c '.node.content[0].text')" "$(jq -c .content "$WORK/out")"
  expect_eq "$spec calls recorded" "true" "$(jq '.calls | length > 0 and all(.answered)' "$WORK/out")"
  db_cp "$db" "$WORK/again.db"
  OPENAI_BASE_URL=http://127.0.0.1:9/v1 ANTHROPIC_BASE_URL=http://127.0.0.1:9 \
    expect_rc "$spec compaction replayed offline" 0 "$CTXFOLD" --db "$WORK/again.db" --session "$s" "${compact[@]}" --summarizer "replay:$WORK/rec-$spec"
  sid2=$(jq -r .summary_id "$WORK/out")
  expect_eq "$spec replay:DIR gives the same summary text" \
    "$("$CTXFOLD" --db "$WORK/ok.db" show "$sid" | jq -c '.node.content')" \
    "$("$CTXFOLD" --db "$WORK/again.db" show "$sid2" | jq -c '.node.content')"
  # A recorded request that no longer hashes to its digest: replay refuses and says why.
  db_tamper "$WORK/ok.db" "UPDATE events SET payload = replace(payload, '\"transcript\":\"', '\"transcript\":\"edited ') WHERE type = 'summarizer/call';"
  expect_rc "$spec tampered replay refused" 3 "$CTXFOLD" --db "$WORK/ok.db" replay "$sid"
  expect_eq "$spec says digest" "1" "$(grep -c 'no longer hashes' "$WORK/err")"
done
db_cp "$db" "$WORK/miss.db"; mkdir -p "$WORK/empty"
expect_rc "replay:DIR without an answer" 4 "$CTXFOLD" --db "$WORK/miss.db" --session "$s" "${compact[@]}" --summarizer "replay:$WORK/empty"
expect_eq "names the missing answer" "1" "$(grep -c 'no recorded answer' "$WORK/err")"
finish
