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
# shellcheck source=../chatsuite.sh
source "$CLIENTS_DIR/chatsuite.sh"
chatsuite_begin qwen "$HERE/checks.py"
client_files() { echo "$D/home/.qwen/projects"; }
MODEL=mock-model
QWEN="$NODE_BIN/qwen"
QWEN_TIMEOUT=${QWEN_TIMEOUT:-120}

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

# client_run PROMPT [resume]: one headless run of the client in $D (the project folder), resuming
# the project's latest session with --continue when asked.
client_run() {
  local prompt=$1 resume=${2:-}
  local args=(--auth-type openai -m "$MODEL" --yolo)
  [ -n "$resume" ] && args+=(--continue)
  ( cd "$D/proj" && HOME="$D/home" OPENAI_BASE_URL="$MOCK_URL/v1" OPENAI_API_KEY=dummy OPENAI_MODEL="$MODEL" \
      QWEN_USAGE_STATISTICS_ENABLED=false QWEN_CODE_DISABLE_PRECONNECT=1 QWEN_CODE_SUPPRESS_YOLO_WARNING=1 \
      NO_COLOR=1 timeout "$QWEN_TIMEOUT" "$QWEN" "${args[@]}" "$prompt" </dev/null ) >> "$D/client.log" 2>&1 \
    || fail "$(basename "$D"): the client failed on '$prompt' (see its log below)"
}

run_scenario tools "PROMPT-T1 run a shell command, then read notes.txt" \
  "PROMPT-T2 read notes.txt and run a command in parallel" "PROMPT-T3 read a file that does not exist" \
  "PROMPT-T4 think, then multiply 6 by 7 in the shell"

# compress: the first three turns are imported before the rest is written, so the second import
# reads a file that grew (source_files: "appended" or re-read, nothing duplicated).
new_home compress
sed "s#PROJ#$D/proj#g" "$HERE/compress.json" > "$D/scenario.json"
start_mock "$D/scenario.json" "$D/rec"
client_run "PROMPT-C1 remember: the project is called falcon"
client_run "PROMPT-C2 remember: the deadline is friday" resume
HOME="$D/home" "$CTXFOLD" --db "$D/ctx.db" import --from qwen > "$D/import-early.json" 2>> "$D/import.err" \
  || fail "compress: the early import failed"
client_run "/compress" resume
client_run "PROMPT-C3 run a check" resume
client_run "PROMPT-C4 remember: the owner is dana" resume
client_run "/compress" resume
client_run "PROMPT-C5 summarise what you know" resume
stop_mock
import_and_compare compress "PROMPT-C5"
expect_grown compress
compare_chat_compactions compress 2
check_every_turn compress 2

# QWEN_KEEP=DIR keeps every scenario's HOME, records, database and renders for a look.
chatsuite_end "${QWEN_KEEP:-}" tools compress
