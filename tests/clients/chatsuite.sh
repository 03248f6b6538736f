# The steps of the conformance runs that share the mock's Chat Completions records (sourced by
# qwen/run.sh and copilot/run.sh after lib.sh). The run sets:
#   CLIENT        the results name (report.py, ALLOWLIST)
#   FROM          the agent `ctxfold import --from` reads
#   CHECKS        the client's checks.py (session-of, every-turn; compactions come from
#                 chatchecks.py)
#   client_files  a function printing the folder under $D/home that holds the client's session files
#   client_run    a function running one prompt in $D/proj: client_run PROMPT [resume]
#   new_home      a function making $D (home, proj, rec) for a scenario name
# chatsuite_begin and chatsuite_end open and close the run.

# chatsuite_begin CLIENT CHECKS: sets CLIENT and FROM (the same name), CHECKS, starts the
# client's results afresh (lib.sh suite_start; fail is lib.sh's).
chatsuite_begin() {
  CLIENT=$1 FROM=$1 CHECKS=$2
  suite_start
}

# chatsuite_end KEEP_DIR: lib.sh suite_end (the logs of a failed run, $WORK kept in KEEP_DIR when
# it is set, the client's figures; exits with the outcome).
chatsuite_end() { suite_end "$1"; }

# import_and_compare NAME LAST_PROMPT: imports the HOME's sessions (lib.sh import_home) and
# compares the last main request (lib.sh compare_last) of the session holding LAST_PROMPT.
import_and_compare() {
  local name=$1 marker=$2
  import_home "$FROM" || return
  SESSION=$(python3 "$CHECKS" session-of "$(client_files)" "$marker")
  [ -n "$SESSION" ] || { fail "$name: no session file holds the last prompt"; return; }
  compare_last "$name"
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

# compare_chat_compactions NAME N: lib.sh compare_compactions for the first request after each
# compaction (chatchecks.py compactions: the first carrying each new <state_snapshot>).
compare_chat_compactions() {
  compare_compactions "$1" "${2:-0}" chat python3 "$CLIENTS_DIR/chatchecks.py" compactions "$D/rec"
}

# check_every_turn NAME N: every prompt and reply is in the database and N compactions are
# summary view nodes (the client's checks.py every-turn, through lib.sh every_turn).
check_every_turn() {
  every_turn "$1" python3 "$CHECKS" every-turn "$D/rec" "$(client_files)" "$D/ctx.db" "$SESSION" "$2"
}
