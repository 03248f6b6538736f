#!/usr/bin/env bash
# `ctxfold hook claude-code` on the real auto-compaction session (read in place; cut copies in
# $WORK stand for a transcript Claude Code is still writing): PreCompact archives it, a second
# call adds nothing, SessionStart (resume, compact) prints Claude Code's hookSpecificOutput with
# the identifiers the summary dropped and their recall commands within the bound, bad payloads
# exit 3 (never 2, which blocks in Claude Code) and leave the archive as it was. `hook install`
# merges into a settings file, idempotently, with a backup; `uninstall` takes it out again.
source "$(dirname "$0")/lib.sh"
need_transcripts
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
sid=fa812bfe-b295-4cca-9c2f-fdf01028cb46
db="$WORK/archive.db"
payload() { # payload EVENT TRANSCRIPT [KEY VALUE]: a hook payload as Claude Code writes it
  jq -cn --arg e "$1" --arg t "$2" --arg s "$sid" --arg k "${3:-x}" --arg v "${4:-}" \
    '{session_id: $s, transcript_path: $t, cwd: "/p", hook_event_name: $e} + {($k): $v}'
}
hook() { # hook PAYLOAD [FLAGS...]: one hook call, its payload on stdin
  local p=$1; shift
  printf '%s' "$p" | "$CTXFOLD" --db "$db" hook "$@" claude-code >"$WORK/out" 2>"$WORK/err"
}
nodes() { db_sql "$1" 'SELECT count(*) FROM nodes' 2>/dev/null || echo 0; }

# PreCompact: the transcript archived as `import` would, but for the open turn of each sub-agent
# file (their last reply, held back for the next call: docs/formats/claude-code.md "Read while it
# is written"; the main file ends its last turn with turn_duration).
hook "$(payload PreCompact "$f" trigger auto)"; expect_eq "PreCompact exit" 0 $?
expect_eq "PreCompact prints nothing" "" "$(cat "$WORK/out")"
expect_rc "import reference" 0 "$CTXFOLD" --db "$WORK/ref.db" import "$f"
main_nodes() { db_sql "$1" "SELECT count(*) FROM nodes WHERE session='$sid'"; }
expect_eq "PreCompact: the main session whole" "$(main_nodes "$WORK/ref.db")" "$(main_nodes "$db")"
# Stop: the turn is over, the open turns are stored too.
hook "$(payload Stop "$f" stop_hook_active false)"; expect_eq "Stop exit" 0 $?
n1=$(nodes "$db")
expect_eq "archive holds the session's nodes" "$(nodes "$WORK/ref.db")" "$n1"
[ "$n1" -gt 1000 ] && ok || fail "only $n1 nodes archived"
# Again: nothing added, not a byte of the ledger changed.
hook "$(payload Stop "$f" stop_hook_active false)"; expect_eq "second call exit" 0 $?
expect_eq "second call adds nothing" "$n1" "$(nodes "$db")"
expect_rc "verify" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions

# SessionStart after a resume: the newest compaction's dropped identifiers, each with its command.
summary_id=$(sed -n 1585p "$f" | jq -r .uuid)
hook "$(payload SessionStart "$f" source resume)"; expect_eq "SessionStart resume exit" 0 $?
cp "$WORK/out" "$WORK/resume.json"
expect_eq "hookSpecificOutput names the event" "SessionStart" "$(jq -r .hookSpecificOutput.hookEventName "$WORK/resume.json")"
expect_eq "only hookSpecificOutput" '["hookSpecificOutput"]' "$(jq -c keys "$WORK/resume.json")"
jq -r .hookSpecificOutput.additionalContext "$WORK/resume.json" > "$WORK/ctx.txt"
size=$(jq -j .hookSpecificOutput.additionalContext "$WORK/resume.json" | wc -c)
[ "$size" -gt 200 ] && [ "$size" -le 4000 ] && ok || fail "additionalContext is $size bytes, not in 200..4000"
echo "additionalContext: $size bytes, $(grep -c '^- ' "$WORK/ctx.txt") identifiers listed" >&2
grep -qF "expand $summary_id" "$WORK/ctx.txt" && ok || fail "no expand of the summary $summary_id"
# Every listed identifier is one `compactions` reports dropped by that summary.
"$CTXFOLD" --db "$db" --session "$sid" compactions | jq -r --arg s "$summary_id" 'select(.summary_id==$s) | .dropped[] | "- \(.kind) \(.value)"' > "$WORK/dropped.txt"
listed=$(grep -c '^- ' "$WORK/ctx.txt")
[ "$listed" -ge 5 ] && ok || fail "only $listed identifiers listed"
while IFS= read -r line; do
  item=${line%%: ctxfold --db *}
  case "$item" in *…) grep -qF -- "${item%…}" "$WORK/dropped.txt" ;; *) grep -qxF -- "$item" "$WORK/dropped.txt" ;; esac \
    || fail "listed but not dropped: $item"
done < <(grep '^- ' "$WORK/ctx.txt")
ok
# The recall commands run as printed and find what they name.
hits=0; tried=0
while IFS= read -r cmd; do
  tried=$((tried+1))
  (eval "$(printf '%s' "$cmd" | sed "s#^ctxfold #\"\$CTXFOLD\" #")") >/dev/null 2>&1 && hits=$((hits+1))
done < <(grep '^- ' "$WORK/ctx.txt" | sed 's/^.*: \(ctxfold --db .*\)$/\1/')
echo "recall commands: $hits of $tried find their identifier" >&2
expect_eq "every recall command finds its identifier" "$tried" "$hits"

# A bound: --max-bytes, whole lines, the rest counted.
hook "$(payload SessionStart "$f" source resume)" --max-bytes 600; expect_eq "bounded exit" 0 $?
small=$(jq -j .hookSpecificOutput.additionalContext "$WORK/out" | wc -c)
[ "$small" -le 600 ] && ok || fail "--max-bytes 600 gave $small bytes"
jq -r .hookSpecificOutput.additionalContext "$WORK/out" | grep -q 'more not listed' && ok || fail "no count of what did not fit"

# SessionStart right after the compaction, as Claude Code runs it: the summary is not written yet
# (the transcript cut before its boundary): the compacted history's identifiers.
mkdir -p "$WORK/live"
live="$WORK/live/$sid.jsonl"
bline=$(grep -n '"compact_boundary"' "$f" | head -1 | cut -d: -f1)
head -n $((bline - 1)) "$f" > "$live"
db="$WORK/live.db"
hook "$(payload PreCompact "$live" trigger auto)"; expect_eq "live PreCompact" 0 $?
hook "$(payload SessionStart "$live" source compact)"; expect_eq "live SessionStart compact" 0 $?
jq -r .hookSpecificOutput.additionalContext "$WORK/out" > "$WORK/live.txt"
grep -q 'history just compacted' "$WORK/live.txt" && ok || fail "compact before the summary: $(head -c 300 "$WORK/live.txt")"
# The boundary and summary arrive with the next reply's first line (which settles the summary:
# attachments after it would fold into it), and a record is still being written: its cut half is
# not glued.
a=$(awk -v b="$bline" 'NR > b && /"type":"assistant"/ {print NR; exit}' "$f")
sed -n "${bline},${a}p" "$f" >> "$live"
next=$(sed -n "$((a + 1))p" "$f")
printf '%s' "${next:0:40}" >> "$live"
hook "$(payload SessionStart "$live" source compact)"; expect_eq "compact with a cut line" 0 $?
jq -r .hookSpecificOutput.additionalContext "$WORK/out" | grep -qF "expand $(sed -n "$((bline + 1))p" "$f" | jq -r .uuid)" && ok \
  || fail "after the summary arrived: $(head -c 300 "$WORK/out")"
have() { db_sql "$db" "SELECT count(*) FROM nodes WHERE id='$(sed -n "$1p" "$f" | jq -r .uuid)'"; }
expect_eq "boundary and summary archived" "1 1" "$(have "$bline") $(have $((bline + 1)))"
expect_eq "the open reply held back" "0" "$(have "$a")"
printf '%s\n' "${next:40}" >> "$live"
hook "$(payload Stop "$live")"; expect_eq "the rest of the line" 0 $?
mkdir -p "$WORK/ref2"; head -n $((a + 1)) "$f" > "$WORK/ref2/$sid.jsonl"
"$CTXFOLD" --db "$WORK/ref2.db" import "$WORK/ref2/$sid.jsonl" >/dev/null 2>&1
expect_eq "the completed record archived once: as one import" "$(nodes "$WORK/ref2.db")" "$(nodes "$db")"
expect_rc "verify live" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions

# Bad payloads: exit 3 with a clear message, the archive unchanged; never exit 2.
db="$WORK/archive.db"
sum=$(sha256sum "$db" | cut -d' ' -f1)
hook '{"session_id": "x", '; expect_eq "malformed JSON exit" 3 $?
grep -q 'stdin:1:' "$WORK/err" && ok || fail "malformed JSON: $(cat "$WORK/err")"
hook '{"session_id":"x","hook_event_name":"Stop"}'; expect_eq "missing field exit" 3 $?
grep -q 'transcript_path' "$WORK/err" && ok || fail "missing field: $(cat "$WORK/err")"
hook "$(payload PreToolUse "$f")"; expect_eq "unknown event exit" 3 $?
grep -q "unknown event 'PreToolUse'" "$WORK/err" && ok || fail "unknown event: $(cat "$WORK/err")"
hook "$(payload PreCompact "$WORK/none.jsonl" trigger auto)"; expect_eq "missing transcript exit" 3 $?
grep -q "none.jsonl' does not exist" "$WORK/err" && ok || fail "missing transcript: $(cat "$WORK/err")"
hook "$(payload PreCompact "$f")" --no-such-flag; expect_eq "a hook call's usage error is not exit 2" 3 $?
printf '{}' | "$CTXFOLD" --db "$db" hook gemini >/dev/null 2>&1; expect_eq "unknown agent" 3 $?
expect_eq "archive unchanged by bad payloads" "$sum" "$(sha256sum "$db" | cut -d' ' -f1)"
# A new session's SessionStart comes before any transcript: nothing to do, no archive created.
db="$WORK/never.db"
hook "$(payload SessionStart "$WORK/none.jsonl" source startup)"; expect_eq "startup without transcript" 0 $?
[ ! -e "$db" ] && ok || fail "an archive was created for nothing"

# `hook codex`: a Codex hook payload (same fields) archives a real rollout with a compaction, and
# SessionStart after a resume names what its compaction dropped.
cx=$(ls "$CTXFOLD_TRANSCRIPTS"/codex/*compacted_rollout*.jsonl 2>/dev/null | head -1)
if [ -n "$cx" ]; then
  cxid=$(head -1 "$cx" | jq -r .payload.id)
  db="$WORK/codex.db"
  jq -cn --arg t "$cx" --arg s "$cxid" '{session_id: $s, transcript_path: $t, hook_event_name: "SessionStart", source: "resume"}' \
    | "$CTXFOLD" --db "$db" hook codex > "$WORK/out" 2>"$WORK/err"; expect_eq "codex SessionStart exit" 0 $?
  jq -r .hookSpecificOutput.additionalContext "$WORK/out" | grep -q "Codex's compaction summary left out" && ok \
    || fail "codex: $(head -c 300 "$WORK/out") $(head -c 300 "$WORK/err")"
  [ "$(nodes "$db")" -gt 0 ] && ok || fail "codex: nothing archived"
fi

# install / uninstall on a settings file with other keys and hooks.
s="$WORK/home/.claude/settings.json"
mkdir -p "$(dirname "$s")"
printf '{\n  "model": "opus",\n  "futureKey": {"a": [1, 2]},\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}\n}\n' > "$s"
cp "$s" "$WORK/orig.json"
export HOME="$WORK/home"; unset CLAUDE_CONFIG_DIR
expect_rc "install prints" 0 "$CTXFOLD" --db "$WORK/archive.db" hook install claude-code
expect_eq "print only" "false" "$(jq .written "$WORK/out")"
cmp -s "$s" "$WORK/orig.json" && ok || fail "install without --write changed the file"
expect_eq "the fragment's command" "$(jq -r .command "$WORK/out")" "$(jq -r .hooks.PreCompact[0].hooks[0].command "$WORK/out")"
expect_rc "install --write" 0 "$CTXFOLD" --db "$WORK/archive.db" hook install claude-code --write
expect_eq "written" "true" "$(jq .written "$WORK/out")"
cmp -s "$s.ctxfold-backup" "$WORK/orig.json" && ok || fail "no backup of the old settings"
expect_eq "other keys kept" "opus [1,2]" "$(jq -c -j '.model, " ", .futureKey.a' "$s")"
expect_eq "other Stop hook kept" "notify-send done" "$(jq -r '.hooks.Stop[0].hooks[0].command' "$s")"
expect_eq "four events" "PreCompact SessionEnd SessionStart Stop" "$(jq -r '.hooks | keys | join(" ")' "$s")"
cp "$s" "$WORK/once.json"
expect_rc "install again" 0 "$CTXFOLD" --db "$WORK/archive.db" hook install claude-code --write
expect_eq "installing twice changes nothing" "false" "$(jq .changed "$WORK/out")"
cmp -s "$s" "$WORK/once.json" && ok || fail "the second install changed the file"
expect_rc "uninstall --write" 0 "$CTXFOLD" --db "$WORK/archive.db" hook uninstall claude-code --write
expect_eq "uninstall removed four" 4 "$(jq .removed "$WORK/out")"
expect_eq "uninstall restores the settings" "$(jq -S . "$WORK/orig.json")" "$(jq -S . "$s")"
# A settings file with a comment: refused with its line, untouched.
printf '{\n  // mine\n  "model": "opus"\n}\n' > "$s"; cp "$s" "$WORK/commented.json"
expect_rc "commented settings" 3 "$CTXFOLD" --db "$WORK/archive.db" hook install claude-code --write
grep -q 'settings.json:2:' "$WORK/err" && ok || fail "no line named: $(cat "$WORK/err")"
cmp -s "$s" "$WORK/commented.json" && ok || fail "a settings file it could not parse was changed"
expect_rc "install of an unknown agent is a usage error" 2 "$CTXFOLD" hook install gemini

# Codex: the same hooks in $CODEX_HOME/hooks.json (else ~/.codex/hooks.json), kept beside the
# user's own hooks; the trust step is named on stderr; no local scope.
c="$WORK/codexhome/hooks.json"
mkdir -p "$(dirname "$c")"
printf '{"description": "mine", "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}]}}\n' > "$c"
cp "$c" "$WORK/codex-orig.json"
export CODEX_HOME="$WORK/codexhome"
expect_rc "install codex --write" 0 "$CTXFOLD" --db "$WORK/archive.db" hook install codex --write
expect_eq "codex settings path" "$c" "$(jq -r .settings "$WORK/out")"
expect_eq "codex four events beside the user's" "PostToolUse PreCompact SessionEnd SessionStart Stop" "$(jq -r '.hooks | keys | join(" ")' "$c")"
expect_eq "codex hook command" "hook codex" "$(jq -r '.hooks.SessionStart[0].hooks[0].command' "$c" | awk '{print $(NF-1), $NF}')"
expect_eq "codex description kept" "mine" "$(jq -r .description "$c")"
grep -q 'trust' "$WORK/err" && ok || fail "install codex did not name the trust step: $(cat "$WORK/err")"
expect_rc "codex uninstall" 0 "$CTXFOLD" --db "$WORK/archive.db" hook uninstall codex --write
expect_eq "codex uninstall removed four" 4 "$(jq .removed "$WORK/out")"
expect_eq "codex uninstall restores hooks.json" "$(jq -S . "$WORK/codex-orig.json")" "$(jq -S . "$c")"
unset CODEX_HOME
expect_rc "codex default path" 0 "$CTXFOLD" --db "$WORK/archive.db" hook install codex
expect_eq "codex default is ~/.codex/hooks.json" "$HOME/.codex/hooks.json" "$(jq -r .settings "$WORK/out")"
expect_rc "codex has no local scope" 2 "$CTXFOLD" --db "$WORK/archive.db" hook install codex --scope local
finish
