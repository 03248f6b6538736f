#!/usr/bin/env bash
# `ctxfold hook claude-code` under the real Claude Code: the hooks are installed with
# `ctxfold hook install claude-code --write` into the isolated HOME's settings.json, and the
# client is driven against the mock model:
#   compact      a turn with a tool call, `/compact` on the resumed session, one more turn: the
#                hooks archive the session as it goes (the archive ends with every node an import
#                of the transcript gives), and the first request after the compaction holds the
#                context the SessionStart hook injected: the identifiers the summary dropped
#                (the command and the file the tool call named) with their recall commands.
#   autocompact  the mock reports the window nearly full mid-turn; Claude Code compacts and goes
#                on in the same process: its next request holds what SessionStart (source
#                compact) injected, the identifiers of the history just compacted.
#   codex        the same under the real Codex CLI (codex_scenario below).
# `ctxfold hook uninstall AGENT --write` then leaves the settings as they were.
# Exit 1 on any failed check; 77 (skipped) without the clients.
# Usage: CTXFOLD=build/ctxfold bash tests/clients/hooks/run.sh [compact] [autocompact] [codex]
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../lib.sh"
need_clients
CLAUDE="$CLIENTS_DIR/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
CTXFOLD_ABS=$(cd "$(dirname "$CTXFOLD")" && pwd)/$(basename "$CTXFOLD")
FAILED=0
failure() { echo "FAIL: $*" >&2; FAILED=1; [ -n "${CC_KEEP:-}" ] && { mkdir -p "$CC_KEEP"; cp -r "$WORK/$S" "$CC_KEEP/"; }; }

# setup NAME: a fresh HOME with the hooks installed, a project folder, the mock started.
setup() {
  S=$1
  SH="$WORK/$S/home"; CWD="$WORK/$S/proj"; REC="$WORK/$S/rec"; DB="$WORK/$S/archive.db"
  mkdir -p "$SH/.claude" "$CWD/plans" "$REC"
  printf '# plan\nstep one\n' > "$CWD/plans/hook-plan.md"; cp "$CWD/plans/hook-plan.md" "$CWD/plans/auto-plan.md"
  printf '{"model": "claude-sonnet-4-6", "futureKey": {"kept": true}}\n' > "$SH/.claude/settings.json"
  cp "$SH/.claude/settings.json" "$WORK/$S/settings.orig.json"
  HOME="$SH" CLAUDE_CONFIG_DIR="$SH/.claude" "$CTXFOLD_ABS" --db "$DB" hook install claude-code --write \
    > "$WORK/$S/install.json" 2>"$WORK/$S/install.err" || failure "$S: hook install failed: $(cat "$WORK/$S/install.err")"
  start_mock "$HERE/$S.json" "$REC"
}

cc() {
  (cd "$CWD" && HOME="$SH" CLAUDE_CONFIG_DIR="$SH/.claude" ANTHROPIC_BASE_URL="$MOCK_URL" \
     ANTHROPIC_API_KEY=dummy IS_SANDBOX=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
     DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1 \
     DISABLE_BUG_COMMAND=1 CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1 CLAUDE_CODE_ENABLE_TELEMETRY=0 \
     timeout 120 "$CLAUDE" --model claude-sonnet-4-6 --dangerously-skip-permissions "$@" \
     </dev/null >>"$WORK/$S/client.out" 2>>"$WORK/$S/client.err") \
  || echo "claude ($S $*) exited $?: $(tail -3 "$WORK/$S/client.err")" >&2
}

transcript() { ls -t "$SH/.claude/projects/"*/*.jsonl 2>/dev/null | head -1; }
nodes() { sqlite3 "$1" "SELECT count(*) FROM nodes WHERE session='$2'" 2>/dev/null || echo 0; }

# check_archive: the archive the hooks filled while the transcript grew holds what one import of
# the final transcript gives up to its last reply, each node identical (by id and digest, none
# other), and it verifies (docs/formats/claude-code.md "Read while it is written").
check_archive() {
  local t sid want got missing
  t=$(transcript); sid=$(basename "$t" .jsonl)
  "$CTXFOLD_ABS" --db "$WORK/$S/ref.db" import "$t" >/dev/null 2>&1
  want=$(nodes "$WORK/$S/ref.db" "$sid"); got=$(nodes "$DB" "$sid")
  sqlite3 "$WORK/$S/ref.db" "SELECT id FROM nodes WHERE session='$sid'" | sort > "$WORK/$S/ref.ids"
  sqlite3 "$DB" "SELECT id FROM nodes WHERE session='$sid'" | sort > "$WORK/$S/archive.ids"
  # what follows the last reply waits for more lines (docs/formats/claude-code.md "Read while it
  # is written"): every other node an import gives is archived
  jq -r 'select(.uuid != null) | [.type, .uuid] | @tsv' "$t" | awk -F'\t' '{ if ($1 == "assistant") n = NR; u[NR] = $2 }
    END { for (i = n + 1; i <= NR; i++) print u[i] }' | sort > "$WORK/$S/after.ids"
  missing=$(comm -23 "$WORK/$S/ref.ids" "$WORK/$S/archive.ids" | comm -23 - "$WORK/$S/after.ids" | wc -l)
  if [ "$want" -gt 0 ] && [ "$missing" = 0 ]; then echo "$S: the hooks archived every node of $sid up to the last reply ($got stored, an import gives $want)"
  else failure "$S: $missing of the $want nodes an import gives are not in the archive"; fi
  sqlite3 "$WORK/$S/ref.db" "SELECT id||' '||digest FROM nodes WHERE session='$sid'" | sort > "$WORK/$S/ref.dig"
  sqlite3 "$DB" "SELECT id||' '||digest FROM nodes WHERE session='$sid'" | sort > "$WORK/$S/archive.dig"
  if [ -z "$(comm -13 "$WORK/$S/ref.dig" "$WORK/$S/archive.dig")" ]; then echo "$S: every archived node is the node one import gives"
  else failure "$S: the archive differs from one import: $(comm -13 "$WORK/$S/ref.dig" "$WORK/$S/archive.dig" | head -3 | tr '\n' ' ')"; fi
  if "$CTXFOLD_ABS" --db "$DB" verify-invariants --all-sessions >"$WORK/$S/verify.json" 2>&1; then
    echo "$S: the archive verifies"
  else
    failure "$S: the archive filled while the transcript grew does not verify:" \
      "$(jq -c '[.checks[] | select(.ok == false) | .id]' "$WORK/$S/verify.json" 2>/dev/null)"
  fi
  grep -q '"hook_non_blocking_error"\|"hook_blocking_error"' "$t" && failure "$S: Claude Code recorded a hook error"
  return 0
}

# check_uninstall: the settings are back to what they were.
check_uninstall() {
  HOME="$SH" CLAUDE_CONFIG_DIR="$SH/.claude" "$CTXFOLD_ABS" --db "$DB" hook uninstall claude-code --write >/dev/null 2>&1
  [ "$(jq -S . "$SH/.claude/settings.json")" = "$(jq -S . "$WORK/$S/settings.orig.json")" ] \
    && echo "$S: uninstall restored the settings" || failure "$S: uninstall left $(cat "$SH/.claude/settings.json")"
}

compact_scenario() {
  setup compact
  cc -p "HK-COMPACT-A first part"
  local sid; sid=$(basename "$(transcript)" .jsonl)
  [ "$(nodes "$DB" "$sid")" -gt 0 ] && echo "compact: the Stop hook archived $(nodes "$DB" "$sid") nodes after the first turn" \
    || failure "compact: nothing archived after the first turn"
  cc --resume "$sid" -p "/compact"
  cc --resume "$sid" -p "HK-COMPACT-B after the compaction"
  stop_mock
  local summary; summary=$(jq -r 'select(.isCompactSummary == true) | .uuid' "$(transcript)" | head -1)
  # (the summary reaches the archive with the reply after it: records written after it may still
  # fold into it, docs/formats/claude-code.md "Read while it is written"; so the resumed session's
  # SessionStart lists the identifiers of the history just compacted)
  if req=$(python3 "$HERE/check_request.py" "$REC" "history just compacted" "plans/hook-plan.md" \
             "--session $sid grep -- "); then
    echo "compact: the compacted history's identifiers reached the first request after the compaction ($(basename "$req"))"
  else failure "compact: $(tail -3 "$WORK/$S/client.err")"; fi
  check_archive
  check_uninstall
}

autocompact_scenario() {
  setup autocompact
  cc -p "HK-AUTO do the steps"
  stop_mock
  local sid; sid=$(basename "$(transcript)" .jsonl)
  if req=$(python3 "$HERE/check_request.py" "$REC" "history just compacted" "plans/auto-plan.md" "--session $sid grep -- "); then
    echo "autocompact: the compacted history's identifiers reached the request after the compaction ($(basename "$req"))"
  else failure "autocompact: $(tail -3 "$WORK/$S/client.err")"; fi
  check_archive
  check_uninstall
}

# codex: `hook install codex --write` into $CODEX_HOME/hooks.json beside a hook of the user's; a
# `codex exec` turn that auto-compacts mid-turn (SessionStart with source compact), then a resumed
# turn (source resume). Codex runs hooks added to hooks.json only once trusted; the runs pass
# --dangerously-bypass-hook-trust (this suite installed them itself). Checked: the first request
# after the compaction holds the injected identifiers, the archive holds exactly what one import of
# the rollout gives and verifies, and uninstall restores hooks.json.
codex_scenario() {
  S=codex
  local CX="$WORK/$S/codex" rollout sid
  SH="$WORK/$S/home"; CWD="$WORK/$S/proj"; REC="$WORK/$S/rec"; DB="$WORK/$S/archive.db"
  mkdir -p "$SH" "$CX" "$CWD/plans" "$REC"
  printf '# plan\nstep one\n' > "$CWD/plans/codex-plan.md"
  printf '{"description": "the user'"'"'s own", "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}}\n' > "$CX/hooks.json"
  cp "$CX/hooks.json" "$WORK/$S/hooks.orig.json"
  HOME="$SH" CODEX_HOME="$CX" "$CTXFOLD_ABS" --db "$DB" hook install codex --write \
    > "$WORK/$S/install.json" 2>"$WORK/$S/install.err" || failure "$S: hook install codex failed: $(cat "$WORK/$S/install.err")"
  start_mock "$HERE/codex.json" "$REC"
  write_config "$CX" "$HERE/codex.json"
  local step prompt args
  for step in 1 2; do
    args=(exec)
    if [ $step = 1 ]; then prompt="HKX-ONE read the plan"; else prompt="HKX-TWO keep going"; args+=(resume --last); fi
    args+=(--skip-git-repo-check --json --dangerously-bypass-hook-trust "$prompt")
    (cd "$CWD" && HOME="$SH" CODEX_HOME="$CX" MOCK_API_KEY=sk-mock-not-a-secret \
       timeout 120 "$NODE_BIN/codex" "${args[@]}" </dev/null >>"$WORK/$S/client.out" 2>>"$WORK/$S/client.err") \
      || failure "$S: codex step $step exited $?: $(tail -3 "$WORK/$S/client.err")"
  done
  stop_mock
  rollout=$(find "$CX/sessions" -name 'rollout-*.jsonl' | head -1)
  [ -n "$rollout" ] || { failure "$S: Codex wrote no rollout"; return 0; }
  "$CTXFOLD_ABS" --db "$WORK/$S/ref.db" import "$rollout" >/dev/null 2>&1
  sid=$(sqlite3 "$WORK/$S/ref.db" "SELECT session FROM nodes LIMIT 1")
  # (Codex writes the compacted record before SessionStart runs, so the hook names what that
  # summary left out)
  if req=$(python3 "$HERE/check_request.py" "$REC" --after "HKX-SUMMARY" "compaction summary left out" \
             "plans/codex-plan.md" "--session $sid grep -- plans/codex-plan.md"); then
    echo "$S: the identifiers Codex's summary dropped reached the first request after the compaction ($(basename "$req"))"
  else failure "$S: $(tail -3 "$WORK/$S/client.err")"; fi
  local hits
  hits=$("$CTXFOLD_ABS" --db "$DB" --session "$sid" grep -- plans/codex-plan.md 2>/dev/null | grep -c '"type":"match"')
  [ "${hits:-0}" -gt 0 ] && echo "$S: the injected recall command finds its identifier ($hits hits)" \
    || failure "$S: the injected recall command finds nothing"
  sqlite3 "$WORK/$S/ref.db" "SELECT id||' '||digest FROM nodes" | sort > "$WORK/$S/ref.dig"
  sqlite3 "$DB" "SELECT id||' '||digest FROM nodes" 2>/dev/null | sort > "$WORK/$S/archive.dig"
  if [ -s "$WORK/$S/ref.dig" ] && cmp -s "$WORK/$S/ref.dig" "$WORK/$S/archive.dig"; then
    echo "$S: the hooks archived exactly the $(wc -l < "$WORK/$S/ref.dig") nodes one import of the rollout gives"
  else failure "$S: the archive ($(wc -l < "$WORK/$S/archive.dig") nodes) differs from one import ($(wc -l < "$WORK/$S/ref.dig"))"; fi
  "$CTXFOLD_ABS" --db "$DB" verify-invariants --all-sessions >"$WORK/$S/verify.json" 2>&1 \
    && echo "$S: the archive verifies" || failure "$S: the archive does not verify"
  HOME="$SH" CODEX_HOME="$CX" "$CTXFOLD_ABS" --db "$DB" hook uninstall codex --write >/dev/null 2>&1
  [ "$(jq -S . "$CX/hooks.json")" = "$(jq -S . "$WORK/$S/hooks.orig.json")" ] \
    && echo "$S: uninstall restored hooks.json" || failure "$S: uninstall left $(cat "$CX/hooks.json")"
}

source "$CLIENTS_DIR/codex/config.sh"
for s in ${@:-compact autocompact codex}; do "${s}_scenario"; done
exit $FAILED
