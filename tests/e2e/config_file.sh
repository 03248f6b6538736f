#!/usr/bin/env bash
# The configuration file: --config, then CTXFOLD_CONFIG, then the per-user default under the XDG
# config directory; `config` shows each setting's value and source; compact reads the same file;
# a broken file is reported with path, line and column and exit 3.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/xdg"; unset CTXFOLD_CONFIG
mkdir -p "$HOME" "$XDG_CONFIG_HOME"
c=$("$CTXFOLD" config) || fail "config"
expect_eq "no file: origin none" "none" "$(jq -r .origin <<<"$c")"
expect_eq "default trigger" '{"value":80,"source":"default"}' "$(jq -c .settings.rolling.triggerPercent <<<"$c")"
expect_eq "default fanout" 4 "$(jq .settings.lcm.fanout.value <<<"$c")"
expect_eq "notes: off, 2000 tokens by default" "false 2000" "$(jq -r '"\(.settings.notes.enabled.value) \(.settings.notes.budgetTokens.value)"' <<<"$c")"
expect_eq "snapcompact: its own tail default" 10 "$(jq .settings.snapcompact.tailPercent.value <<<"$c")"
expect_eq "no window by default" null "$(jq .settings.rolling.contextWindowTokens.value <<<"$c")"
mkdir -p "$XDG_CONFIG_HOME/ctxfold"
echo '{"rolling":{"triggerPercent":70,"contextWindowTokens":40000},"lcm":{"fanout":6},"snapcompakt":{}}' > "$XDG_CONFIG_HOME/ctxfold/config.json"
c=$("$CTXFOLD" config)
expect_eq "user file found" "user" "$(jq -r .origin <<<"$c")"
expect_eq "user trigger, sourced" "{\"value\":70,\"source\":\"$XDG_CONFIG_HOME/ctxfold/config.json\"}" "$(jq -c .settings.rolling.triggerPercent <<<"$c")"
expect_eq "tail still default" default "$(jq -r .settings.rolling.tailPercent.source <<<"$c")"
expect_eq "lcm fanout from file" 6 "$(jq .settings.lcm.fanout.value <<<"$c")"
expect_eq "an unread section is shown" '{"snapcompakt":{}}' "$(jq -c .other_sections <<<"$c")"
unset XDG_CONFIG_HOME
mkdir -p "$HOME/.config/ctxfold"; echo '{"rolling":{"tailPercent":30}}' > "$HOME/.config/ctxfold/config.json"
expect_eq "~/.config without XDG_CONFIG_HOME" 30 "$("$CTXFOLD" config | jq .settings.rolling.tailPercent.value)"
export XDG_CONFIG_HOME="$WORK/xdg"
echo '{"rolling":{"triggerPercent":60}}' > env.json
expect_eq "CTXFOLD_CONFIG beats the user file" 60 "$(CTXFOLD_CONFIG=env.json "$CTXFOLD" config | jq .settings.rolling.triggerPercent.value)"
echo '{"rolling":{"triggerPercent":50}}' > flag.json
expect_eq "--config beats CTXFOLD_CONFIG" "50 --config" "$(CTXFOLD_CONFIG=env.json "$CTXFOLD" config --config flag.json | jq -r '"\(.settings.rolling.triggerPercent.value) \(.origin)"')"
"$CTXFOLD" config --text > t.txt && grep -q "^rolling.triggerPercent = 70  (.*config.json)$" t.txt && ok || fail "--text: $(cat t.txt)"
# broken files
printf '{"rolling": {\n  "triggerPercent": 70,\n}}\n' > bad.json
expect_rc "broken JSON: exit 3" 3 "$CTXFOLD" config --config bad.json
grep -q "bad.json:3:1" "$WORK/err" && ok || fail "no path:line:col: $(cat "$WORK/err")"
echo '{"rolling":{"triggerPercent":700}}' > range.json
expect_rc "out of range: exit 3" 3 "$CTXFOLD" config --config range.json
echo '[1]' > arr.json
expect_rc "not an object: exit 3" 3 "$CTXFOLD" config --config arr.json
expect_rc "missing named file: exit 4" 4 "$CTXFOLD" config --config nosuch.json
echo '{"rolling": ' > "$XDG_CONFIG_HOME/ctxfold/config.json"
expect_rc "a broken user file is reported too" 3 "$CTXFOLD" config
grep -q "config.json:" "$WORK/err" && ok || fail "user file path not named: $(cat "$WORK/err")"
rm "$XDG_CONFIG_HOME/ctxfold/config.json"
# compact reads the same file: the window comes from it, a flag overrides it
need_transcripts
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
[ -f "$f" ] || { echo "SKIP: no $f" >&2; finish; }
"$CTXFOLD" import "$f" >/dev/null
s=$("$CTXFOLD" sessions | jq -rs '[.[] | select(.kind=="main")][0].id')
case "$s" in ""|null) fail "no main session found"; finish ;; esac; export CTXFOLD_SESSION=$s
echo '{"rolling":{"contextWindowTokens":40000}}' > "$XDG_CONFIG_HOME/ctxfold/config.json"
expect_eq "compact takes the window from the user file" planned "$("$CTXFOLD" compact --dry-run | jq -r .status)"
expect_eq "a flag overrides the file" noop "$("$CTXFOLD" compact --dry-run --window 400000 | jq -r .status)"
echo '{"rolling":{"contextWindowTokens":40000},"notes":{"enabled":true,"budgetTokens":500}}' > notes.json
expect_eq "config shows notes from the file" "true 500" "$("$CTXFOLD" config --config notes.json | jq -r '"\(.settings.notes.enabled.value) \(.settings.notes.budgetTokens.value)"')"
out=$("$CTXFOLD" compact --config notes.json)
expect_eq "notes.enabled in the file turns the notes layer on" "compacted true" "$(jq -r '"\(.status) \(.notes != null)"' <<<"$out")"
echo '{"notes":{"enabled":"yes"}}' > badnotes.json
expect_rc "notes.enabled must be a boolean" 3 "$CTXFOLD" config --config badnotes.json
finish
