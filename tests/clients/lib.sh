# Shared helpers of the conformance suite (sourced by claude/run.sh, codex/run.sh, gemini/run.sh).
# Each client runs in an isolated HOME under $WORK with every network path but loopback closed:
# the proxy variables point at a dead local port, and NO_PROXY lets 127.0.0.1 through.
set -uo pipefail
CLIENTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${CTXFOLD:?CTXFOLD must name the ctxfold binary}"
NODE_BIN="$CLIENTS_DIR/node_modules/.bin"
export LC_ALL=C.UTF-8 TZ=UTC
export HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9
export http_proxy=$HTTP_PROXY https_proxy=$HTTPS_PROXY all_proxy=$ALL_PROXY
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
export DISABLE_AUTOUPDATER=1 DO_NOT_TRACK=1 CI=true
# Where results go: one JSON object per compared checkpoint, one file per client.
RESULTS_DIR=${CTXFOLD_CLIENTS_RESULTS:-$CLIENTS_DIR/results}
mkdir -p "$RESULTS_DIR"
WORK=$(mktemp -d)
MOCK_PID=""
cleanup() { [ -n "$MOCK_PID" ] && kill "$MOCK_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

# need_clients: exit 77 (ctest's skip code) when the clients are not installed in tests/clients.
need_clients() {
  if [ ! -x "$NODE_BIN/codex" ] || [ ! -x "$NODE_BIN/gemini" ] \
     || [ ! -x "$CLIENTS_DIR/node_modules/@anthropic-ai/claude-code-linux-x64/claude" ]; then
    echo "SKIP: the clients are not installed (cd tests/clients && npm install --no-save)" >&2; exit 77
  fi
}

# start_mock SCENARIO.json RECORD_DIR: starts the mock model server; sets MOCK_PORT and MOCK_URL.
start_mock() {
  local scenario=$1 record=$2
  stop_mock
  mkdir -p "$record"
  rm -f "$WORK/port"
  python3 "$CLIENTS_DIR/mock/server.py" --scenario "$scenario" --record "$record" \
    --port-file "$WORK/port" --idle 600 >/dev/null 2>"$WORK/mock.err" &
  MOCK_PID=$!
  local i
  for i in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
  [ -s "$WORK/port" ] || { echo "mock server did not start: $(cat "$WORK/mock.err")" >&2; exit 1; }
  MOCK_PORT=$(cat "$WORK/port")
  MOCK_URL="http://127.0.0.1:$MOCK_PORT"
}
stop_mock() { if [ -n "$MOCK_PID" ]; then kill "$MOCK_PID" 2>/dev/null; wait "$MOCK_PID" 2>/dev/null; MOCK_PID=""; fi; }

# last_main RECORD_DIR: the newest recorded main-agent request (a file path), or nothing.
last_main() { python3 "$CLIENTS_DIR/records.py" last-main "$1"; }

# compare_to CLIENT SCENARIO CHECKPOINT REC.json REQ_PROTO RENDER.json RENDER_PROTO:
# appends one comparison record to $RESULTS_DIR/CLIENT.jsonl.
declare -A _RESULTS_STARTED=()
compare_to() {
  local client=$1 scenario=$2 checkpoint=$3 rec=$4 reqp=$5 ren=$6 renp=$7
  # The first comparison of this run starts the client's results file afresh.
  if [ -z "${_RESULTS_STARTED[$client]:-}" ]; then : > "$RESULTS_DIR/$client.jsonl"; _RESULTS_STARTED[$client]=1; fi
  python3 "$CLIENTS_DIR/compare.py" --request "$rec" --request-protocol "$reqp" \
    --render "$ren" --render-protocol "$renp" --label "$scenario/$checkpoint" \
  | jq -c --arg c "$client" --arg s "$scenario" --arg k "$checkpoint" \
      '{client:$c, scenario:$s, checkpoint:$k} + .' >> "$RESULTS_DIR/$client.jsonl"
}

# The helpers below serve the clients that speak Chat Completions and keep their sessions under an
# agent home (qwen/run.sh, pi/run.sh). They use the caller's CLIENT, D (the scenario's folder with
# home/ and rec/), SESSION, and its fail function; they set DB.

# import_home AGENT [OUT]: imports $D/home's sessions (import --from AGENT, output in
# $D/OUT.json, default import.json) into $D/ctx.db; fails on an error or any warning, then on any
# violation verify-invariants reports. Returns 1 when the import itself failed.
import_home() {
  local agent=$1 out=${2:-import} name warned
  name=$(basename "$D")
  DB="$D/ctx.db"
  HOME="$D/home" "$CTXFOLD" --db "$DB" import --from "$agent" > "$D/$out.json" 2>> "$D/import.err" \
    || { fail "$name: import failed: $(cat "$D/import.err")"; return 1; }
  warned=$(jq '.warnings | length' "$D/$out.json" 2>/dev/null || echo "?")
  [ "$warned" = 0 ] || fail "$name: the import warned: $(jq -c '.warnings' "$D/$out.json")"
  "$CTXFOLD" --db "$DB" verify-invariants > "$D/verify.json" 2>&1 \
    || fail "$name: verify-invariants: $(head -c 400 "$D/verify.json")"
}

# compare_at NAME CHECKPOINT REC.json [as-of]: renders SESSION (render --format openai --body) at
# the node that ends the recorded request (records.py node-for), read as of that node's append
# boundary when asked, and compares the render with the request.
compare_at() {
  local name=$1 checkpoint=$2 rec=$3 as_of=${4:-} id seq
  read -r id seq < <(python3 "$CLIENTS_DIR/records.py" node-for "$rec" "$DB" "$SESSION") \
    || { fail "$name: no node ends $(basename "$rec")"; return 1; }
  local at=(); [ -n "$as_of" ] && at=(--as-of "$seq")
  "$CTXFOLD" --db "$DB" --session "$SESSION" render --format openai --body --head "$id" "${at[@]}" \
    > "$D/render-$checkpoint.json" 2>> "$D/render.err" || { fail "$name: render at $id failed"; return 1; }
  compare_to "$CLIENT" "$name" "$checkpoint" "$rec" chat "$D/render-$checkpoint.json" chat
}

# compare_last NAME: compare_at for the newest main request of $D/rec.
compare_last() {
  local last; last=$(last_main "$D/rec")
  [ -n "$last" ] || { fail "$1: the mock saw no main request"; return 1; }
  compare_at "$1" last "$last"
}

# compare_carrying NAME MARKER N: compare_at (as of the node) for the first main request that
# carries each new summary text holding MARKER (the client's compactions, in order); fails when
# fewer than N were seen.
compare_carrying() {
  local name=$1 marker=$2 k=0 rec
  while read -r rec; do
    k=$((k + 1))
    compare_at "$name" "compaction$k" "$rec" as-of
  done < <(python3 "$CLIENTS_DIR/records.py" carrying "$D/rec" "$marker")
  [ "$k" -ge "$3" ] || fail "$name: $k compactions seen, $3 expected"
}

# show_logs: when the run failed (FAILED=1), the tail of every scenario's client log and import errors.
show_logs() {
  [ "$FAILED" = 1 ] || return 0
  local f
  for f in "$WORK"/*/client.log "$WORK"/*/import.err; do
    [ -s "$f" ] && { echo "--- $f"; tail -20 "$f"; }
  done >&2
}

# suite_start: a client's run begins (CLIENT set): its results file afresh, FAILED=0; fail MESSAGE
# reports a failure naming the client and marks the run failed.
suite_start() { rm -f "$RESULTS_DIR/$CLIENT.jsonl"; FAILED=0; }
fail() { echo "$CLIENT: $*" >&2; FAILED=1; }

# compare_compactions NAME N PROTOCOL CMD...: for each request path CMD prints (the first request
# after each compaction, in order), renders $SESSION of $DB at the node that ends it (records.py
# node-for; read as of that node's append boundary) and compares the two; fails unless at least
# N were seen. Uses $CLIENT, $D, $DB, $SESSION and the suite's fail.
compare_compactions() {
  local name=$1 want=$2 proto=$3 k=0 rec id seq
  shift 3
  while read -r rec; do
    k=$((k + 1))
    read -r id seq < <(python3 "$CLIENTS_DIR/records.py" node-for "$rec" "$DB" "$SESSION") \
      || { fail "$name: no node ends $(basename "$rec")"; continue; }
    "$CTXFOLD" --db "$DB" --session "$SESSION" render --format openai --body --head "$id" --as-of "$seq" \
      > "$D/render-compaction$k.json" 2>> "$D/render.err" || { fail "$name: render at $id failed"; continue; }
    compare_to "$CLIENT" "$name" "compaction$k" "$rec" "$proto" "$D/render-compaction$k.json" "$proto"
  done < <("$@")
  [ "$k" -ge "$want" ] || fail "$name: $k compactions seen, $want expected"
}

# expect_grown NAME: fails unless the last import ($D/import.json) found its one source appended
# or rewritten (the incremental re-import of a source that grew).
expect_grown() {
  local o
  o=$(jq -r '[.files[]?.outcome] | join(",")' "$D/import.json" 2>/dev/null)
  case "$o" in appended|rewritten) ;; *) fail "$1: the grown source's outcome is '$o', not appended" ;; esac
}

# every_turn NAME CMD...: runs a checks.py every-turn command (its JSON report in
# $D/every-turn.json); fails when it does.
every_turn() {
  local name=$1
  shift
  if ! "$@" > "$D/every-turn.json"; then
    fail "$name: a turn is missing from the database or a compaction is not a summary: $(cat "$D/every-turn.json")"
  else
    echo "$CLIENT $name: every turn kept: $(cat "$D/every-turn.json")"
  fi
}

# suite_end [KEEP_DIR]: the logs of a failed run, a copy of $WORK in KEEP_DIR when it is given,
# the client's figures (report.py), and the run's exit code: report.py's, or 1 after any fail.
suite_end() {
  show_logs
  [ -n "${1:-}" ] && { rm -rf "$1"; cp -r "$WORK" "$1"; }
  python3 "$CLIENTS_DIR/report.py" --client "$CLIENT"
  local rc=$?
  [ "$FAILED" = 0 ] || rc=1
  exit $rc
}
