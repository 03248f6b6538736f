#!/usr/bin/env bash
# `ctxfold mcp` driven by real MCP clients, on an archive of the real Claude Code
# auto-compaction session (../shared/data/transcripts, read in place):
#   claude     Claude Code started with --mcp-config naming `ctxfold mcp`; the mock model's first
#              answer asks for mcp__ctxfold__grep, and the request Claude Code sends next must hold
#              the tool result: ctxfold's grep document with the hit, covered by the imported
#              summary (check_request.py).
#   inspector  the MCP Inspector's CLI (@modelcontextprotocol/inspector-cli): tools/list, every
#              tool called once without a tool error, every input schema valid JSON Schema
#              2020-12 (schemas.mjs, Ajv strict), and a bad argument reported as a tool error.
# Exit 1 on any failed check; 77 (skipped) without the clients or the transcripts.
# Usage: CTXFOLD=build/ctxfold bash tests/clients/mcp/run.sh [claude] [inspector]
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../lib.sh"
need_clients
INSPECTOR="$CLIENTS_DIR/node_modules/@modelcontextprotocol/inspector-cli/build/index.js"
[ -f "$INSPECTOR" ] || { echo "SKIP: the MCP Inspector CLI is not installed (cd tests/clients && npm install --no-save)" >&2; exit 77; }
TRANSCRIPTS=${CTXFOLD_TRANSCRIPTS:-$CLIENTS_DIR/../../../shared/data/transcripts}
T="$TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
[ -f "$T" ] || { echo "SKIP: no transcript at $T" >&2; exit 77; }
CLAUDE="$CLIENTS_DIR/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
CTXFOLD_ABS=$(cd "$(dirname "$CTXFOLD")" && pwd)/$(basename "$CTXFOLD")
DB="$WORK/archive.db"
PATTERN="tmux waiting overlay summaries"  # only in history the imported summary stands for
FAILED=0
failure() { echo "FAIL: $*" >&2; FAILED=1; }

"$CTXFOLD_ABS" --db "$DB" import "$T" >/dev/null 2>"$WORK/import.err" || { echo "import failed: $(cat "$WORK/import.err")" >&2; exit 1; }
SUMMARY=$(sed -n 1585p "$T" | jq -r .uuid)
HIT=$("$CTXFOLD_ABS" --db "$DB" grep "$PATTERN" | jq -r 'select(.type=="match") | .id')
[ -n "$HIT" ] || { echo "the archive has no hit for '$PATTERN'" >&2; exit 1; }

claude_scenario() {
  local S=claude SH="$WORK/claude/home" CWD="$WORK/claude/proj" REC="$WORK/claude/rec"
  mkdir -p "$SH/.claude" "$CWD" "$REC"
  jq -n --arg c "$CTXFOLD_ABS" --arg db "$DB" \
    '{mcpServers: {ctxfold: {type: "stdio", command: $c, args: ["--db", $db, "mcp"]}}}' > "$WORK/claude/mcp.json"
  start_mock "$HERE/grep.json" "$REC"
  (cd "$CWD" && HOME="$SH" CLAUDE_CONFIG_DIR="$SH/.claude" ANTHROPIC_BASE_URL="$MOCK_URL" \
     ANTHROPIC_API_KEY=dummy IS_SANDBOX=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
     DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1 \
     DISABLE_BUG_COMMAND=1 CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1 CLAUDE_CODE_ENABLE_TELEMETRY=0 \
     ENABLE_TOOL_SEARCH=false \
     timeout 120 "$CLAUDE" --model claude-sonnet-4-6 --dangerously-skip-permissions \
       --mcp-config "$WORK/claude/mcp.json" --strict-mcp-config -p "CC-MCP find the overlay notes in the archive" \
     </dev/null >"$WORK/claude/client.out" 2>"$WORK/claude/client.err") \
  || echo "claude (mcp) exited $?: $(tail -3 "$WORK/claude/client.err")" >&2
  stop_mock
  if python3 "$HERE/check_request.py" "$REC" "$HIT" "$SUMMARY"; then
    echo "claude: the grep hit $HIT reached Claude Code's next request"
  else
    failure "claude: $(tail -5 "$WORK/claude/client.err")"
    [ -n "${CC_KEEP:-}" ] && { mkdir -p "$CC_KEEP"; cp -r "$WORK/claude" "$CC_KEEP/"; }
  fi
}

# inspect METHOD [ARGS...]: one Inspector CLI run against `ctxfold mcp` (stdout in $WORK/i.out).
inspect() {
  local method=$1; shift
  # The server's own options go after `--`, which the Inspector passes on untouched. It finds its
  # package.json by a path relative to the working directory: run it from its build/ folder.
  (cd "$(dirname "$INSPECTOR")" && timeout 60 node index.js "$CTXFOLD_ABS" --method "$method" "$@" -- --db "$DB" mcp) \
    >"$WORK/i.out" 2>"$WORK/i.err"
}

inspector_scenario() {
  inspect tools/list || { failure "inspector: tools/list failed: $(tail -3 "$WORK/i.err")"; return; }
  cp "$WORK/i.out" "$WORK/tools.json"
  local names; names=$(jq -r '[.tools[].name] | join(" ")' "$WORK/tools.json")
  [ "$names" == "grep expand describe list sessions dropped" ] || failure "inspector: tools listed: '$names'"
  node "$HERE/schemas.mjs" "pattern=\"$PATTERN\"" "id=\"$SUMMARY\"" < "$WORK/tools.json" || failure "inspector: a schema is not valid"
  local args
  for tool in $(jq -r '.tools[].name' "$WORK/tools.json"); do
    case $tool in
      grep) args=(--tool-arg "pattern=$PATTERN") ;;
      expand|describe) args=(--tool-arg "id=$SUMMARY") ;;
      *) args=() ;;
    esac
    if ! inspect tools/call --tool-name "$tool" "${args[@]}"; then
      failure "inspector: $tool failed: $(tail -3 "$WORK/i.err")"; continue
    fi
    if [ "$(jq -r '.isError' "$WORK/i.out")" != "false" ]; then
      failure "inspector: $tool answered a tool error: $(head -c 300 "$WORK/i.out")"; continue
    fi
    echo "inspector: $tool answered $(jq -r '.content[0].text' "$WORK/i.out" | head -c 100)..."
  done
  inspect tools/call --tool-name grep --tool-arg "pattern=$PATTERN" || failure "inspector: grep failed"
  jq -e --arg h "$HIT" --arg s "$SUMMARY" '.structuredContent.matches | any(.id == $h and .covered_by == $s)' "$WORK/i.out" >/dev/null \
    || failure "inspector: grep's hit is not $HIT covered by $SUMMARY: $(head -c 300 "$WORK/i.out")"
  inspect tools/call --tool-name grep --tool-arg "pattern=x" --tool-arg "limit=100000"
  jq -e '.isError == true and (.content[0].text | test("limit"))' "$WORK/i.out" >/dev/null \
    || failure "inspector: an out-of-range limit is not a tool error: $(head -c 300 "$WORK/i.out") $(tail -2 "$WORK/i.err")"
}

for s in ${@:-claude inspector}; do "${s}_scenario"; done
exit $FAILED
