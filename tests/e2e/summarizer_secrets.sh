#!/usr/bin/env bash
# Secrets never leave a summarizer (docs/strategies.md "Summarizers and secrets"): a command:
# summarizer that prints an inherited token on stderr and fails, one that puts it in its summary,
# one whose command line holds it, and openai:/anthropic: providers (the loopback fake server)
# whose successful answers echo the API key: stdout, stderr and the database (events, nodes) hold
# "[redacted]" and never the secret.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
command -v python3 >/dev/null || skip "no python3"
token=tok-e2e-SECRET-98765
key=sk-e2e-APIKEY-24680
export CTXFOLD_E2E_SERVICE_TOKEN=$token
db="$WORK/s.db"
gen_session 16 | "$CTXFOLD" --db "$db" --session s append >/dev/null 2>&1
compact=(compact --window 16000 --force)
no_secret() { # no_secret WHAT DB: neither secret in stdout, stderr or the database
  if grep -q -e "$token" -e "$key" "$WORK/out" "$WORK/err"; then fail "$1: a secret was printed"; else ok; fi
  db_dump "$2" >"$WORK/dump.sql"  # a file: grep -q would end a pipe early, and pipefail hide it
  grep -q "summarizer/call" "$WORK/dump.sql" && ok || fail "$1: the dump holds no summarizer call (no dump?)"
  if grep -q -e "$token" -e "$key" "$WORK/dump.sql"; then fail "$1: a secret reached the database"; else ok; fi
}
calls() { count "$1" "select count(*) from events where type='summarizer/call'"; }

db_cp "$db" "$WORK/fail.db"
expect_rc "stderr echo: exit 4" 4 "$CTXFOLD" --db "$WORK/fail.db" "${compact[@]}" \
  --summarizer 'command:cat >/dev/null; echo "denied for $CTXFOLD_E2E_SERVICE_TOKEN" >&2; exit 3'
grep -q "denied for \[redacted\]" "$WORK/err" && ok || fail "stderr echo: the reason is kept, redacted: $(cat "$WORK/err")"
expect_eq "stderr echo: the call is recorded" 1 "$(calls "$WORK/fail.db")"
count "$WORK/fail.db" "select payload from events where type='summarizer/call'" >"$WORK/calls"
grep -q "denied for \[redacted\]" "$WORK/calls" && ok || fail "stderr echo: the recorded failure is redacted"
no_secret "stderr echo" "$WORK/fail.db"

db_cp "$db" "$WORK/ok.db"
expect_rc "stdout echo compacts" 0 "$CTXFOLD" --db "$WORK/ok.db" "${compact[@]}" \
  --summarizer 'command:cat >/dev/null; echo "deployed with $CTXFOLD_E2E_SERVICE_TOKEN and fixed the tests"'
expect_eq "stdout echo status" compacted "$(jq -r .status "$WORK/out")"
sid=$(jq -r .summary_id "$WORK/out")
"$CTXFOLD" --db "$WORK/ok.db" show "$sid" >"$WORK/out" 2>"$WORK/err"
grep -q "deployed with \[redacted\]" "$WORK/out" && ok || fail "stdout echo: the summary is redacted: $(head -c 300 "$WORK/out")"
no_secret "stdout echo" "$WORK/ok.db"
expect_rc "stdout echo verify" 0 "$CTXFOLD" --db "$WORK/ok.db" verify-invariants

db_cp "$db" "$WORK/line.db"
expect_rc "key in the command line: exit 4" 4 "$CTXFOLD" --db "$WORK/line.db" "${compact[@]}" \
  --summarizer "command:cat >/dev/null; echo 'no $token' >&2; exit 1"
no_secret "key in the command line" "$WORK/line.db"

# The providers, on loopback.
start_fake_llm_server
export OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_API_KEY=$key
export ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=$key
export CTXFOLD_HTTP_TIMEOUT_MS=5000 CTXFOLD_HTTP_BACKOFF_MS=10 CTXFOLD_HTTP_RETRIES=1
export NO_PROXY=127.0.0.1 no_proxy=127.0.0.1
for spec in openai:CUE:echo_key anthropic:CUE:echo_key openai:CUE:auth anthropic:CUE:auth; do
  db_cp "$db" "$WORK/h.db"
  "$CTXFOLD" --db "$WORK/h.db" "${compact[@]}" --summarizer "$spec" >"$WORK/out" 2>"$WORK/err"
  expect_eq "$spec: the call is recorded" 1 "$(calls "$WORK/h.db")"
  case $spec in
    *echo_key) expect_eq "$spec compacts" compacted "$(jq -r .status "$WORK/out")"
               count "$WORK/h.db" "select payload from events where type='summarizer/call'" >"$WORK/calls"
               grep -q '\[redacted\]' "$WORK/calls" && ok || fail "$spec: the recorded answer is redacted" ;;
    *) expect_eq "$spec fails" failed "$(jq -r .status "$WORK/out")" ;;
  esac
  no_secret "$spec" "$WORK/h.db"
done
finish
