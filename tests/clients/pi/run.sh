#!/usr/bin/env bash
# pi conformance: drives the real pi coding agent (@mariozechner/pi-coding-agent) against the
# loopback mock speaking OpenAI Chat Completions (mock/chat.py), configured through pi's own
# documented provider settings (~/.pi/agent/models.json: a custom provider "mock" with api
# openai-completions and the mock's base URL; settings.json: a small compaction.keepRecentTokens so
# a manual compaction has something to summarise), headless: print mode (-p, -c to resume) and RPC
# mode (--mode rpc, rpc.py) for the `compact` command. The sessions it wrote (isolated HOME) are
# imported with `ctxfold import --from pi`, and `ctxfold render --format openai --body` is compared
# with the requests really sent: the last main request of every scenario and the first request
# after each compaction. Scenarios (JSON beside this file):
#   tools    bash then read, two calls in parallel, a read of a missing file (an error result),
#            reasoning (reasoning_content) before a call and a reply; each later prompt resumes (-c)
#   compact  one session resumed four times and compacted twice through RPC; imported once before
#            it grows (the incremental re-import); checks.py every-turn proves from the mock's
#            records and pi's files that every prompt, reply and message entry is in the database
#            and that both compactions are summary view nodes
#   branch   two turns, then the leaf moved back to the first reply with a branch summary (pi's
#            SessionManager, branch.mjs, as /tree does), and a third prompt on the new branch: the
#            first branch stays in the ledger, HEAD is the new leaf
# Usage: CTXFOLD=build/ctxfold bash tests/clients/pi/run.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
source "$HERE/../lib.sh"
[ -x "$NODE_BIN/pi" ] || { echo "SKIP: pi is not installed (cd tests/clients && npm install --no-save)" >&2; exit 77; }
CTXFOLD=$(cd "$(dirname "$CTXFOLD")" && pwd)/$(basename "$CTXFOLD")
CLIENT=pi
MODEL=mock-model
PI="$NODE_BIN/pi"
PKG="$CLIENTS_DIR/node_modules/@mariozechner/pi-coding-agent"
PI_TIMEOUT=${PI_TIMEOUT:-120}
export PI_OFFLINE=1 PI_SKIP_VERSION_CHECK=1 PI_TELEMETRY=0
suite_start

# scenario NAME: a fresh HOME and project folder under $WORK (sets D), the mock started on the
# scenario, and pi's provider settings pointing at it.
scenario() {
  D="$WORK/$1"
  mkdir -p "$D/home/.pi/agent" "$D/proj" "$D/rec"
  echo alpha > "$D/proj/notes.txt"
  start_mock "$HERE/$1.json" "$D/rec"
  cat > "$D/home/.pi/agent/models.json" <<JSON
{"providers": {"mock": {"baseUrl": "$MOCK_URL/v1", "api": "openai-completions", "apiKey": "dummy",
  "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
  "models": [{"id": "$MODEL", "contextWindow": 128000, "maxTokens": 4096}]}}}
JSON
  echo '{"compaction": {"keepRecentTokens": 60}}' > "$D/home/.pi/agent/settings.json"
}

# pi_print PROMPT [resume]: one print-mode run in the project folder (-c continues its latest session).
pi_print() {
  local args=(--provider mock --model "$MODEL" -p)
  [ -n "${2:-}" ] && args+=(-c)
  ( cd "$D/proj" && HOME="$D/home" NO_COLOR=1 timeout "$PI_TIMEOUT" "$PI" "${args[@]}" "$1" </dev/null ) \
    >> "$D/client.log" 2>&1 || fail "$(basename "$D"): pi failed on '$1' (see its log below)"
}

# pi_rpc COMMAND_JSON...: one RPC-mode run continuing the latest session, the commands in turn.
pi_rpc() {
  ( cd "$D/proj" && HOME="$D/home" NO_COLOR=1 python3 "$HERE/rpc.py" "$PI_TIMEOUT" "$@" -- \
      "$PI" --provider mock --model "$MODEL" --mode rpc -c ) >> "$D/client.log" 2>&1 \
    || fail "$(basename "$D"): pi --mode rpc failed on $* (see its log below)"
}

# import_and_compare NAME LAST_PROMPT: imports the HOME's sessions and compares the last main request.
import_and_compare() {
  local name=$1
  import_home pi
  SESSION=$(python3 "$HERE/checks.py" session-of "$D/home/.pi/agent/sessions" "$2")
  [ -n "$SESSION" ] || { fail "$name: no session file holds '$2'"; return; }
  compare_last "$name"
}

scenario tools
pi_print "PROMPT-T1 run a shell command, then read notes.txt"
pi_print "PROMPT-T2 read notes.txt and run a command in parallel" resume
pi_print "PROMPT-T3 read a file that does not exist" resume
pi_print "PROMPT-T4 think, then multiply 6 by 7 in the shell" resume
stop_mock
import_and_compare tools "PROMPT-T4"

# compact: the first two turns are imported before the rest is written, so the second import
# reads a file that grew (nothing stored twice).
scenario compact
pi_print "PROMPT-C1 remember: the project is called falcon"
pi_print "PROMPT-C2 remember: the deadline is friday, and run a check" resume
import_home pi import-early
pi_rpc '{"type": "compact"}' '{"type": "prompt", "message": "PROMPT-C3 remember: the owner is dana"}'
pi_print "PROMPT-C4 remember: the budget is small" resume
pi_rpc '{"type": "compact"}' '{"type": "prompt", "message": "PROMPT-C5 summarise what you know"}'
stop_mock
import_and_compare compact "PROMPT-C5"
outcome=$(jq -r '[.files[]?.outcome] | join(",")' "$D/import.json" 2>/dev/null)
case "$outcome" in appended|rewritten) ;; *) fail "compact: the grown file's outcome is '$outcome', not appended" ;; esac
compare_carrying compact "The conversation history before this point was compacted" 2
if python3 "$HERE/checks.py" every-turn "$D/rec" "$D/home/.pi/agent/sessions" "$DB" "$SESSION" 2 > "$D/every-turn.json"; then
  echo "pi compact: every turn kept: $(cat "$D/every-turn.json")"
else
  fail "compact: a turn or entry is missing from the database or a compaction is not a summary: $(cat "$D/every-turn.json")"
fi
"$CTXFOLD" --db "$DB" --session "$SESSION" compactions > "$D/compactions.json" 2>&1 || fail "compact: compactions failed"
[ "$(jq -s '[.[] | select(.type=="compaction" and .origin=="pi")] | length' "$D/compactions.json")" = 2 ] \
  || fail "compact: compactions does not list pi's two compactions: $(head -c 400 "$D/compactions.json")"

scenario branch
pi_print "PROMPT-B1 make a plan"
pi_print "PROMPT-B2 go on with plan A" resume
SESSION=$(python3 "$HERE/checks.py" session-of "$D/home/.pi/agent/sessions" "PROMPT-B2")
file=$(grep -l "PROMPT-B2" "$D"/home/.pi/agent/sessions/*/*.jsonl | head -1)
reply=$(python3 "$HERE/checks.py" entry-of "$D/home/.pi/agent/sessions" "$SESSION" "REPLY-B1")
node "$HERE/branch.mjs" "$PKG" "$file" "$reply" "BRANCH-MARK plan A explored the parser" >> "$D/client.log" 2>&1 \
  || fail "branch: branch.mjs failed"
pi_print "PROMPT-B3 try plan B instead" resume
stop_mock
import_and_compare branch "PROMPT-B3"
leaf=$(python3 "$HERE/checks.py" leaf "$D/home/.pi/agent/sessions" "$SESSION")
b2=$(python3 "$HERE/checks.py" entry-of "$D/home/.pi/agent/sessions" "$SESSION" "REPLY-B2")
head=$("$CTXFOLD" --db "$DB" --session "$SESSION" log | jq -r 'select(.type=="node") | .id' | head -1)
[ "$head" = "$SESSION:$leaf" ] || fail "branch: HEAD is '$head', not pi's leaf '$SESSION:$leaf'"
"$CTXFOLD" --db "$DB" --session "$SESSION" show "$SESSION:$b2" > /dev/null 2>&1 \
  || fail "branch: the first branch's reply $b2 is not in the ledger"
"$CTXFOLD" --db "$DB" --session "$SESSION" log | jq -e --arg id "$SESSION:$b2" 'select(.id == $id)' > /dev/null \
  && fail "branch: the first branch's reply is on HEAD's spine"

# PI_KEEP=DIR keeps every scenario's HOME, records, database and renders for a look.
[ -n "${PI_KEEP:-}" ] && { rm -rf "$PI_KEEP"; cp -r "$WORK" "$PI_KEEP"; }
suite_end
