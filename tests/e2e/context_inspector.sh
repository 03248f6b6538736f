#!/usr/bin/env bash
# context: the inspector on the real auto-compaction session. Sections in request order with their
# sources, the labelled total, the compaction status agreeing with `compact --dry-run`, a bar per
# section in --text, read-only, bad input.
source "$(dirname "$0")/lib.sh"
need_transcripts
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
[ -f "$f" ] || skip "no $f"
cd "$WORK"
"$CTXFOLD" import "$f" >/dev/null || fail "import"
s=$("$CTXFOLD" sessions | jq -rs '[.[] | select(.kind=="main")][0].id')
case "$s" in ""|null) fail "no main session found"; finish ;; esac
export CTXFOLD_SESSION=$s
before=$(sha256sum ctxfold.db)
"$CTXFOLD" context --window 60000 > c.json || fail "context"
expect_eq "schema" "ctxfold.context/1" "$(jq -r .schema c.json)"
expect_eq "read-only" "$before" "$(sha256sum ctxfold.db)"
# the imported compaction is the summary section, followed by the tail
expect_eq "the summary section, then the tail" '["summary","tail"]' "$(jq -c '[.sections[].kind | select(. == "summary" or . == "tail")]' c.json)"
expect_eq "summary section is the rendered summary" "$(jq -r .summary c.json)" "$(jq -r '.sections[] | select(.kind=="summary") | .first' c.json)"
# sources: the tail's first and last are the render's first and last tail ids
render=$("$CTXFOLD" render)
expect_eq "sections = render's sections" "$(jq -c '[.sections[] | [.kind, .ids[0], .ids[-1], (.ids|length)]]' <<<"$render")" \
  "$(jq -c '[.sections[] | [.kind, .first, .last, .count]]' c.json)"
expect_eq "section counts = render's reads" "$(jq '[.sections[].count] | add' c.json)" "$(jq '.sections | map(.ids|length) | add' <<<"$render")"
expect_eq "estimated_input_tokens = render's estimate" "$(jq .estimated_tokens <<<"$render")" "$(jq .estimated_input_tokens c.json)"
kind=$(jq -r .tokens.kind c.json)
[[ $kind == estimated || $kind == calibrated || $kind == measured ]] && ok || fail "unlabelled total: $kind"
if [ "$kind" = measured ]; then expect_eq "measured = provider" "$(jq .tokens.value c.json)" "$(jq .provider_input_tokens c.json)";
else expect_eq "no provider figure unless measured" "null" "$(jq .provider_input_tokens c.json)"; fi
# percentages against the window
p=$(jq '.sections[-1] | (.estimated_tokens * 1000 / 60000 | round) / 10' c.json)
expect_eq "tail percent_of_window" "$p" "$(jq '.sections[-1].percent_of_window' c.json)"
# the status agrees with compact's own trigger decision, for a window where it is due and one where not
for w in 40000 400000; do
  due=$("$CTXFOLD" context --window $w | jq .compaction.due)
  plan=$("$CTXFOLD" compact --window $w --dry-run | jq -r .status)
  if [ "$due" = true ]; then expect_eq "window $w: due ↔ compact plans" planned "$plan"; else expect_eq "window $w: not due ↔ noop" noop "$plan"; fi
done
expect_eq "due at 40000" true "$("$CTXFOLD" context --window 40000 | jq .compaction.due)"
expect_eq "not due at 400000" false "$("$CTXFOLD" context --window 400000 | jq .compaction.due)"
# no --window: the catalog window of the model the transcript names last (claude-opus-4-6)
"$CTXFOLD" context > nw.json || fail "context without --window"
expect_eq "no window: the recorded model" "claude-opus-4-6" "$(jq -r .model.id nw.json)"
expect_eq "no window: the model is in the catalog" true "$(jq .model.known nw.json)"
expect_eq "no window: the catalog's window" 200000 "$(jq .compaction.window nw.json)"
expect_eq "no window: says where it came from" catalog "$(jq -r .compaction.window_source nw.json)"
expect_eq "catalog window = --window 200000" "$("$CTXFOLD" context --window 200000 | jq -c '.compaction | del(.window_source)')" \
  "$(jq -c '.compaction | del(.window_source)' nw.json)"
expect_eq "--window wins" flag "$("$CTXFOLD" context --window 40000 | jq -r .compaction.window_source)"
# --text: one bar line per section and a total line
"$CTXFOLD" context --window 60000 --text > c.txt || fail "--text"
expect_eq "--text: a line per section" "$(jq '.sections | length' c.json)" "$(grep -cE '^  (system|prefix|summary|recap|folds|notes|frames|tail) ' c.txt)"
grep -q '█' c.txt && ok || fail "--text draws no bar: $(cat c.txt)"
grep -qE "total +[0-9]+ tokens \\($kind" c.txt && ok || fail "--text total line: $(tail -1 c.txt)"
# the raw strategy has no summary section and more tokens
expect_eq "raw: no summary" "[]" "$("$CTXFOLD" context --strategy raw | jq -c '[.sections[] | select(.kind=="summary")]')"
[ "$("$CTXFOLD" context --strategy raw | jq .estimated_input_tokens)" -gt "$(jq .estimated_input_tokens c.json)" ] && ok || fail "raw not larger"
expect_rc "window 0" 2 "$CTXFOLD" context --window 0
expect_rc "trigger 0" 2 "$CTXFOLD" context --window 100 --trigger-percent 0
expect_rc "unknown head" 3 "$CTXFOLD" context --head nosuch
# a model the catalog does not list (this Codex rollout's gpt-5.3-codex): no guessed window, and
# the status says the catalog does not know the model
cx=$(ls "$CTXFOLD_TRANSCRIPTS"/codex/*.jsonl 2>/dev/null | head -1)
if [ -n "$cx" ]; then
  "$CTXFOLD" --db cx.db import "$cx" >/dev/null 2>&1 || fail "codex import"
  env -u CTXFOLD_SESSION "$CTXFOLD" --db cx.db context > cx.json 2>/dev/null || fail "codex context"
  expect_eq "unknown model: not known" false "$(jq .model.known cx.json)"
  expect_eq "unknown model: no window" null "$(jq .compaction.window cx.json)"
  jq -r .compaction.reason cx.json | grep -q "is not in ctxfold's model catalog (as of Claude Code " && ok \
    || fail "unknown model reason: $(jq -r .compaction.reason cx.json)"
fi
finish
