#!/usr/bin/env bash
# `import --from opencode` / `--from kilo` (docs/formats/opencode.md): the agent's SQLite store in
# $XDG_DATA_HOME/<agent> (or the file $OPENCODE_DB names) is found, detected by its schema, read
# without being written, re-read when it grows, and its tool parts, compaction, usage, sub-agent
# session and shell commands reach `sessions`, `usage`, `compactions`, `files` and `commands`. The
# store is built here with sqlite3 in the shape opencode 1.18.33 writes (tests/clients/opencode/
# drives the real client); an unknown schema version and a foreign SQLite file are refused.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"

# store DB LAST_MIGRATION: the tables the importer reads, as the agent creates them.
store() {
  sqlite3 "$1" <<SQL
CREATE TABLE migration (id TEXT PRIMARY KEY, time_completed INTEGER NOT NULL);
INSERT INTO migration VALUES ('20260101000000_init', 1), ('$2', 2);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL,
  directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE event (id text PRIMARY KEY, aggregate_id text NOT NULL, seq integer NOT NULL, type text NOT NULL, data text NOT NULL);
SQL
}
# msg DB ID SESSION JSON / part DB ID MESSAGE SESSION JSON
msg() { sqlite3 "$1" "INSERT INTO message VALUES ('$2', '$3', 1, 1, '$4')"; }
part() { sqlite3 "$1" "INSERT INTO part VALUES ('$2', '$3', '$4', 1, 1, '$5')"; }
TOK='"tokens":{"total":1230,"input":1000,"output":30,"reasoning":0,"cache":{"write":0,"read":200}}'

OC=$WORK/xdg/opencode; mkdir -p "$OC/log" "$WORK/nohome"; DBF=$OC/opencode.db
store "$DBF" 20260622202450_simplify_session_input
sqlite3 "$DBF" "INSERT INTO session VALUES ('ses_1', 'global', NULL, 'a-b', '/p', 'Check notes', '1.18.33', 1, 1),
                                            ('ses_2', 'global', 'ses_1', 'c-d', '/p', 'sub-agent', '1.18.33', 2, 2)"
msg "$DBF" msg_01 ses_1 '{"role":"user","time":{"created":1796495564476},"agent":"build"}'
part "$DBF" prt_01 msg_01 ses_1 '{"type":"text","text":"PROMPT one"}'
msg "$DBF" msg_02 ses_1 '{"role":"assistant","parentID":"msg_01","modelID":"mock-model","providerID":"mock",'"$TOK"'}'
part "$DBF" prt_02 msg_02 ses_1 '{"type":"step-start"}'
part "$DBF" prt_03 msg_02 ses_1 '{"type":"tool","tool":"bash","callID":"call_1","state":{"status":"completed","input":{"command":"echo hi"},"output":"hi\n","metadata":{"exit":0}}}'
part "$DBF" prt_04 msg_02 ses_1 '{"type":"tool","tool":"read","callID":"call_2","state":{"status":"error","input":{"filePath":"/p/missing.txt"},"error":"File not found"}}'
part "$DBF" prt_05 msg_02 ses_1 '{"type":"tool","tool":"task","callID":"call_3","state":{"status":"completed","input":{"prompt":"SUB"},"output":"alpha","metadata":{"sessionId":"ses_2"}}}'
part "$DBF" prt_06 msg_02 ses_1 '{"type":"step-finish","reason":"tool-calls"}'
part "$DBF" prt_07 msg_02 ses_1 '{"type":"step-start"}'
part "$DBF" prt_08 msg_02 ses_1 '{"type":"text","text":"REPLY one"}'
part "$DBF" prt_09 msg_02 ses_1 '{"type":"patch","hash":"abc","files":[]}'
msg "$DBF" msg_03 ses_2 '{"role":"user","agent":"general"}'
part "$DBF" prt_10 msg_03 ses_2 '{"type":"text","text":"SUB"}'
msg "$DBF" msg_04 ses_2 '{"role":"assistant","parentID":"msg_03","modelID":"mock-model"}'
part "$DBF" prt_11 msg_04 ses_2 '{"type":"text","text":"alpha"}'
cp "$DBF" "$WORK/before.db"

X="env HOME=$WORK/nohome XDG_DATA_HOME=$WORK/xdg"
expect_rc "import --from opencode under XDG_DATA_HOME" 0 $X "$CTXFOLD" --db o.db import --from opencode
expect_eq "the root is XDG_DATA_HOME/opencode" "$OC" "$(jq -r '.roots[0]' "$WORK/out")"
expect_eq "one store, new" "new" "$(jq -r '[.files[] | .outcome] | join(",")' "$WORK/out")"
expect_eq "two sessions read as opencode, no warning" "opencode opencode 0" \
  "$(db_sql o.db "select format from sessions order by rowid" | xargs) $(jq '.warnings | length' "$WORK/out")"
expect_eq "user, assistant + tools, assistant; the sub-agent's two" "6" "$(db_sql o.db 'select count(*) from nodes')"
expect_eq "the store is not written" "$(sha256sum < "$WORK/before.db")" "$(sha256sum < "$DBF")"
expect_eq "the sub-agent is a sidechain of the task call" "sidechain ses_1 msg_02" \
  "$(db_sql o.db "select kind, parent_session, parent_node from sessions where id='ses_2'" | tr '|' ' ')"
expect_eq "the calls and their results, the failed read an error" "call_1 0,call_2 1,call_3 0" \
  "$(db_sql o.db "select json_extract(b.value,'\$.tool_use_id') || ' ' || json_extract(b.value,'\$.is_error')
                   from nodes, json_each(nodes.content, '\$') b where nodes.id='msg_02/tools' order by b.key" | paste -sd,)"
expect_eq "the patch part kept as a source record" "part/patch" "$(db_sql o.db "select type from source_records")"
expect_eq "detected as opencode by content" "opencode" \
  "$(cp "$DBF" "$WORK/renamed.bin"; "$CTXFOLD" --db d.db import "$WORK/renamed.bin" | jq -r '.sessions[0].format')"

# The agent compacts the session and goes on (a compaction part, a summary message, a new turn).
msg "$DBF" msg_05 ses_1 '{"role":"user","agent":"build"}'
part "$DBF" prt_12 msg_05 ses_1 '{"type":"compaction","auto":false}'
msg "$DBF" msg_06 ses_1 '{"role":"assistant","parentID":"msg_05","summary":true,"mode":"compaction",'"$TOK"'}'
part "$DBF" prt_13 msg_06 ses_1 '{"type":"text","text":"## Objective\n- check notes"}'
msg "$DBF" msg_07 ses_1 '{"role":"user"}'
part "$DBF" prt_14 msg_07 ses_1 '{"type":"text","text":"PROMPT two"}'
msg "$DBF" msg_08 ses_1 '{"role":"assistant","parentID":"msg_07"}'
part "$DBF" prt_15 msg_08 ses_1 '{"type":"step-start"}'
expect_rc "the grown store" 0 $X "$CTXFOLD" --db o.db import --from opencode
outcome=$(jq -r '.files[0].outcome' "$WORK/out")
[ "$outcome" = appended ] || [ "$outcome" = rewritten ] && ok || fail "the grown store's outcome is '$outcome'"
expect_eq "a summary and two turns more, nothing twice" "9 3" \
  "$(db_sql o.db 'select count(*) from nodes') $(jq '[.sessions[].nodes_added] | add' "$WORK/out")"
expect_eq "the empty reply warned with its table and row" "node.empty 8 1" \
  "$(jq -r '.warnings[0] | "\(.code) \(.line) \(.message | test("table message, row 8"))"' "$WORK/out" | sed 's/true/1/')"
expect_eq "the summary covers the chain before it" "summary 4" \
  "$(db_sql o.db "select kind, (select count(*) from covers c where c.summary_seq = n.seq) from nodes n where id='msg_06'" | tr '|' ' ')"
expect_eq "an unchanged store is not read" "unchanged" \
  "$($X "$CTXFOLD" --db o.db import --from opencode | jq -r '.outcomes | to_entries[] | select(.value > 0) | .key')"

expect_rc "sessions" 0 "$CTXFOLD" --db o.db sessions
expect_eq "the agent's title and directory" "Check notes /p" \
  "$(jq -r 'select(.type=="session" and .id=="ses_1") | "\(.title) \(.project)"' "$WORK/out")"
expect_rc "compactions" 0 "$CTXFOLD" --db o.db --session ses_1 compactions
expect_eq "the compaction, asked for" "opencode manual" \
  "$(jq -r 'select(.type=="compaction") | "\(.origin) \(.trigger)"' "$WORK/out")"
expect_rc "usage" 0 "$CTXFOLD" --db o.db --session ses_1 usage
expect_eq "usage: measured input, cache reads, output (the summarizer's call is the summary's)" "1000 200 30 measured" \
  "$(jq -r 'select(.type=="usage") | "\(.tokens.input) \(.tokens.cache_read) \(.tokens.output) \(.tokens_label)"' "$WORK/out" | head -1)"
expect_rc "commands" 0 "$CTXFOLD" --db o.db --session ses_1 commands
expect_eq "the shell command" "echo hi success" "$(jq -r 'select(.type=="command") | "\(.command) \(.result)"' "$WORK/out")"
expect_rc "files" 0 "$CTXFOLD" --db o.db --session ses_1 files
expect_eq "the failed read" "read /p/missing.txt error" \
  "$(jq -r 'select(.type=="file") | "\(.action) \(.path) \(.result)"' "$WORK/out")"

# OPENCODE_DB names the store; --from all lists it beside the other agents' files.
mv "$DBF" "$WORK/custom.db"
expect_rc "OPENCODE_DB" 0 $X OPENCODE_DB="$WORK/custom.db" "$CTXFOLD" --db c.db import --from opencode
expect_eq "the root is the store OPENCODE_DB names" "$WORK/custom.db 2" \
  "$(jq -r '.roots[0]' "$WORK/out") $(db_sql c.db 'select count(*) from sessions')"
expect_rc "--from all" 0 $X OPENCODE_DB="$WORK/custom.db" "$CTXFOLD" --db a.db import --from all
expect_eq "--from all lists the store" "opencode" "$(jq -r '.files[] | select(.path | endswith("custom.db")) | .agent' "$WORK/out")"

# Kilo: the same store with a Kilo migration, under XDG_DATA_HOME/kilo.
K=$WORK/xdg/kilo; mkdir -p "$K"
store "$K/kilo.db" 20260907102000_kilocode_model_usage_index
sqlite3 "$K/kilo.db" "INSERT INTO session VALUES ('ses_k', 'global', NULL, 'k', '/k', 'kilo', '7.7.7', 1, 1)"
msg "$K/kilo.db" msg_k1 ses_k '{"role":"user"}'
part "$K/kilo.db" prt_k1 msg_k1 ses_k '{"type":"text","text":"PROMPT kilo"}'
expect_rc "import --from kilo" 0 $X "$CTXFOLD" --db k.db import --from kilo
expect_eq "read as kilo" "kilo 1" "$(db_sql k.db "select format, (select count(*) from nodes) from sessions" | tr '|' ' ')"

# An unknown schema version is named, never guessed; another SQLite file is not claimed.
store "$WORK/future.db" 20990101000000_from_the_future
expect_rc "a store newer than any checked" 3 "$CTXFOLD" --db f.db import "$WORK/future.db"
grep -q "20990101000000_from_the_future" "$WORK/err" && ok || fail "the unknown version is not named: $(cat "$WORK/err")"
sqlite3 "$WORK/other.db" "CREATE TABLE t (x)"
expect_rc "another SQLite file" 3 "$CTXFOLD" --db f.db import "$WORK/other.db"
finish
