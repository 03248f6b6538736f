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
# Resuming a task (`--id`) needs an interactive terminal, and the runs here do not make the client
# compact: neither is exercised (docs/formats/cline.md).
# Each client run is its own session and process group (setsid), killed whole when it returns.
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

# client_run PROMPT: one headless task (a new session each: resuming needs a terminal); the
# provider is configured first, once per scenario, at the mock started for it.
client_run() {
  [ -f "$D/.auth" ] || { cline_in_home auth -p openai -k dummy -m "$MODEL" -b "$MOCK_URL/v1"; : > "$D/.auth"; }
  cline_in_home "$1"
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

# CLINE_KEEP=DIR keeps every scenario's HOME, records, database and renders for a look.
chatsuite_end "${CLINE_KEEP:-}" tools agent
