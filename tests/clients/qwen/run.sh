#!/usr/bin/env bash
# Qwen Code conformance: drives the real client (headless, positional prompt, --yolo) against the
# loopback mock speaking OpenAI Chat Completions (mock/chat.py; the client's own OpenAI-compatible
# provider settings: --auth-type openai, OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL), imports the
# chat files it wrote (isolated HOME) with `ctxfold import --from qwen`, and compares `ctxfold
# render --format openai --body` with the requests really sent: the last main request of every
# scenario and the first main request after each chat compression. Scenarios (JSON beside this
# file; PROJ in them is the project folder):
#   tools     a shell call then a read_file call, two calls in parallel, a read of a missing file,
#             reasoning (reasoning_content deltas) before a call and before a reply; each prompt
#             after the first resumes the session (--continue)
#   compress  one session resumed five times and compressed twice with `/compress`; besides the
#             render comparisons, checks.py every-turn proves from the mock's records and the
#             client's files that every prompt and reply is in the database and that both
#             compressions are summary view nodes. The import is run twice (the second after the
#             file grew) to exercise the incremental re-import.
# Usage: CTXFOLD=build/ctxfold bash tests/clients/qwen/run.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
source "$HERE/../lib.sh"
[ -x "$NODE_BIN/qwen" ] || { echo "SKIP: Qwen Code is not installed (cd tests/clients && npm install --no-save)" >&2; exit 77; }
CTXFOLD=$(cd "$(dirname "$CTXFOLD")" && pwd)/$(basename "$CTXFOLD")
CLIENT=qwen
MODEL=mock-model
QWEN="$NODE_BIN/qwen"
QWEN_TIMEOUT=${QWEN_TIMEOUT:-120}
rm -f "$RESULTS_DIR/$CLIENT.jsonl"
FAILED=0
fail() { echo "qwen: $*" >&2; FAILED=1; }

# new_home NAME: a fresh HOME (settings: usage statistics, telemetry and update checks off; the
# background memory agents off, whose requests carry tools but are no turn of the conversation)
# and project folder under $WORK; sets D.
new_home() {
  D="$WORK/$1"
  mkdir -p "$D/home/.qwen" "$D/proj" "$D/rec"
  cat > "$D/home/.qwen/settings.json" <<'JSON'
{"general": {"enableAutoUpdate": false, "disableAutoUpdate": true, "disableUpdateNag": true},
 "privacy": {"usageStatisticsEnabled": false},
 "telemetry": {"enabled": false},
 "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false}}
JSON
  echo alpha > "$D/proj/notes.txt"
}

# qwen PROMPT [resume]: one headless run of the client in $D (the project folder), resuming the
# project's latest session with --continue when asked.
qwen_run() {
  local prompt=$1 resume=${2:-}
  local args=(--auth-type openai -m "$MODEL" --yolo)
  [ -n "$resume" ] && args+=(--continue)
  ( cd "$D/proj" && HOME="$D/home" OPENAI_BASE_URL="$MOCK_URL/v1" OPENAI_API_KEY=dummy OPENAI_MODEL="$MODEL" \
      QWEN_USAGE_STATISTICS_ENABLED=false QWEN_CODE_DISABLE_PRECONNECT=1 QWEN_CODE_SUPPRESS_YOLO_WARNING=1 \
      NO_COLOR=1 timeout "$QWEN_TIMEOUT" "$QWEN" "${args[@]}" "$prompt" </dev/null ) >> "$D/client.log" 2>&1 \
    || fail "$(basename "$D"): the client failed on '$prompt' (see its log below)"
}

# import_and_compare NAME LAST_PROMPT: imports the HOME's chats and compares the last main request.
import_and_compare() {
  local name=$1 marker=$2
  DB="$D/ctx.db"
  HOME="$D/home" "$CTXFOLD" --db "$DB" import --from qwen > "$D/import.json" 2> "$D/import.err" \
    || fail "$name: import failed: $(cat "$D/import.err")"
  local warned; warned=$(jq '.warnings | length' "$D/import.json" 2>/dev/null || echo "?")
  [ "$warned" = 0 ] || fail "$name: the import warned: $(jq -c '.warnings' "$D/import.json")"
  "$CTXFOLD" --db "$DB" verify-invariants > "$D/verify.json" 2>&1 || fail "$name: verify-invariants: $(head -c 400 "$D/verify.json")"
  SESSION=$(python3 "$HERE/checks.py" session-of "$D/home/.qwen/projects" "$marker")
  [ -n "$SESSION" ] || { fail "$name: no chat file holds the last prompt"; return; }
  local last; last=$(last_main "$D/rec")
  [ -n "$last" ] || { fail "$name: the mock saw no main request"; return; }
  local id seq
  read -r id seq < <(python3 "$HERE/checks.py" node-for "$last" "$DB" "$SESSION") \
    || { fail "$name: no node ends $(basename "$last")"; return; }
  "$CTXFOLD" --db "$DB" --session "$SESSION" render --format openai --body --head "$id" > "$D/render-last.json" \
    2> "$D/render.err" || fail "$name: render failed: $(cat "$D/render.err")"
  compare_to "$CLIENT" "$name" last "$last" chat "$D/render-last.json" chat
}

# run_scenario NAME PROMPT...: the first prompt starts the session, each later one resumes it.
run_scenario() {
  local name=$1; shift
  new_home "$name"
  sed "s#PROJ#$D/proj#g" "$HERE/$name.json" > "$D/scenario.json"
  start_mock "$D/scenario.json" "$D/rec"
  local first=1 p
  for p in "$@"; do
    if [ $first = 1 ]; then qwen_run "$p"; first=0; else qwen_run "$p" resume; fi
  done
  stop_mock
  import_and_compare "$name" "${*: -1}"
}

show_logs() { [ "$FAILED" = 1 ] && for f in "$WORK"/*/client.log "$WORK"/*/import.err; do
  [ -s "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done >&2; }

run_scenario tools "PROMPT-T1 run a shell command, then read notes.txt" \
  "PROMPT-T2 read notes.txt and run a command in parallel" "PROMPT-T3 read a file that does not exist" \
  "PROMPT-T4 think, then multiply 6 by 7 in the shell"

# compress: the first three turns are imported before the rest is written, so the second import
# reads a file that grew (source_files: "appended" or re-read, nothing duplicated).
new_home compress
sed "s#PROJ#$D/proj#g" "$HERE/compress.json" > "$D/scenario.json"
start_mock "$D/scenario.json" "$D/rec"
qwen_run "PROMPT-C1 remember: the project is called falcon"
qwen_run "PROMPT-C2 remember: the deadline is friday" resume
HOME="$D/home" "$CTXFOLD" --db "$D/ctx.db" import --from qwen > "$D/import-early.json" 2>> "$D/import.err" \
  || fail "compress: the early import failed"
qwen_run "/compress" resume
qwen_run "PROMPT-C3 run a check" resume
qwen_run "PROMPT-C4 remember: the owner is dana" resume
qwen_run "/compress" resume
qwen_run "PROMPT-C5 summarise what you know" resume
stop_mock
import_and_compare compress "PROMPT-C5"
expect_grown compress
compare_compactions compress 2 chat python3 "$HERE/checks.py" compactions "$D/rec"
every_turn compress python3 "$HERE/checks.py" every-turn "$D/rec" "$D/home/.qwen/projects" "$D/ctx.db" "$SESSION" 2

show_logs
# QWEN_KEEP=DIR keeps every scenario's HOME, records, database and renders for a look.
end_suite "${QWEN_KEEP:-}"
