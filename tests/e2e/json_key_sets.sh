#!/usr/bin/env bash
# The JSON each command prints keeps its key set: every key path of each command's output on a
# fixed synthetic session (arrays as "[]"), compared with tests/golden/NAME.keys. A key added,
# renamed or dropped fails here; when the change is intended, regenerate the files with
#   CTXFOLD_UPDATE_GOLDEN=1 CTXFOLD=build/ctxfold bash tests/e2e/json_key_sets.sh
# and review the diff (a schema change is also a schema version bump when it breaks a reader).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
golden="$(cd "$(dirname "$0")/../golden" && pwd)"
db="$WORK/k.db"
gen_session 12 | "$CTXFOLD" --db "$db" --session s append >/dev/null 2>"$WORK/err" || fail "append: $(cat "$WORK/err")"
C() { "$CTXFOLD" --db "$db" --session s "$@"; }
C compact --window 8000 >"$WORK/compact.json" 2>/dev/null || fail "compact"
summary=$(jq -r .summary_id "$WORK/compact.json")
head=$(C render | jq -r .head)

# keys FILE: the sorted, unique key paths of every JSON value in FILE (JSON or JSON Lines).
keys() {
  jq -r '[paths(type != "object" and type != "array") | map(if type == "number" then "[]" else . end) | join(".")]
         + [paths(type == "array" and length == 0) | map(if type == "number" then "[]" else . end) | join(".")]
         | .[]' "$1" | sed 's/\.\[\]/[]/g' | LC_ALL=C sort -u
}

check() { # check NAME CMD...: the command's output keys against tests/golden/NAME.keys
  local name=$1; shift
  if ! "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"; then
    rc=$?
    # grep exits 1 when nothing matches; every command here is given input that succeeds.
    fail "$name: exit $rc: $(tail -2 "$WORK/$name.err")"
    return
  fi
  keys "$WORK/$name.out" >"$WORK/$name.keys" || { fail "$name: output is not JSON"; return; }
  if [ -n "${CTXFOLD_UPDATE_GOLDEN:-}" ]; then
    cp "$WORK/$name.keys" "$golden/$name.keys"
    ok
  elif [ ! -f "$golden/$name.keys" ]; then
    fail "$name: no tests/golden/$name.keys (generate it with CTXFOLD_UPDATE_GOLDEN=1)"
  elif diff -u "$golden/$name.keys" "$WORK/$name.keys" >"$WORK/$name.diff"; then
    ok
  else
    fail "$name: the key set changed (- golden, + now):
$(grep '^[-+][^-+]' "$WORK/$name.diff")"
  fi
}

check compact cat "$WORK/compact.json"
check render C render
check render-anthropic-body C render --format anthropic --body
check render-openai-body C render --format openai --body
check context C context --window 8000
check sessions C sessions
check log C log
check show C show "$head"
check snapshot C snapshot
check grep C grep "request 3"
check expand C expand "$summary"
check describe C describe "$summary"
check list C list
check tokens C tokens
check usage C usage
check compactions C compactions
check config C config
check verify C verify-invariants
check prepare C prepare --window 8000
check export C export
check export-writeback C export --format claude-code --into-home "$WORK/home" --cwd /w
check hook-install C hook install claude-code --settings "$WORK/settings.json"
check report C report -o "$WORK/report.html"
echo '{"id":"k","class":"next_step","question":"What is the next step?","expect":["request"]}' >"$WORK/probes.jsonl"
check eval C eval --probes "$WORK/probes.jsonl" --model 'command:echo unknown' --strategies rolling
check eval-generate C eval --generate
# A second session with file tools, so files has file records (added last: the checks above read s).
printf '%s\n' \
  '{"id":"f1","role":"assistant","content":[{"type":"tool_use","id":"F1","name":"Write","input":{"file_path":"/w/a.txt","content":"one\n"}}]}' \
  '{"id":"f2","role":"tool","content":[{"type":"tool_result","tool_use_id":"F1","content":"ok","is_error":false}]}' \
  '{"id":"f3","role":"assistant","content":[{"type":"tool_use","id":"F2","name":"Edit","input":{"file_path":"/w/a.txt","old_string":"one","new_string":"two"}}]}' \
  '{"id":"f4","role":"tool","content":[{"type":"tool_result","tool_use_id":"F2","content":"ok","is_error":false}]}' |
  "$CTXFOLD" --db "$db" --session f append >/dev/null 2>"$WORK/err" || fail "append f: $(cat "$WORK/err")"
check files "$CTXFOLD" --db "$db" --session f files
check commands C commands
finish
