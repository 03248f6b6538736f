#!/usr/bin/env bash
# Cline CLI conformance: drives the real client (headless `cline PROMPT`, tools auto-approved)
# against the loopback mock speaking OpenAI Chat Completions (mock/chat.py), configured through its
# own provider settings: `cline auth -p openai -k KEY -m MODEL -b BASE_URL` (the
# openai-compatible provider, in the isolated HOME's ~/.cline/data/settings/providers.json).
# CLINE_SESSION_BACKEND_MODE=local keeps the task in the CLI's process (no background hub daemon).
# It imports the session files the client wrote with `ctxfold import --from cline` and compares
# `ctxfold render --format openai --body` with the last main request of every scenario
# (JSON beside this file; PROJ in them is the project folder):
#   tools   two commands in one call, a read of two files one of them missing, a create and a
#           command in parallel, reasoning before an edit, a reply; Cline's structured
#           {query, result, success} tool results
#   agent   a sub-agent (spawn_agent): its own messages file becomes a sidechain session; its last
#           request is compared too
#   compact the model's context window set small (`contextWindow` in the provider's settings) and
#           two large command outputs: the client compacts on its own before its third request
#           (its default agentic compaction asks the mock for the summary, and writes
#           <id>.compaction.json); imported, then resumed with `cline --id ID` in its terminal UI on
#           a pseudo-terminal (terminal.py: resuming needs one), imported again (the grown file, nothing
#           twice); the first request after the compaction and the resumed one are compared
# Each client run is its own session and process group (setsid), killed whole when it returns;
# the terminal UI also starts a hub daemon in a session of its own, ended by stop_home_processes.
# Usage: CTXFOLD=build/ctxfold bash tests/clients/cline/run.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
source "$HERE/../lib.sh"
[ -x "$NODE_BIN/cline" ] || { echo "SKIP: Cline is not installed (cd tests/clients && npm install --no-save)" >&2; exit 77; }
CTXFOLD=$(cd "$(dirname "$CTXFOLD")" && pwd)/$(basename "$CTXFOLD")
# shellcheck source=../chatsuite.sh
source "$CLIENTS_DIR/chatsuite.sh"
chatsuite_begin cline "$HERE/checks.py"
client_files() { echo "$D/home/.cline/data/sessions"; }
MODEL=mock-model
CLINE="$NODE_BIN/cline"
CLINE_TIMEOUT=${CLINE_TIMEOUT:-180}

new_home() {
  D="$WORK/$1"
  mkdir -p "$D/home" "$D/proj" "$D/rec"
  echo alpha > "$D/proj/notes.txt"
}

# cline_in_home ARGS...: the client in $D/proj as the leader of a new session; whatever it leaves
# running is ended with its process group.
cline_in_home() {
  local pid
  ( cd "$D/proj" && exec env HOME="$D/home" CLINE_SESSION_BACKEND_MODE=local NO_COLOR=1 \
      setsid timeout "$CLINE_TIMEOUT" "$CLINE" "$@" </dev/null >> "$D/client.log" 2>&1 ) &
  pid=$!
  wait "$pid" || fail "$(basename "$D"): the client failed on '$*' (see its log below)"
  kill -- "-$pid" 2>/dev/null
}

# configure: the provider, once per scenario, at the mock started for it; with CONTEXT_WINDOW
# set, the model's context window in its settings (docs/formats/cline.md "Compaction").
configure() {
  [ -f "$D/.auth" ] && return
  cline_in_home auth -p openai -k dummy -m "$MODEL" -b "$MOCK_URL/v1"
  if [ -n "${CONTEXT_WINDOW:-}" ]; then
    local p="$D/home/.cline/data/settings/providers.json"
    jq --argjson w "$CONTEXT_WINDOW" '.providers["openai-compatible"].settings.contextWindow = $w' "$p" > "$p.new" \
      && mv "$p.new" "$p" || fail "$(basename "$D"): the context window was not set"
  fi
  : > "$D/.auth"
}

# client_run PROMPT: one headless task (a new session each: resuming needs a terminal).
client_run() {
  configure
  cline_in_home "$1"
}

# stop_home_processes: ends, by process id, what a client run of this scenario left running
# outside its process group (the hub daemon the terminal UI starts in a session of its own),
# found by the scenario's HOME in its environment.
stop_home_processes() {
  local p
  for p in /proc/[0-9]*; do
    tr '\0' '\n' 2>/dev/null < "$p/environ" | grep -qxF "HOME=$D/home" && kill "${p#/proc/}" 2>/dev/null
  done
}

# resume_in_tty SESSION PROMPT REPLY: `cline --id SESSION` in its terminal UI on a pseudo-terminal
# (terminal.py): once the resumed conversation shows, types PROMPT, waits until the session's messages
# file holds REPLY, then quits; whatever the UI started is ended.
resume_in_tty() {
  local sid=$1 prompt=$2 reply=$3 file="$D/home/.cline/data/sessions/$1/$1.messages.json"
  local steps
  steps=$(jq -cn --arg p "$prompt" --arg f "$file" --arg r "$reply" \
    '[["output","PROMPT-"],["pause",2],["type",$p],["pause",1],["key","\r"],["file",$f,$r],["pause",2],["type","/quit"],["pause",1],["key","\r"]]')
  ( cd "$D/proj" && exec env HOME="$D/home" NO_COLOR=1 TERM=xterm-256color COLUMNS=120 LINES=40 \
      python3 "$HERE/terminal.py" "$D/client.log" "$CLINE_TIMEOUT" "$steps" -- "$CLINE" --id "$sid" ) \
    || fail "$(basename "$D"): the resumed session did not answer '$prompt' (see its log below)"
  stop_home_processes
}

run_scenario tools "PROMPT-T1 run commands, read files, create and edit made.txt"
check_every_turn tools 0

run_scenario agent "PROMPT-A1 ask a helper to read notes.txt"
# The sub-agent's messages file is a sidechain session of the lead; its last request is compared.
side=$("$CTXFOLD" --db "$DB" sessions 2>/dev/null | jq -r --arg s "$SESSION" 'select(.parent_session == $s and .kind == "sidechain") | .id' | head -1)
if [ -z "$side" ]; then
  fail "agent: the sub-agent is not a sidechain session"
else
  sub_last=$(python3 "$CLIENTS_DIR/records.py" main "$D/rec" | while read -r r; do
    grep -q '"You read files."' "$r" && echo "$r"; done | tail -1)
  if [ -n "$sub_last" ] && read -r id seq < <(python3 "$CLIENTS_DIR/chatchecks.py" node-for "$sub_last" "$DB" "$side"); then
    "$CTXFOLD" --db "$DB" --session "$side" render --format openai --body --head "$id" > "$D/render-sub.json" 2>> "$D/render.err" \
      || fail "agent: the sub-agent's render failed"
    compare_to "$CLIENT" agent subagent "$sub_last" chat "$D/render-sub.json" chat
  else
    fail "agent: no stored node ends the sub-agent's last request"
  fi
fi

# compact: the client compacts on its own, then the session is resumed in the terminal UI.
new_home compact
for n in 1 2; do
  seq -f "big$n line %04g alpha beta gamma delta epsilon zeta eta theta" 1 700 > "$D/proj/big$n.txt"
done
sed "s#PROJ#$D/proj#g" "$HERE/compact.json" > "$D/scenario.json"
start_mock "$D/scenario.json" "$D/rec"
CONTEXT_WINDOW=12500 client_run "PROMPT-C1 read big1.txt and big2.txt"
SESSION=$(python3 "$CHECKS" session-of "$(client_files)" "PROMPT-C1")
[ -n "$SESSION" ] && [ -f "$D/home/.cline/data/sessions/$SESSION/$SESSION.compaction.json" ] \
  || fail "compact: the client did not compact (no compaction state beside the messages file)"
HOME="$D/home" "$CTXFOLD" --db "$D/ctx.db" import --from cline > "$D/import-early.json" 2>> "$D/import.err" \
  || fail "compact: the early import failed"
[ -n "$SESSION" ] && resume_in_tty "$SESSION" "PROMPT-C2 go on from the summary" "REPLY-C2"
stop_mock
import_and_compare compact "PROMPT-C1"
expect_grown compact
compare_chat_compactions compact 1
check_every_turn compact 1
python3 "$HERE/checks.py" once "$(client_files)" "$DB" "$SESSION" > "$D/once.json" \
  || fail "compact: the re-import duplicated or lost a message: $(cat "$D/once.json")"

# CLINE_KEEP=DIR keeps every scenario's HOME, records, database and renders for a look.
chatsuite_end "${CLINE_KEEP:-}" tools agent compact
