#!/usr/bin/env bash
# GitHub Copilot CLI conformance: drives the real client (headless `-p PROMPT --allow-all-tools`)
# without a GitHub account through its documented bring-your-own-key settings (`copilot help
# environment`): COPILOT_OFFLINE=true (no GitHub authentication, telemetry, web tools or
# auto-update), COPILOT_PROVIDER_BASE_URL at the loopback mock speaking OpenAI Chat Completions
# (mock/chat.py), COPILOT_PROVIDER_API_KEY, COPILOT_MODEL. It imports the event logs the client
# wrote (isolated HOME) with `ctxfold import --from copilot` and compares `ctxfold render --format
# openai --body` with the requests really sent: the last main request of every scenario and the
# first main request after each compaction. Scenarios (JSON beside this file; PROJ in them is the
# project folder):
#   tools     a shell call then a view, two calls in parallel, a view of a missing file, reasoning
#             (reasoning_content deltas) before a call and a reply, a sub-agent (the task tool; its
#             own requests and tool call become a sidechain session), a create then an edit; each
#             prompt after the first resumes the session (--continue)
#   compact   one session resumed six times and compacted twice with `/compact`; besides the render
#             comparisons, checks.py every-turn proves from the mock's records and the client's
#             event log that every prompt and reply is in the database and that both compactions
#             are summary view nodes. The import is run twice (the second after the log grew) to
#             exercise the incremental re-import.
#   auto      the automatic compaction: a small prompt limit and large command outputs (below)
# Each client run is its own session and process group (setsid), killed whole when it returns.
# Usage: CTXFOLD=build/ctxfold bash tests/clients/copilot/run.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
source "$HERE/../lib.sh"
[ -x "$NODE_BIN/copilot" ] || { echo "SKIP: Copilot CLI is not installed (cd tests/clients && npm install --no-save)" >&2; exit 77; }
CTXFOLD=$(cd "$(dirname "$CTXFOLD")" && pwd)/$(basename "$CTXFOLD")
# shellcheck source=../chatsuite.sh
source "$CLIENTS_DIR/chatsuite.sh"
chatsuite_begin copilot "$HERE/checks.py"
client_files() { echo "$D/home/.copilot/session-state"; }
MODEL=mock-model
COPILOT="$NODE_BIN/copilot"
COPILOT_TIMEOUT=${COPILOT_TIMEOUT:-180}
# The native binary unpacks its JavaScript bundle (~240 MB) into a package cache on first start:
# one cache for the whole run instead of one per HOME.
PKG_CACHE="$WORK/pkg-cache"

# new_home NAME: a fresh HOME and project folder under $WORK; sets D.
new_home() {
  D="$WORK/$1"
  mkdir -p "$D/home" "$D/proj" "$D/rec"
  echo alpha > "$D/proj/notes.txt"
}

# client_run PROMPT [resume]: one headless run in $D/proj, resuming the newest session with
# --continue when asked. The client runs as the leader of a new session (setsid), so whatever it
# leaves running is ended with its process group.
client_run() {
  local prompt=$1 resume=${2:-} pid
  local args=(-p "$prompt" --allow-all-tools --disable-client-telemetry)
  [ -n "$resume" ] && args+=(--continue)
  local limit=(); [ -n "${MAX_PROMPT_TOKENS:-}" ] && limit=(COPILOT_PROVIDER_MAX_PROMPT_TOKENS="$MAX_PROMPT_TOKENS")
  ( cd "$D/proj" && exec env HOME="$D/home" COPILOT_PKG_CACHE_HOME="$PKG_CACHE" COPILOT_OFFLINE=true "${limit[@]}" \
      COPILOT_PROVIDER_BASE_URL="$MOCK_URL/v1" COPILOT_PROVIDER_API_KEY=dummy COPILOT_MODEL="$MODEL" \
      COPILOT_AUTO_UPDATE=false USE_TGREP=false NO_COLOR=1 \
      setsid timeout "$COPILOT_TIMEOUT" "$COPILOT" "${args[@]}" </dev/null >> "$D/client.log" 2>&1 ) &
  pid=$!
  wait "$pid" || fail "$(basename "$D"): the client failed on '$prompt' (see its log below)"
  kill -- "-$pid" 2>/dev/null
}

run_scenario tools "PROMPT-T1 run a shell command, then read notes.txt" \
  "PROMPT-T2 read notes.txt and run a command in parallel" "PROMPT-T3 read a file that does not exist" \
  "PROMPT-T4 think, then multiply 6 by 7 in the shell" "PROMPT-T5 ask a helper to look at notes.txt" \
  "PROMPT-T6 create made.txt, then edit it"
# The sub-agent's requests and tool call are a sidechain session of the main one.
side=$("$CTXFOLD" --db "$DB" sessions 2>/dev/null | jq -r --arg s "$SESSION" 'select(.parent_session == $s and .kind == "sidechain") | .id' | head -1)
[ -n "$side" ] || fail "tools: the sub-agent is not a sidechain session"

# compact: the first two turns are imported before the rest is written, so the second import
# reads a log that grew (outcome "appended" or re-read, nothing duplicated).
new_home compact
sed "s#PROJ#$D/proj#g" "$HERE/compact.json" > "$D/scenario.json"
start_mock "$D/scenario.json" "$D/rec"
client_run "PROMPT-C1 remember: the project is called falcon"
client_run "PROMPT-C2 remember: the deadline is friday" resume
HOME="$D/home" "$CTXFOLD" --db "$D/ctx.db" import --from copilot > "$D/import-early.json" 2>> "$D/import.err" \
  || fail "compact: the early import failed"
client_run "/compact" resume
client_run "PROMPT-C3 run a check" resume
client_run "PROMPT-C4 remember: the owner is dana" resume
client_run "/compact" resume
client_run "PROMPT-C5 summarise what you know" resume
stop_mock
import_and_compare compact "PROMPT-C5"
expect_grown compact
compare_chat_compactions compact 2
check_every_turn compact 2

# auto: the automatic compaction. COPILOT_PROVIDER_MAX_PROMPT_TOKENS (the BYOK model's prompt
# limit) at 18000 against a static context (system prompt and tool definitions) of about 10400
# tokens: two command outputs of 12 KB take the context past 80% of the limit, where the client
# starts compacting in the background while the turn goes on (a command that waits gives it the
# time); after it the context is back under 80% (a lower limit makes the client compact again
# before every request).
new_home auto
seq -f "big line %04g alpha beta gamma delta epsilon zeta eta theta" 1 600 > "$D/big.txt"
head -c 12000 "$D/big.txt" > "$D/proj/part1.txt"
tail -c 12000 "$D/big.txt" > "$D/proj/part2.txt"
sed "s#PROJ#$D/proj#g" "$HERE/auto.json" > "$D/scenario.json"
start_mock "$D/scenario.json" "$D/rec"
MAX_PROMPT_TOKENS=18000 client_run "PROMPT-A1 show part1.txt and part2.txt"
stop_mock
import_and_compare auto "PROMPT-A1"
grep -q '"trigger":"threshold"' "$D"/home/.copilot/session-state/*/events.jsonl \
  || fail "auto: the client did not compact on its own (no compaction with trigger threshold)"
compare_chat_compactions auto 1
check_every_turn auto 1

# COPILOT_KEEP=DIR keeps every scenario's HOME, records, database and renders for a look.
chatsuite_end "${COPILOT_KEEP:-}" tools compact auto
