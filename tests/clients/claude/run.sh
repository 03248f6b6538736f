#!/usr/bin/env bash
# Conformance scenarios for Claude Code (client name claude-code): drives the real native client
# against the loopback mock (mock/anthropic.py), imports what it wrote into a fresh database, and
# compares `ctxfold render --format anthropic --body` with the requests it really sent (the last one,
# the one right after each compaction, a sub-agent's last one), and checks the client's own record
# of every request (`ctxfold tokens --client-requests`). Scenarios: plain, tools (Bash, Read),
# parallel, failing, thinking (signed), subagent, image (Read of a PNG), resume (--resume,
# --continue, --resume), fork (--fork-session: usage counts each response once, the fork under its
# parent), compact (`-p /compact` on a resumed session), autocompact (the mock
# reports input usage near the window mid-turn), queue (a message sent on stream-json stdin while a
# tool runs, which the client queues and delivers mid-turn). Exit: report.py's status, or 1 when a recorded
# request differs.
# Usage: CTXFOLD=build/ctxfold bash tests/clients/claude/run.sh [SCENARIO...]
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../lib.sh"
need_clients
CLAUDE="$CLIENTS_DIR/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
MODEL=claude-sonnet-4-6
CLIENT=claude-code
rm -f "$RESULTS_DIR/$CLIENT.jsonl"

# setup NAME: a fresh HOME and project folder, the scenario with @CWD@ filled in, the mock started.
setup() {
  S=$1
  SH="$WORK/$S/home"; CWD="$WORK/$S/proj"; REC="$WORK/$S/rec"; DB="$WORK/$S/ctxfold.db"
  mkdir -p "$SH/.claude" "$CWD" "$REC"
  printf 'line one of the notes\nline two of the notes\n' > "$CWD/notes.txt"
  # a 2x2 red PNG
  printf '\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x02\x00\x00\x00\x02\x08\x02\x00\x00\x00\xfd\xd4\x9as\x00\x00\x00\x12IDATx\x9cc\xf8\xcf\xc0\x00\xc4\x00\x84\x0c\x00\x00\x1f\xf2\x03\xfd\x8a\x97\xe1\x8b\x00\x00\x00\x00IEND\xaeB`\x82' > "$CWD/dot.png"
  sed "s#@CWD@#$CWD#g" "$HERE/$S.json" > "$WORK/$S/scenario.json"
  start_mock "$WORK/$S/scenario.json" "$REC"
}

# cc ARGS...: one bounded headless run of the client in the scenario's HOME and project.
cc() {
  (cd "$CWD" && HOME="$SH" CLAUDE_CONFIG_DIR="$SH/.claude" ANTHROPIC_BASE_URL="$MOCK_URL" \
     ANTHROPIC_API_KEY=dummy IS_SANDBOX=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
     DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1 \
     DISABLE_BUG_COMMAND=1 CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1 CLAUDE_CODE_ENABLE_TELEMETRY=0 \
     env ${CC_ENV:-} timeout 120 "$CLAUDE" --model "$MODEL" --dangerously-skip-permissions "$@" \
     </dev/null >>"$WORK/$S/client.out" 2>>"$WORK/$S/client.err") \
  || echo "claude ($S $*) exited $?: $(tail -3 "$WORK/$S/client.err")" >&2
}

# cc_stream FEED ARGS...: like cc, but the client reads stream-json user messages from the
# command FEED (a function writing JSONL to stdout), as a harness or an IDE sends them.
cc_stream() {
  local feed=$1; shift
  (cd "$CWD" && "$feed" | HOME="$SH" CLAUDE_CONFIG_DIR="$SH/.claude" ANTHROPIC_BASE_URL="$MOCK_URL" \
     ANTHROPIC_API_KEY=dummy IS_SANDBOX=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
     DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1 \
     DISABLE_BUG_COMMAND=1 CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1 CLAUDE_CODE_ENABLE_TELEMETRY=0 \
     timeout 120 "$CLAUDE" --model "$MODEL" --dangerously-skip-permissions -p \
       --input-format stream-json --output-format stream-json --verbose "$@" \
     >>"$WORK/$S/client.out" 2>>"$WORK/$S/client.err") \
  || echo "claude ($S stream $*) exited $?: $(tail -3 "$WORK/$S/client.err")" >&2
}

# user_line TEXT: one stream-json user message.
user_line() { jq -cn --arg t "$1" '{type: "user", message: {role: "user", content: [{type: "text", text: $t}]}}'; }

# queue_feed: the first prompt, then, while its tool runs (the mock has been asked for the next
# step of CC-QUEUE-A), a second message the client has to queue; stdin closes once the client
# reports the turn's result (Claude Code absorbs the queued message into the running turn: a
# queue-operation "remove" with reason absorbed_mid_turn, the text in a <system-reminder> beside
# the tool's result).
queue_feed() {
  user_line "CC-QUEUE-A start the long step"
  local i
  for i in $(seq 1 100); do
    grep -l '"CC-QUEUE-A' "$REC"/*.json >/dev/null 2>&1 && break
    sleep 0.1
  done
  sleep 2
  user_line "CC-QUEUE-B a message typed while the tool runs"
  for i in $(seq 1 300); do
    grep -q '"type":"result"' "$WORK/$S/client.out" 2>/dev/null && break
    sleep 0.1
  done
}

session_id() { ls -t "$SH/.claude/projects/"*/*.jsonl 2>/dev/null | head -1 | xargs -r basename | sed 's/\.jsonl$//'; }

# import_all: the transcripts the client wrote, into a fresh database; then the client's own
# record of each request it sent (api-request records) against the render (tokens --client-requests).
FIDELITY_FAILED=0
import_all() {
  rm -f "$DB"
  "$CTXFOLD" --db "$DB" import --from claude-code "$SH/.claude/projects" >"$WORK/$S/import.out" 2>"$WORK/$S/import.err" \
    || echo "import ($S) failed: $(tail -3 "$WORK/$S/import.err")" >&2
  if ! "$CTXFOLD" --db "$DB" --session "$(session_id)" tokens --client-requests >"$WORK/$S/fidelity.json" 2>>"$WORK/$S/import.err"; then
    echo "$S: a request Claude Code recorded differs from the render: $(jq -c '.summary' "$WORK/$S/fidelity.json" 2>/dev/null)" >&2
    FIDELITY_FAILED=1
  fi
}

# check CHECKPOINT REC.json: renders the node the client had when it sent REC and compares.
check() {
  local cp=$1 rec=$2 head sid found
  [ -n "$rec" ] && [ -f "$rec" ] || { echo "no request for $S/$cp" >&2; echo '{}' > "$WORK/$S/$cp.req"; return; }
  sid=$(session_id)
  head=""
  if found=$(python3 "$HERE/heads.py" head "$DB" "$rec"); then sid=${found%%$'\t'*}; head=${found#*$'\t'}; fi
  if [ -n "$head" ]; then
    "$CTXFOLD" --db "$DB" --session "$sid" render --format anthropic --body --head "$head" > "$WORK/$S/$cp.render.json" 2>>"$WORK/$S/render.err"
  else
    "$CTXFOLD" --db "$DB" --session "$sid" render --format anthropic --body > "$WORK/$S/$cp.render.json" 2>>"$WORK/$S/render.err"
  fi
  [ -s "$WORK/$S/$cp.render.json" ] || echo '{"messages": []}' > "$WORK/$S/$cp.render.json"
  compare_to "$CLIENT" "$S" "$cp" "$rec" anthropic "$WORK/$S/$cp.render.json" anthropic
  [ -n "${CC_KEEP:-}" ] && { mkdir -p "$CC_KEEP"; cp -r "$WORK/$S" "$CC_KEEP/"; }
}

# the first main request whose last user text holds MARKER (a fresh turn's request)
first_with() { python3 "$CLIENTS_DIR/records.py" after "$REC" "$1"; }

scenario() {
  case $1 in
  plain|tools|parallel|failing|image)
    setup "$1"
    local key; key=$(python3 -c "import json,sys; print(next(iter(json.load(open(sys.argv[1]))['prompts'])))" "$WORK/$1/scenario.json")
    cc -p "$key please"
    import_all; check last "$(last_main "$REC")" ;;
  thinking)
    setup thinking
    CC_ENV="MAX_THINKING_TOKENS=4000" cc -p "CC-THINK list the files and think first"
    import_all; check last "$(last_main "$REC")" ;;
  subagent)
    setup subagent
    cc -p "CC-SUBMAIN delegate the counting to a sub-agent"
    import_all
    check sub-agent-last "$(python3 "$HERE/heads.py" first-holds "$REC" CC-SUBTASK)"
    check last "$(last_main "$REC")" ;;
  resume)
    setup resume
    cc -p "CC-RESUME-A first turn"
    local sid; sid=$(session_id)
    cc --resume "$sid" -p "CC-RESUME-B second turn"
    cc --continue -p "CC-RESUME-C third turn"
    cc --resume "$sid" -p "CC-RESUME-B once more"
    import_all; check last "$(last_main "$REC")" ;;
  compact)
    setup compact
    cc -p "CC-COMPACT-A first part"
    local sid; sid=$(session_id)
    cc --resume "$sid" -p "/compact"
    cc --resume "$sid" -p "CC-COMPACT-B after the compaction"
    import_all
    check after-compaction "$(python3 "$HERE/heads.py" after-compaction "$REC" | head -1)"
    check last "$(last_main "$REC")" ;;
  queue)
    setup queue
    cc_stream queue_feed
    import_all; check last "$(last_main "$REC")"
    # the message was really queued (not a second turn), and the render holds it once, where the
    # client delivered it
    grep -h '"type":"queue-operation"' "$SH/.claude/projects/"*/*.jsonl | grep -q 'CC-QUEUE-B' \
      || { echo "queue: Claude Code recorded no queue operation for the second message" >&2; FIDELITY_FAILED=1; }
    [ "$(grep -o 'CC-QUEUE-B' "$WORK/$S/last.render.json" | wc -l)" = 1 ] \
      || { echo "queue: the render does not hold the queued message once" >&2; FIDELITY_FAILED=1; } ;;
  fork)
    # --fork-session: a new session whose file begins with copies of the parent's records; usage
    # counts every response the files record once (docs/forensics.md "Lineage").
    setup fork
    cc -p "CC-FORK-A first turn"
    local parent; parent=$(session_id)
    cc --resume "$parent" --fork-session -p "CC-FORK-B forked turn"
    local child; child=$(session_id)
    sleep 1
    cc --resume "$parent" -p "CC-FORK-C the parent goes on"
    import_all; check last "$(last_main "$REC")"
    local distinct counted lineage
    distinct=$(cat "$SH/.claude/projects/"*/*.jsonl | jq -r 'select(.type=="assistant") | .message.id' | sort -u | wc -l)
    counted=$("$CTXFOLD" --db "$DB" usage | jq -s '[.[] | select(.type=="usage") | .messages] | add')
    [ "$distinct" -gt 2 ] && [ "$counted" = "$distinct" ] \
      || { echo "fork: usage counts $counted responses, the files hold $distinct distinct ones" >&2; FIDELITY_FAILED=1; }
    lineage=$("$CTXFOLD" --db "$DB" sessions | jq -r --arg c "$child" 'select(.id==$c) | "\(.lineage.parent) \(.lineage.relation)"')
    [ "$lineage" = "$parent fork" ] || { echo "fork: lineage of $child is '$lineage', not '$parent fork'" >&2; FIDELITY_FAILED=1; } ;;
  autocompact)
    setup autocompact
    cc -p "CC-AUTO do the steps"
    import_all
    check after-compaction "$(python3 "$HERE/heads.py" after-compaction "$REC" | head -1)"
    check last "$(last_main "$REC")" ;;
  esac
  stop_mock
}

ALL="plain tools parallel failing thinking subagent image resume fork compact autocompact queue"
for s in ${@:-$ALL}; do scenario "$s"; done
python3 "$CLIENTS_DIR/report.py" --client "$CLIENT"
rc=$?
[ "$FIDELITY_FAILED" = 0 ] || rc=1
exit $rc
