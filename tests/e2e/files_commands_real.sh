#!/usr/bin/env bash
# `files` and `commands` on the real transcripts. files --path on the real auto-compaction Claude
# Code session gives the agent's edits to one file in the order it made them, each with its old
# and new strings and result, checked against the raw JSONL with jq (an independent reading, not
# ctxfold's code); Codex and Gemini CLI give file and command events, with statuses where their
# data holds them and "unknown" where it does not (the Codex sample's arguments and outputs are
# redacted); compactions lists the files and commands its summary dropped; --as-of and paging.
source "$(dirname "$0")/lib.sh"
need_transcripts
T=$CTXFOLD_TRANSCRIPTS
cc="$T/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
[ -f "$cc" ] || skip "no $cc"
db="$WORK/f.db"
C() { "$CTXFOLD" --db "$db" "$@"; }
C import "$cc" >/dev/null 2>"$WORK/err" || fail "import: $(head -c 300 "$WORK/err")"
s=fa812bfe-b295-4cca-9c2f-fdf01028cb46

# --- the blame of one file, against the raw JSONL --------------------------------------------
target=lib/spotter_web/live/pane_list_live.ex
# jq: every Edit/MultiEdit/Write call on the file, once per tool_use id, in file order, with the
# is_error of its tool_result line (rejections are Claude's "doesn't want to proceed" text).
jq -c --arg f "$target" -n '
  [inputs] as $lines
  | ($lines | map(select(.type=="user") | .message.content | arrays | .[] | select(.type=="tool_result"))
     | map({key: .tool_use_id, value: .}) | from_entries) as $res
  | [$lines[] | select(.type=="assistant") | .message.content[]? | select(.type=="tool_use")
     | select((.name=="Edit" or .name=="MultiEdit" or .name=="Write") and (.input.file_path | endswith("/" + $f)))]
  | reduce .[] as $c ([]; if any(.[]; .id == $c.id) then . else . + [$c] end)
  | .[] | . as $c | $res[$c.id] as $r
  | [$c.name, $c.input.old_string, $c.input.new_string,
     (if $r == null then "unknown"
      elif (($r.content | tostring) | contains("doesn'"'"'t want to proceed")) then "rejected"
      elif $r.is_error == true then "error" else "success" end)]' "$cc" >"$WORK/want.jsonl"
expect_rc "files --path" 0 C files --session "$s" --path "$target"
jq -c 'select(.type=="file" and .action != "read") | [.tool, .edit.old_string, .edit.new_string, .result]' \
  "$WORK/out" >"$WORK/got.jsonl"
[ "$(wc -l <"$WORK/want.jsonl")" -ge 5 ] && ok || fail "the raw file has only $(wc -l <"$WORK/want.jsonl") edits of $target"
if diff "$WORK/want.jsonl" "$WORK/got.jsonl" >"$WORK/diff"; then ok; else
  fail "files --path $target differs from the raw JSONL's edits (< jq, > ctxfold): $(head -c 600 "$WORK/diff")"
fi
expect_eq "files --path: the summary's total is the records printed" "$(jq -s 'map(select(.type=="file")) | length' "$WORK/out")" \
  "$(tail -n 1 "$WORK/out" | jq .total)"
expect_eq "files --path: in seq order" "true" "$(jq -s 'map(select(.type=="file") | .seq) | . == sort' "$WORK/out")"
expect_eq "files --path: every edit checked against the file's recorded content" "true" \
  "$(jq -s 'map(select(.type=="file" and .action=="edit") | .edit.old_string_found) | all(. != null)' "$WORK/out")"
C --text files --session "$s" --path "$target" >"$WORK/blame.txt" || fail "files --path --text"
expect_eq "files --path --text: one line per event, its edit as -/+ lines" "true" \
  "$(grep -c '^      [-+]' "$WORK/blame.txt" | awk '{print ($1 > 0) ? "true" : "false"}')"

# --- every Claude Code file event and command, counted with jq -------------------------------
C files --session "$s" >"$WORK/files.jsonl" || fail "files"
want_files=$(jq -r 'select(.type=="assistant") | .message.content[]? | select(.type=="tool_use")
  | select(.name=="Read" or .name=="Write" or .name=="Edit" or .name=="MultiEdit" or .name=="NotebookEdit") | .id' "$cc" | sort -u | wc -l)
expect_eq "claude: one tool file event per file tool call" "$want_files" \
  "$(jq -r 'select(.type=="file" and .via=="tool") | .tool_use_id' "$WORK/files.jsonl" | sort -u | wc -l)"
C commands --session "$s" >"$WORK/cmds.jsonl" || fail "commands"
want_bash=$(jq -r 'select(.type=="assistant") | .message.content[]? | select(.type=="tool_use" and .name=="Bash") | .id' "$cc" | sort -u | wc -l)
expect_eq "claude: one command per Bash call" "$want_bash" "$(tail -n 1 "$WORK/cmds.jsonl" | jq .total)"
want_exit=$(jq -r 'select(.type=="user") | .message.content | arrays | .[] | select(.type=="tool_result" and .is_error==true)
  | select(.content | tostring | test("^Exit code [0-9]+")) | .tool_use_id' "$cc" | sort -u | wc -l)
expect_eq "claude: an exit code exactly where a result records one" "$want_exit" \
  "$(jq -s 'map(select(.type=="command" and .exit_code != null)) | length' "$WORK/cmds.jsonl")"
expect_eq "claude: no successful command has an invented exit code" "0" \
  "$(jq -s 'map(select(.type=="command" and .result=="success" and .exit_code != null)) | length' "$WORK/cmds.jsonl")"

# --- paging and --as-of -----------------------------------------------------------------------
total=$(tail -n 1 "$WORK/files.jsonl" | jq .total)
expect_rc "files --offset 2 --limit 3" 0 C files --session "$s" --offset 2 --limit 3
expect_eq "files --limit 3: three records, the same total" "3 $total" \
  "$(jq -rs '"\(map(select(.type=="file")) | length) \(.[-1].total)"' "$WORK/out")"
expect_eq "files --offset 2: the third event first" "$(jq -s 'map(select(.type=="file"))[2].tool_use_id' "$WORK/files.jsonl")" \
  "$(jq -s 'map(select(.type=="file"))[0].tool_use_id' "$WORK/out")"
expect_rc "files --limit -1" 2 C files --limit -1
mid=$(jq -s 'map(select(.type=="file"))[20].seq' "$WORK/files.jsonl")
expect_rc "files --as-of" 0 C files --session "$s" --as-of "$mid"
expect_eq "files --as-of: only calls at or before the boundary" "true" \
  "$(jq -s --argjson m "$mid" 'map(select(.type=="file")) | length > 0 and all(.seq <= $m)' "$WORK/out")"
expect_eq "files --as-of: fewer events" "true" "$(jq -s --argjson t "$total" '.[-1].total < $t' "$WORK/out")"

# --- the compaction's dropped report ----------------------------------------------------------
C compactions "$s" >"$WORK/cmp.jsonl" || fail "compactions"
expect_eq "compactions: files and commands found in the covered history" "true" \
  "$(jq -s 'map(select(.type=="compaction")) | .[0] | .files.found > 0 and .commands.found > 0' "$WORK/cmp.jsonl")"
jq -r 'select(.type=="compaction") | .files.dropped[].path' "$WORK/cmp.jsonl" | sort -u >"$WORK/dropped_paths"
jq -r 'select(.type=="file") | .path' "$WORK/files.jsonl" | sort -u >"$WORK/all_paths"
expect_eq "compactions: every dropped file is a file the session touched" "" \
  "$(comm -23 "$WORK/dropped_paths" "$WORK/all_paths")"

# --- Codex: redacted arguments and outputs give events whose status is unknown ---------------
cx=$(ls "$T"/codex/*.jsonl | head -1)
C import "$cx" >/dev/null 2>&1 || fail "import codex"
cs=$(jq -r 'select(.type=="session_meta") | .payload.id' "$cx")
C commands --session "$cs" >"$WORK/cx_cmds.jsonl" || fail "codex commands"
expect_eq "codex: one command per exec_command/shell call" \
  "$(jq -r 'select(.payload.type=="function_call") | select(.payload.name | test("^(exec_command|shell|shell_command)$")) | .payload.call_id' "$cx" | sort -u | wc -l)" \
  "$(tail -n 1 "$WORK/cx_cmds.jsonl" | jq .total)"
expect_eq "codex: redacted outputs: every exit code null, every result unknown" "true" \
  "$(jq -s 'map(select(.type=="command")) | all(.exit_code == null and .result == "unknown")' "$WORK/cx_cmds.jsonl")"
C files --session "$cs" >"$WORK/cx_files.jsonl" || fail "codex files"
expect_eq "codex: one unknown event per apply_patch whose patch does not parse" \
  "$(jq -r 'select(.payload.type=="custom_tool_call" and .payload.name=="apply_patch") | .payload.call_id' "$cx" | sort -u | wc -l)" \
  "$(jq -s 'map(select(.type=="file" and .action=="unknown" and .path==null and .edit.parsed==false)) | length' "$WORK/cx_files.jsonl")"

# --- Gemini CLI: the recorded status of each call ---------------------------------------------
for g in "$T"/gemini/*.json; do
  C import "$g" >/dev/null 2>&1 || fail "import $g"
done
C files --all-sessions >"$WORK/g_files.jsonl" || fail "files --all-sessions"
C commands --all-sessions >"$WORK/g_cmds.jsonl" || fail "commands --all-sessions"
want=$(jq -r '.messages[] | .toolCalls[]? | select(.name=="read_file" or .name=="write_file" or .name=="replace")
  | "\(.id) \({success:"success", error:"error", cancelled:"rejected"}[.status] // "unknown")"' "$T"/gemini/*.json | sort)
got=$(jq -r 'select(.type=="file" and .tool != "read_many_files" and (.tool | test("^(read_file|write_file|replace)$"))) | "\(.tool_use_id) \(.result)"' "$WORK/g_files.jsonl" | sort)
[ -n "$want" ] && ok || fail "no Gemini file tool calls found by jq"
expect_eq "gemini: file events with the recorded status" "$want" "$got"
want=$(jq -r '.messages[] | .toolCalls[]? | select(.name=="run_shell_command")
  | "\(.id) \((.result[0].functionResponse.response.output // "") | [scan("(?m)^Exit Code: (-?[0-9]+)")] | last // [null] | .[0])"' "$T"/gemini/*.json | sort)
got=$(jq -r 'select(.type=="command" and .tool=="run_shell_command") | "\(.tool_use_id) \(.exit_code)"' "$WORK/g_cmds.jsonl" | sort)
[ -n "$want" ] && ok || fail "no Gemini shell commands found by jq"
expect_eq "gemini: each command's exit code as its output records it" "$want" "$got"
expect_eq "all sessions: the summary names no single session" "null $(C sessions | tail -n 1 | jq .count)" \
  "$(tail -n 1 "$WORK/g_files.jsonl" | jq -r '"\(.session) \(.sessions)"')"
finish
