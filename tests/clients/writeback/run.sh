#!/usr/bin/env bash
# Write-back conformance: a session compacted by ctxfold resumes in the real clients. For Claude
# Code and for Codex: the client runs a few turns against the loopback mock, ctxfold imports what
# it wrote, compacts it (`compact --force`, a small window) with each strategy (rolling, lcm,
# snapcompact), writes it back (`export --format claude-code|codex --into-home`), and the client
# resumes the new session (`claude --resume ID -p`, `codex exec resume ID`). The first request
# after the resume is compared twice:
#   source  with ctxfold's render of the compacted source session (prefix.py): the request must
#           begin with the render, item by item (the client's own system prompt aside), and go on
#           with the new turn only;
#   import  with the render of the resumed session imported again, at the node the client had
#           (compare.py, as every other scenario of the suite).
# Results: $RESULTS_DIR/writeback-claude-code.jsonl and writeback-codex.jsonl (records of client
# claude-code / codex, so ALLOWLIST applies); exit: report.py's status for both.
# Usage: CTXFOLD=build/ctxfold bash tests/clients/writeback/run.sh [claude|codex]...
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
source "$HERE/../lib.sh"
need_clients
CLAUDE="$CLIENTS_DIR/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
CODEX="$NODE_BIN/codex"
STRATEGIES=${WRITEBACK_STRATEGIES:-rolling lcm snapcompact}
# windows small enough that every strategy folds the first turns and keeps the last ones raw
WINDOW=${WRITEBACK_WINDOW:-30000}
CODEX_WINDOW=${WRITEBACK_CODEX_WINDOW:-4000}
FAILED=0

# record FILE CLIENT SCENARIO CHECKPOINT: stdin's comparison (compare.py shape) as one result line.
record() {
  jq -c --arg c "$2" --arg s "$3" --arg k "$4" '{client:$c, scenario:$s, checkpoint:$k} + .' >> "$RESULTS_DIR/$1.jsonl"
}

# ---- Claude Code ----
cc() { # ARGS...: one bounded headless run in the scenario's HOME and project
  (cd "$CWD" && HOME="$SH" CLAUDE_CONFIG_DIR="$SH/.claude" ANTHROPIC_BASE_URL="$MOCK_URL" \
     ANTHROPIC_API_KEY=dummy IS_SANDBOX=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
     DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1 \
     DISABLE_BUG_COMMAND=1 CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1 CLAUDE_CODE_ENABLE_TELEMETRY=0 \
     timeout 120 "$CLAUDE" --model claude-sonnet-4-6 --dangerously-skip-permissions "$@" \
     </dev/null >>"$D/client.out" 2>>"$D/client.err") \
  || { echo "writeback/claude: claude $* exited $?: $(tail -3 "$D/client.err")" >&2; FAILED=1; }
}

run_claude() {
  local out=writeback-claude-code
  : > "$RESULTS_DIR/$out.jsonl"
  D="$WORK/claude"; SH="$D/home"; CWD="$D/proj"; REC="$D/rec"; local db="$D/ctxfold.db"
  mkdir -p "$SH/.claude" "$CWD" "$REC"
  printf 'line one of the notes\nline two of the notes\n' > "$CWD/notes.txt"
  sed "s#@CWD@#$CWD#g" "$HERE/claude.json" > "$D/scenario.json"
  start_mock "$D/scenario.json" "$REC"
  cc -p "WB-A start the log"
  local sid; sid=$(ls -t "$SH/.claude/projects/"*/*.jsonl | head -1 | xargs basename | sed 's/\.jsonl$//')
  cc --resume "$sid" -p "WB-B read the notes"
  cc --resume "$sid" -p "WB-C extend the log"
  cc --resume "$sid" -p "WB-D add a third line"
  cc --resume "$sid" -p "WB-E read the log back"
  "$CTXFOLD" --db "$db" import --from claude-code "$SH/.claude/projects" > "$D/import.json" 2>"$D/import.err" \
    || { echo "writeback/claude: import failed: $(tail -3 "$D/import.err")" >&2; FAILED=1; return; }
  local s new rec
  for s in $STRATEGIES; do
    cp "$db" "$D/$s.db"
    "$CTXFOLD" --db "$D/$s.db" --session "$sid" compact --strategy "$s" --force --window "$WINDOW" > "$D/$s.compact.json" 2>&1 \
      || { echo "writeback/claude: compact $s failed: $(tail -3 "$D/$s.compact.json")" >&2; FAILED=1; continue; }
    [ "$(jq -r .status "$D/$s.compact.json")" = compacted ] \
      || { echo "writeback/claude: compact $s did not compact: $(jq -r .reason "$D/$s.compact.json")" >&2; FAILED=1; continue; }
    "$CTXFOLD" --db "$D/$s.db" --session "$sid" render --strategy "$s" --model claude-sonnet-4-6 --format anthropic --body \
      --max-row-bytes 0 > "$D/$s.source.json"
    "$CTXFOLD" --db "$D/$s.db" --session "$sid" export --format claude-code --strategy "$s" --model claude-sonnet-4-6 \
      --into-home "$SH/.claude" --cwd "$CWD" > "$D/$s.export.jsonl" 2>"$D/$s.export.err" \
      || { echo "writeback/claude: export after $s failed: $(cat "$D/$s.export.err")" >&2; FAILED=1; continue; }
    new=$(jq -r 'select(.type=="writeback") | .id' "$D/$s.export.jsonl")
    echo "writeback/claude $s: $(jq -c '{compacted, records, messages, bytes}' <<<"$(head -1 "$D/$s.export.jsonl")"), $(grep -o '"type":"tool_use"' "$D/$s.source.json" | wc -l) tool calls in the render" >&2
    cc --resume "$new" -p "WB-RESUME-$s continue after the $s compaction"
    rec=$(python3 "$CLIENTS_DIR/records.py" after "$REC" "WB-RESUME-$s")
    [ -n "$rec" ] || { echo "writeback/claude: no request after resuming $new ($s)" >&2; FAILED=1; continue; }
    python3 "$HERE/prefix.py" --request "$rec" --protocol anthropic --source "$D/$s.source.json" \
      --marker "WB-RESUME-$s" --label "$s/source" | record $out claude-code "writeback-$s" source
    # the resumed session, imported again, rendered at the node the client had
    rm -f "$D/$s.back.db"
    "$CTXFOLD" --db "$D/$s.back.db" import "$SH/.claude/projects/"*/"$new.jsonl" > /dev/null 2>"$D/$s.back.err" \
      || { echo "writeback/claude: re-import of $new failed: $(tail -3 "$D/$s.back.err")" >&2; FAILED=1; continue; }
    local found head
    if found=$(python3 "$CLIENTS_DIR/claude/heads.py" head "$D/$s.back.db" "$rec"); then head=${found#*$'\t'}; else head=""; fi
    "$CTXFOLD" --db "$D/$s.back.db" render --format anthropic --body ${head:+--head "$head"} > "$D/$s.back.json"
    python3 "$CLIENTS_DIR/compare.py" --request "$rec" --request-protocol anthropic --render "$D/$s.back.json" \
      --render-protocol anthropic --label "$s/import" | record $out claude-code "writeback-$s" import
  done
  stop_mock
  [ -n "${CTXFOLD_CLIENTS_KEEP:-}" ] && { mkdir -p "$CTXFOLD_CLIENTS_KEEP"; cp -r "$D" "$CTXFOLD_CLIENTS_KEEP/writeback-claude"; }
}

# ---- Codex ----
source "$CLIENTS_DIR/codex/config.sh"

cx() { # ARGS...: one bounded `codex exec` in the scenario's HOME and project
  (cd "$D/proj" && HOME="$D/home" CODEX_HOME="$D/codex" MOCK_API_KEY=sk-mock-not-a-secret \
     timeout 60 "$CODEX" exec "$@" < /dev/null >> "$D/client.out" 2>> "$D/client.err") \
  || { echo "writeback/codex: codex exec $* exited $?: $(tail -c 400 "$D/client.err")" >&2; FAILED=1; }
}

run_codex() {
  local out=writeback-codex
  : > "$RESULTS_DIR/$out.jsonl"
  D="$WORK/codex"; REC="$D/rec"; local db="$D/ctxfold.db"
  mkdir -p "$D/home" "$D/codex" "$D/proj" "$REC"
  start_mock "$HERE/codex.json" "$REC"
  write_config "$D/codex" "$HERE/codex.json"
  cx --skip-git-repo-check --json "wb-1: start a log with 1 to 300"
  cx resume --last --skip-git-repo-check --json "wb-2: append 301 to 600"
  cx resume --last --skip-git-repo-check --json "wb-3: append 601 to 900"
  cx resume --last --skip-git-repo-check --json "wb-4: count the lines"
  mapfile -t rollouts < <(find "$D/codex/sessions" -name '*.jsonl' | sort)
  [ ${#rollouts[@]} -gt 0 ] || { echo "writeback/codex: no rollout written" >&2; FAILED=1; stop_mock; return; }
  "$CTXFOLD" --db "$db" import "${rollouts[@]}" > "$D/import.json" 2>"$D/import.err" \
    || { echo "writeback/codex: import failed: $(tail -3 "$D/import.err")" >&2; FAILED=1; stop_mock; return; }
  local s new rec path
  for s in $STRATEGIES; do
    cp "$db" "$D/$s.db"
    "$CTXFOLD" --db "$D/$s.db" compact --strategy "$s" --force --window "$CODEX_WINDOW" > "$D/$s.compact.json" 2>&1 \
      || { echo "writeback/codex: compact $s failed: $(tail -3 "$D/$s.compact.json")" >&2; FAILED=1; continue; }
    [ "$(jq -r .status "$D/$s.compact.json")" = compacted ] \
      || { echo "writeback/codex: compact $s did not compact: $(jq -r .reason "$D/$s.compact.json")" >&2; FAILED=1; continue; }
    "$CTXFOLD" --db "$D/$s.db" render --strategy "$s" --model gpt-5.5 --format responses --body --max-row-bytes 0 > "$D/$s.source.json"
    "$CTXFOLD" --db "$D/$s.db" export --format codex --strategy "$s" --model gpt-5.5 --into-home "$D/codex" \
      --cwd "$D/proj" > "$D/$s.export.jsonl" 2>"$D/$s.export.err" \
      || { echo "writeback/codex: export after $s failed: $(cat "$D/$s.export.err")" >&2; FAILED=1; continue; }
    new=$(jq -r 'select(.type=="writeback") | .id' "$D/$s.export.jsonl")
    path=$(jq -r 'select(.type=="writeback") | .path' "$D/$s.export.jsonl")
    echo "writeback/codex $s: $(jq -c '{compacted, records, messages, bytes}' <<<"$(head -1 "$D/$s.export.jsonl")"), $(grep -o '"type":"function_call"' "$D/$s.source.json" | wc -l) tool calls in the render" >&2
    cx resume "$new" --skip-git-repo-check --json "wb-resume-$s: continue after the $s compaction"
    rec=$(python3 "$CLIENTS_DIR/records.py" after "$REC" "wb-resume-$s")
    [ -n "$rec" ] || { echo "writeback/codex: no request after resuming $new ($s)" >&2; FAILED=1; continue; }
    python3 "$HERE/prefix.py" --request "$rec" --protocol responses --source "$D/$s.source.json" \
      --marker "wb-resume-$s" --label "$s/source" | record $out codex "writeback-$s" source
    rm -f "$D/$s.back.db"
    "$CTXFOLD" --db "$D/$s.back.db" import "$path" > /dev/null 2>"$D/$s.back.err" \
      || { echo "writeback/codex: re-import of $new failed: $(tail -3 "$D/$s.back.err")" >&2; FAILED=1; continue; }
    # the request was built from the history up to the resume prompt: the node holding it
    local head
    head=$("$CTXFOLD" --db "$D/$s.back.db" grep "wb-resume-$s" 2>/dev/null | jq -r 'select(.type=="match") | .id' | head -1)
    "$CTXFOLD" --db "$D/$s.back.db" render --format responses --body ${head:+--head "$head"} > "$D/$s.back.json"
    python3 "$CLIENTS_DIR/compare.py" --request "$rec" --request-protocol responses --render "$D/$s.back.json" \
      --render-protocol responses --label "$s/import" | record $out codex "writeback-$s" import
  done
  stop_mock
  [ -n "${CTXFOLD_CLIENTS_KEEP:-}" ] && { mkdir -p "$CTXFOLD_CLIENTS_KEEP"; cp -r "$D" "$CTXFOLD_CLIENTS_KEEP/writeback-codex"; }
}

for c in ${@:-claude codex}; do "run_$c"; done
clients=()
for c in ${@:-claude codex}; do [ "$c" = claude ] && clients+=(--client writeback-claude-code) || clients+=(--client writeback-codex); done
python3 "$CLIENTS_DIR/report.py" "${clients[@]}"
rc=$?
[ "$FAILED" = 0 ] || rc=1
exit $rc
