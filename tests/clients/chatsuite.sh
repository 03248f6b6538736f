# The steps of the conformance runs that share the mock's Chat Completions records (sourced by
# qwen/run.sh and copilot/run.sh after lib.sh). The run sets:
#   CLIENT        the results name (report.py, ALLOWLIST)
#   FROM          the agent `ctxfold import --from` reads
#   CHECKS        the client's checks.py (session-of, every-turn; compactions and node-for come
#                 from chatchecks.py)
#   client_files  a function printing the folder under $D/home that holds the client's session files
#   client_run    a function running one prompt in $D/proj: client_run PROMPT [resume]
#   new_home      a function making $D (home, proj, rec) for a scenario name
# chatsuite_begin and chatsuite_end open and close the run.

# chatsuite_begin CLIENT CHECKS: sets CLIENT and FROM (the same name), CHECKS, starts the
# client's results afresh, and defines fail (FAILED=1 with the message on stderr).
chatsuite_begin() {
  CLIENT=$1 FROM=$1 CHECKS=$2 FAILED=0
  rm -f "$RESULTS_DIR/$CLIENT.jsonl"
}
fail() { echo "$CLIENT: $*" >&2; FAILED=1; }

# chatsuite_end KEEP_DIR SCENARIO...: the logs of a failed run, a copy of the scenarios' folders
# in KEEP_DIR when it is set, the client's figures (report.py); exits with the outcome.
chatsuite_end() {
  local keep=$1 s rc; shift
  show_logs
  if [ -n "$keep" ]; then rm -rf "$keep"; mkdir -p "$keep"; for s in "$@"; do cp -r "$WORK/$s" "$keep/"; done; fi
  python3 "$CLIENTS_DIR/report.py" --client "$CLIENT"
  rc=$?
  [ "$FAILED" = 0 ] || rc=1
  exit $rc
}

# import_and_compare NAME LAST_PROMPT: imports the HOME's sessions and compares the last main request.
import_and_compare() {
  local name=$1 marker=$2
  DB="$D/ctx.db"
  HOME="$D/home" "$CTXFOLD" --db "$DB" import --from "$FROM" > "$D/import.json" 2> "$D/import.err" \
    || fail "$name: import failed: $(cat "$D/import.err")"
  local warned; warned=$(jq '.warnings | length' "$D/import.json" 2>/dev/null || echo "?")
  [ "$warned" = 0 ] || fail "$name: the import warned: $(jq -c '.warnings' "$D/import.json")"
  "$CTXFOLD" --db "$DB" verify-invariants > "$D/verify.json" 2>&1 || fail "$name: verify-invariants: $(head -c 400 "$D/verify.json")"
  SESSION=$(python3 "$CHECKS" session-of "$(client_files)" "$marker")
  [ -n "$SESSION" ] || { fail "$name: no session file holds the last prompt"; return; }
  local last; last=$(last_main "$D/rec")
  [ -n "$last" ] || { fail "$name: the mock saw no main request"; return; }
  local id seq
  read -r id seq < <(python3 "$CLIENTS_DIR/chatchecks.py" node-for "$last" "$DB" "$SESSION") \
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
    if [ $first = 1 ]; then client_run "$p"; first=0; else client_run "$p" resume; fi
  done
  stop_mock
  import_and_compare "$name" "${*: -1}"
}

# compare_compactions NAME N: the render at the node that ends the first request after each
# compaction (read as of that node's append boundary) against that request.
compare_compactions() {
  local name=$1 k=0 rec id seq
  while read -r rec; do
    k=$((k + 1))
    read -r id seq < <(python3 "$CLIENTS_DIR/chatchecks.py" node-for "$rec" "$DB" "$SESSION") \
      || { fail "$name: no node ends $(basename "$rec")"; continue; }
    "$CTXFOLD" --db "$DB" --session "$SESSION" render --format openai --body --head "$id" --as-of "$seq" \
      > "$D/render-compaction$k.json" 2>> "$D/render.err" || { fail "$name: render at $id failed"; continue; }
    compare_to "$CLIENT" "$name" "compaction$k" "$rec" chat "$D/render-compaction$k.json" chat
  done < <(python3 "$CLIENTS_DIR/chatchecks.py" compactions "$D/rec")
  [ "$k" -ge "${2:-0}" ] || fail "$name: $k compactions seen, ${2:-0} expected"
}

# check_every_turn NAME N: every prompt and reply is in the database and N compactions are
# summary view nodes (the client's checks.py every-turn).
check_every_turn() {
  if ! python3 "$CHECKS" every-turn "$D/rec" "$(client_files)" "$D/ctx.db" "$SESSION" "$2" > "$D/every-turn.json"; then
    fail "$1: a turn is missing from the database or a compaction is not a summary: $(cat "$D/every-turn.json")"
  else
    echo "$CLIENT $1: every turn kept: $(cat "$D/every-turn.json")"
  fi
}

# check_grown NAME: the session file grew after an earlier import; the second import read it as
# such (appended or re-read), nothing duplicated.
check_grown() {
  local outcome; outcome=$(jq -r '[.files[]?.outcome] | join(",")' "$D/import.json" 2>/dev/null)
  case "$outcome" in appended|rewritten) ;; *) fail "$1: the grown file's outcome is '$outcome', not appended" ;; esac
}

show_logs() { [ "$FAILED" = 1 ] && for f in "$WORK"/*/client.log "$WORK"/*/import.err; do
  [ -s "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done >&2; }
