#!/usr/bin/env bash
# `ctxfold mcp` over stdio on the real Claude Code auto-compaction session: the handshake, the
# tools listed with schemas, a grep hit in history only the imported summary stands for, expand
# paging joined to one page, protocol errors (parse, invalid request, unknown method, invalid
# params, an oversized message) and tool errors; one answer per request, none per notification,
# exit 0 at end of input; the archive's bytes unchanged; a tool call made while `import` adds a
# session sees it.
source "$(dirname "$0")/lib.sh"
need_transcripts
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
db="$WORK/a.db"
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$f"
summary_id=$(sed -n 1585p "$f" | jq -r .uuid)
# The archive's bytes (a server's: its rows, db_dump).
archive_digest() { if on_server; then db_dump "$db" | sha256sum; else cat "$db"* | sha256sum; fi; }
before=$(archive_digest)

init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}'
call() { # call ID TOOL ARGS_JSON
  jq -cn --argjson id "$1" --arg t "$2" --argjson a "$3" '{jsonrpc:"2.0",id:$id,method:"tools/call",params:{name:$t,arguments:$a}}'
}
{
  echo "$init"
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
  call 2 grep '{"pattern":"tmux waiting overlay summaries"}'
  call 3 expand "{\"id\":\"$summary_id\",\"limit\":3000}"
  echo '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"x","regex":true,"in":"nowhere"}}}'
  echo '{"jsonrpc":"2.0","id":5,"method":"no/such/method"}'
  echo '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"rm","arguments":{}}}'
  echo '{"jsonrpc":"2.0","id":7,"method":"tools/call"'
  echo '{"id":8,"method":"ping"}'
  echo '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}'
  printf '{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"%s"}}\n' "$(head -c 3000 /dev/zero | tr '\0' a)"
  call 10 expand '{"id":"no-such-summary"}'
  call 11 dropped '{}'
  printf '{"jsonrpc":"2.0","id":12,"method":"ping"}'  # the last line has no newline
} > "$WORK/in.jsonl"
expect_rc "mcp session" 0 "$CTXFOLD" --db "$db" mcp --max-message-bytes 2048 < "$WORK/in.jsonl"
cp "$WORK/out" "$WORK/mcp.out"
expect_eq "one answer per request, none per notification" "13" "$(wc -l < "$WORK/mcp.out" | tr -d ' ')"
expect_eq "every answer is JSON-RPC 2.0" "13" "$(jq -s '[.[] | select(.jsonrpc == "2.0")] | length' "$WORK/mcp.out")"
by_id() { jq -c --argjson id "$1" 'select(.id == $id)' "$WORK/mcp.out"; }
expect_eq "initialize answers the client's revision" "2025-06-18 ctxfold" \
  "$(by_id 0 | jq -r '"\(.result.protocolVersion) \(.result.serverInfo.name)"')"
expect_eq "six tools listed" "grep expand describe list sessions dropped" "$(by_id 1 | jq -r '[.result.tools[].name] | join(" ")')"
expect_eq "each with an object input schema" "6" "$(by_id 1 | jq '[.result.tools[] | select(.inputSchema.type == "object" and .inputSchema.additionalProperties == false)] | length')"
expect_eq "grep hit covered by the imported summary" "false 1 $summary_id" \
  "$(by_id 2 | jq -r '"\(.result.isError) \(.result.structuredContent.raw_matches) \(.result.structuredContent.matches[0].covered_by)"')"
expect_eq "the text content is the structured document" "true" \
  "$(by_id 2 | jq '(.result.content[0].text | fromjson) == .result.structuredContent')"
# The same hit as the CLI's grep.
cli_id=$("$CTXFOLD" --db "$db" grep "tmux waiting overlay summaries" | jq -r 'select(.type=="match") | .id')
expect_eq "the hit is the CLI's" "$cli_id" "$(by_id 2 | jq -r '.result.structuredContent.matches[0].id')"
expect_eq "expand page 1 has a next_offset" "3000" "$(by_id 3 | jq -r '.result.structuredContent.next_offset')"
expect_eq "bad argument: a tool error naming it" "true" "$(by_id 4 | jq '.result.isError and (.result.content[0].text | test("argument .in."))')"
expect_eq "unknown method" "-32601" "$(by_id 5 | jq '.error.code')"
expect_eq "unknown tool" "-32602" "$(by_id 6 | jq '.error.code')"
expect_eq "malformed JSON: parse error, id null" "1" "$(jq -s '[.[] | select(.error.code == -32700 and .id == null)] | length' "$WORK/mcp.out")"
expect_eq "no jsonrpc member: invalid request" "-32600" "$(by_id 8 | jq '.error.code')"
expect_eq "oversized message: invalid request, id null" "1" \
  "$(jq -s '[.[] | select(.error.code == -32600 and .id == null and (.error.message | test("over the bound")))] | length' "$WORK/mcp.out")"
cli_err=$("$CTXFOLD" --db "$db" expand no-such-summary 2>&1 >/dev/null | head -1)
expect_eq "tool error carries the CLI's message" "true" \
  "$(by_id 10 | jq --arg m "$cli_err" '.result.isError and (.result.content[0].text | startswith($m))')"
expect_eq "dropped: the newest compaction, with counts" "$summary_id true" \
  "$(by_id 11 | jq -r '"\(.result.structuredContent.summary_id) \(.result.structuredContent.dropped_count | type == "object")"')"
expect_eq "last line without newline answered" "{}" "$(by_id 12 | jq -c '.result')"
expect_eq "archive bytes unchanged by the session" "$before" "$(archive_digest)"

# Expand pages through the server, joined, equal the CLI's one page.
"$CTXFOLD" --db "$db" expand "$summary_id" --limit 100000000 | jq -j '[.rows[].text] | join("\n\n")' > "$WORK/whole.txt"
coproc MCP { "$CTXFOLD" --db "$db" mcp --max-tokens 1500 2>"$WORK/mcp.err"; }
mcp_pid=$MCP_PID  # bash unsets MCP_PID once the coprocess has ended, which may be before the wait below
echo "$init" >&"${MCP[1]}"; read -r _ <&"${MCP[0]}"
off=0; last=""; pages=0; : > "$WORK/paged.txt"; over=0
while [ "$pages" -lt 2000 ]; do
  call 100 expand "{\"id\":\"$summary_id\",\"offset\":$off,\"limit\":200000}" >&"${MCP[1]}"
  read -r line <&"${MCP[0]}" || { fail "no answer for page at $off"; break; }
  echo "$line" | jq '.result.structuredContent' > "$WORK/p.json"
  [ "$(jq -c '.' "$WORK/p.json" | wc -c)" -gt 16000 ] && over=$((over+1))
  jq -j --arg last "$last" 'reduce .rows[] as $r ({last:$last, s:""}; .s += (if .last != "" and .last != $r.id then "\n\n" else "" end) + $r.text | .last = $r.id) | .s' "$WORK/p.json" >> "$WORK/paged.txt"
  l=$(jq -r '.rows[-1].id // empty' "$WORK/p.json"); [ -n "$l" ] && last=$l
  pages=$((pages+1))
  nxt=$(jq -r .next_offset "$WORK/p.json"); [ "$nxt" == "null" ] && break; off=$nxt
done
expect_eq "bounded pages join to the whole expansion" "$(sha256sum < "$WORK/whole.txt")" "$(sha256sum < "$WORK/paged.txt")"
[ "$pages" -gt 1 ] && ok || fail "the token bound should have split the expansion ($pages page)"
expect_eq "no page far over the bound (16000 bytes for 1500 tokens)" "0" "$over"

# While the server runs, import adds a session; the next call sees it (a fresh snapshot per call).
call 200 sessions '{}' >&"${MCP[1]}"; read -r line <&"${MCP[0]}"
n_before=$(echo "$line" | jq '.result.structuredContent.total')
expect_rc "import while mcp runs" 0 "$CTXFOLD" --db "$db" import "$CTXFOLD_TRANSCRIPTS/claude-code/v2.1.38_short_parallel_tool_rejection.jsonl"
call 201 sessions '{}' >&"${MCP[1]}"; read -r line <&"${MCP[0]}"
expect_eq "the new session is seen" "$((n_before + 1))" "$(echo "$line" | jq '.result.structuredContent.total')"
exec {MCP[1]}>&-
wait "$mcp_pid"; expect_eq "exit 0 when stdin closes" "0" "$?"

# The calling agent's session (Claude Code's CLAUDE_CODE_SESSION_ID) is the default when archived.
list_call='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'
for sid in $("$CTXFOLD" --db "$db" sessions | jq -r 'select(.type=="session" and .kind=="main") | .id'); do
  got=$(echo "$list_call" | env -u CTXFOLD_SESSION CLAUDE_CODE_SESSION_ID="$sid" "$CTXFOLD" --db "$db" mcp | jq -r '.result.structuredContent.session')
  expect_eq "CLAUDE_CODE_SESSION_ID $sid chooses the session" "$sid" "$got"
done
got=$(echo "$list_call" | env -u CTXFOLD_SESSION CLAUDE_CODE_SESSION_ID=not-archived "$CTXFOLD" --db "$db" mcp | jq -r '.result.isError')
expect_eq "an agent session not archived falls back to the default" "false" "$got"

# The configuration file's mcp section names the archive when neither --db nor CTXFOLD_DB does.
mkdir -p "$WORK/home"; db_cp "$db" "$WORK/home/arch.db"
cfgdb="~/arch.db"; on_server && cfgdb=$(db_url "$WORK/home/arch.db")
jq -n --arg db "$cfgdb" '{mcp: {db: $db, maxTokens: 900}}' > "$WORK/cfg.json"
list='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sessions","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'
out=$(echo "$list" | env -u CTXFOLD_DB HOME="$WORK/home" CTXFOLD_CONFIG="$WORK/cfg.json" "$CTXFOLD" mcp 2>"$WORK/cfg.err")
n_sessions=$("$CTXFOLD" --db "$db" sessions | jq -s 'map(select(.type=="session")) | length')
expect_eq "config mcp.db names the archive" "false $n_sessions" "$(echo "$out" | jq -r '"\(.result.isError) \(.result.structuredContent.total)"')"
out=$(echo "$list" | env -u CTXFOLD_DB HOME="$WORK/home" CTXFOLD_CONFIG="$WORK/cfg.json" "$CTXFOLD" --db "$WORK/none.db" mcp 2>"$WORK/cfg.err")
expect_eq "--db wins over the config" "true" "$(echo "$out" | jq -r '.result.isError')"
grep -q "cannot be read yet" "$WORK/cfg.err" && ok || fail "a missing archive is a warning at start: $(cat "$WORK/cfg.err")"
echo '{"mcp": {"db": 7}}' > "$WORK/bad.json"
expect_rc "a bad mcp.db is exit 3" 3 env -u CTXFOLD_DB CTXFOLD_CONFIG="$WORK/bad.json" "$CTXFOLD" mcp
expect_rc "mcp --help" 0 "$CTXFOLD" mcp --help
expect_rc "--max-tokens out of range is a usage error" 2 "$CTXFOLD" mcp --max-tokens 1
finish
