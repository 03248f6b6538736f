#!/usr/bin/env bash
# opencode / Kilo CLI conformance (one implementation; opencode/run.sh and kilo/run.sh set CLIENT).
# Drives the real client headless (`<bin> run PROMPT`, `--continue` to resume) against the loopback
# mock speaking OpenAI Chat Completions (mock/chat.py), configured through the client's own
# provider settings: a custom provider using @ai-sdk/openai-compatible with its baseURL at the
# mock, in $XDG_CONFIG_HOME/<client>/<client>.json. Compactions go through the summarize endpoint
# of `<bin> serve` on 127.0.0.1. Then `ctxfold import --from <client>` reads the store the client
# wrote ($XDG_DATA_HOME/<client>/<client>.db, isolated HOME and XDG folders) and `ctxfold render
# --format openai --body` is compared with the requests really sent: the last main request of
# every scenario and the first main request after each compaction. Scenarios (JSON beside this
# file, shared by both clients; PROJ in them is the project folder):
#   tools    a bash call then a read, two calls in parallel, a read of a missing file, a task call
#            (a sub-agent in a child session: a sidechain, checks.py sidechain), reasoning before a
#            call and before a reply; each prompt after the first resumes the session
#   compact  one session resumed and compacted twice; checks.py every-turn proves every prompt,
#            reply and stored text is in the database and both compactions are summary view nodes.
#            The import runs twice (the second after the store grew: the incremental re-import).
# Every client process runs in its own process group, killed when it ends (servers, LSPs,
# watchers it left behind); background downloads are off by the client's own variables.
# Usage: CTXFOLD=build/ctxfold CLIENT=opencode|kilo bash tests/clients/opencode/suite.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
source "$HERE/../lib.sh"
: "${CLIENT:?CLIENT must be opencode or kilo}"
BIN="$NODE_BIN/$CLIENT"
[ -x "$BIN" ] || { echo "SKIP: $CLIENT is not installed (cd tests/clients && npm install --no-save)" >&2; exit 77; }
CTXFOLD=$(cd "$(dirname "$CTXFOLD")" && pwd)/$(basename "$CTXFOLD")
TIMEOUT=${OPENCODE_TIMEOUT:-180}
PREFIX=$(echo "$CLIENT" | tr '[:lower:]' '[:upper:]')   # OPENCODE_* / KILO_* variables
RUN_FLAGS=()
[ "$CLIENT" = kilo ] && RUN_FLAGS=(--auto)   # Kilo asks before a tool call unless --auto
rm -f "$RESULTS_DIR/$CLIENT.jsonl"
FAILED=0
fail() { echo "$CLIENT: $*" >&2; FAILED=1; }

# Process groups started here, killed on exit whatever happens.
GROUPS_STARTED=()
kill_groups() { local g; for g in "${GROUPS_STARTED[@]}"; do kill -- "-$g" 2>/dev/null; done; }
trap 'kill_groups; cleanup' EXIT

# client_env: the isolated environment of one client run in $D.
client_env() {
  local v
  for v in DISABLE_AUTOUPDATE DISABLE_MODELS_FETCH DISABLE_LSP_DOWNLOAD DISABLE_DEFAULT_PLUGINS DISABLE_SHARE \
           DISABLE_CLAUDE_CODE DISABLE_EXTERNAL_SKILLS EXPERIMENTAL_DISABLE_FILEWATCHER DISABLE_SESSION_INGEST \
           DISABLE_PRESENCE DISABLE_CODEBASE_INDEXING DISABLE_CHANNEL_DB; do
    echo "${PREFIX}_$v=1"
  done
  echo "HOME=$D/home" "XDG_DATA_HOME=$D/xdg/data" "XDG_CONFIG_HOME=$D/xdg/config" "XDG_CACHE_HOME=$D/xdg/cache" \
       "XDG_STATE_HOME=$D/xdg/state" "NO_COLOR=1"
}

# new_home NAME SCENARIO: a fresh HOME, XDG folders, project folder and mock under $WORK; sets D.
new_home() {
  D="$WORK/$1"
  mkdir -p "$D/home" "$D/proj" "$D/rec" "$D/xdg/data" "$D/xdg/config/$CLIENT" "$D/xdg/cache" "$D/xdg/state"
  echo alpha > "$D/proj/notes.txt"
  sed "s#PROJ#$D/proj#g" "$HERE/$2.json" > "$D/scenario.json"
  start_mock "$D/scenario.json" "$D/rec"
  cat > "$D/xdg/config/$CLIENT/$CLIENT.json" <<JSON
{"autoupdate": false, "share": "disabled", "model": "mock/mock-model", "small_model": "mock/mock-model",
 "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
   "options": {"baseURL": "$MOCK_URL/v1", "apiKey": "dummy"},
   "models": {"mock-model": {"name": "Mock Model", "limit": {"context": 100000, "output": 4096}}}}}}
JSON
  STORE="$D/xdg/data/$CLIENT/$CLIENT.db"
}

# client_run PROMPT [resume]: one headless run in $D/proj, in a new process group (setsid) that is
# killed when the run ends.
client_run() {
  local prompt=$1 resume=${2:-} args=(run "${RUN_FLAGS[@]}") pid rc
  [ -n "$resume" ] && args+=(--continue)
  ( cd "$D/proj" && exec setsid env $(client_env) timeout "$TIMEOUT" "$BIN" "${args[@]}" "$prompt" ) \
    </dev/null >> "$D/client.log" 2>&1 &
  pid=$!
  GROUPS_STARTED+=("$pid")
  wait "$pid"
  rc=$?
  kill -- "-$pid" 2>/dev/null
  [ "$rc" = 0 ] || fail "$(basename "$D"): the client failed on '$prompt' (exit $rc; see its log below)"
}

# serve_post ACTION BODY: starts `<bin> serve` on a free loopback port, POSTs BODY to
# /session/ID/ACTION for the newest session, and stops its process group.
serve_post() {
  local action=$1 body=$2 port sid i
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  sid=$(python3 "$HERE/checks.py" session-of "$STORE" PROMPT-)
  : > "$D/serve.log"
  ( cd "$D/proj" && exec setsid env $(client_env) "$BIN" serve --hostname 127.0.0.1 --port "$port" ) \
    >> "$D/serve.log" 2>&1 </dev/null &
  local pid=$!
  GROUPS_STARTED+=("$pid")
  for i in $(seq 1 300); do grep -q "listening on" "$D/serve.log" 2>/dev/null && break; sleep 0.2; done
  curl -sf -m "$TIMEOUT" --noproxy '*' -X POST -H 'content-type: application/json' -d "$body" \
    "http://127.0.0.1:$port/session/$sid/$action?directory=$D/proj" >> "$D/serve.log" 2>&1 \
    || fail "$(basename "$D"): the $action request failed"
  kill -- "-$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}

# compact: the newest session summarized (POST /session/ID/summarize with the provider and model).
compact() { serve_post summarize '{"providerID":"mock","modelID":"mock-model"}'; }

# revert MARKER: the newest session reverted to the user message holding MARKER (POST
# /session/ID/revert); the next prompt deletes that message and what followed from the tables,
# the event log keeps them (docs/formats/opencode.md "The event log").
revert() {
  local mid
  mid=$(python3 "$HERE/checks.py" message-of "$STORE" "$1")
  [ -n "$mid" ] || { fail "$(basename "$D"): no user message holds $1"; return; }
  serve_post revert "{\"messageID\":\"$mid\"}"
}

# import_and_compare NAME LAST_PROMPT: imports the store and compares the last main request.
import_and_compare() {
  local name=$1 marker=$2 warned last id seq
  DB="$D/ctx.db"
  env $(client_env) "$CTXFOLD" --db "$DB" import --from "$CLIENT" > "$D/import.json" 2>> "$D/import.err" \
    || fail "$name: import failed: $(cat "$D/import.err")"
  warned=$(jq '.warnings | length' "$D/import.json" 2>/dev/null || echo "?")
  [ "$warned" = 0 ] || fail "$name: the import warned: $(jq -c '.warnings' "$D/import.json")"
  "$CTXFOLD" --db "$DB" verify-invariants > "$D/verify.json" 2>&1 || fail "$name: verify-invariants: $(head -c 400 "$D/verify.json")"
  SESSION=$(python3 "$HERE/checks.py" session-of "$STORE" "$marker")
  [ -n "$SESSION" ] || { fail "$name: no session holds the last prompt"; return; }
  last=$(last_main "$D/rec")
  [ -n "$last" ] || { fail "$name: the mock saw no main request"; return; }
  read -r id seq < <(python3 "$CLIENTS_DIR/records.py" node-for "$last" "$DB" "$SESSION") \
    || { fail "$name: no node ends $(basename "$last")"; return; }
  "$CTXFOLD" --db "$DB" --session "$SESSION" render --format openai --body --head "$id" > "$D/render-last.json" \
    2>> "$D/render.err" || fail "$name: render failed: $(cat "$D/render.err")"
  compare_to "$CLIENT" "$name" last "$last" chat "$D/render-last.json" chat
}

show_logs() { [ "$FAILED" = 1 ] && for f in "$WORK"/*/client.log "$WORK"/*/serve.log "$WORK"/*/import.err; do
  [ -s "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done >&2; }

# tools
new_home tools tools
client_run "PROMPT-T1 run a shell command, then read notes.txt"
client_run "PROMPT-T2 read notes.txt and run a command in parallel" resume
client_run "PROMPT-T3 read a file that does not exist" resume
client_run "PROMPT-T4 ask a sub-agent to check notes.txt" resume
client_run "PROMPT-T5 think, then multiply 6 by 7 in the shell" resume
stop_mock
import_and_compare tools "PROMPT-T5"
python3 "$HERE/checks.py" sidechain "$STORE" "$DB" > "$D/sidechain.json" \
  || fail "tools: the sub-agent's session is not a sidechain of the task call: $(cat "$D/sidechain.json")"

# compact: the first two turns are imported before the rest is written, so the second import
# reads a store that grew (nothing duplicated).
new_home compact compact
client_run "PROMPT-C1 remember: the project is falcon"
client_run "PROMPT-C2 remember: the deadline is friday" resume
env $(client_env) "$CTXFOLD" --db "$D/ctx.db" import --from "$CLIENT" > "$D/import-early.json" 2>> "$D/import.err" \
  || fail "compact: the early import failed"
compact
client_run "PROMPT-C3 run a check" resume
client_run "PROMPT-C4 remember: the owner is dana" resume
compact
client_run "PROMPT-C5 summarise what you know" resume
# The last turn undone and asked again: the store keeps the first attempt only in its event log,
# every_turn finds its prompt (from the mock's records) in the database all the same.
revert "PROMPT-C5"
client_run "PROMPT-C6 summarise it once more" resume
stop_mock
import_and_compare compact "PROMPT-C6"
expect_grown compact
compare_compactions compact 2 chat python3 "$HERE/checks.py" compactions "$D/rec"
every_turn compact python3 "$HERE/checks.py" every-turn "$D/rec" "$STORE" "$D/ctx.db" "$SESSION" 2
[ "$(sqlite3 "$STORE" "SELECT count(*) FROM event WHERE type LIKE 'message.removed.%'")" -ge 2 ] \
  || fail "compact: the revert removed no message"

show_logs
# OPENCODE_KEEP=DIR keeps every scenario's HOME, records, database and renders for a look.
suite_end "${OPENCODE_KEEP:-}"
