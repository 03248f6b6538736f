#!/usr/bin/env bash
# ctxfold eval (docs/eval.md) on the real auto-compaction session, from recorded answers: no model,
# no network. The shipped probe set (tests/fixtures/eval/fa812bfe.probes.jsonl) and its answers
# (fa812bfe.answers.jsonl, recorded from tests/fixtures/eval/answer.py, a deterministic command:
# answerer) give per-class accuracy for the full history and every strategy, with and without
# recall; the answerer run again gives the same answers; bad input fails with a clear message.
source "$(dirname "$0")/lib.sh"
need_transcripts
src=$(cd "$(dirname "$0")/../.." && pwd)
fx="$src/tests/fixtures/eval"
transcript="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
[ -f "$transcript" ] || skip "no $transcript"
db="$WORK/e.db"
C() { "$CTXFOLD" --db "$db" --session fa812bfe-b295-4cca-9c2f-fdf01028cb46 "$@"; }
"$CTXFOLD" --db "$db" import "$transcript" >/dev/null || fail "import"
before=$(sha256sum < "$db")

expect_rc "eval --replay" 0 C eval --probes "$fx/fa812bfe.probes.jsonl" --replay "$fx/fa812bfe.answers.jsonl"
cp "$WORK/out" "$WORK/eval.json"
expect_eq "schema" "ctxfold.eval/1" "$(jq -r .schema "$WORK/eval.json")"
expect_eq "contexts: full, then each strategy without and with recall" \
  "full rolling rolling+recall lcm lcm+recall snapcompact snapcompact+recall" \
  "$(jq -r '[.contexts[].context] | join(" ")' "$WORK/eval.json")"
probes=$(grep -c . "$fx/fa812bfe.probes.jsonl")
expect_eq "every probe counted" "$probes" "$(jq .probes "$WORK/eval.json")"
expect_eq "one answer per probe and context" "$((probes * 7))" "$(jq '.answers | length' "$WORK/eval.json")"
for cls in file command decision next_step; do
  expect_eq "probes of class $cls" "true" "$(jq --arg c "$cls" '.classes[$c] > 0' "$WORK/eval.json")"
  # every context reports this class with an accuracy that is a number in [0,1]
  expect_eq "$cls accuracy in every context" "7" \
    "$(jq --arg c "$cls" '[.contexts[] | .by_class[$c] | select(.total > 0 and (.accuracy | type) == "number"
        and .accuracy >= 0 and .accuracy <= 1 and .accuracy == ((.correct / .total * 10000 | round) / 10000))] | length' "$WORK/eval.json")"
done
for s in rolling lcm snapcompact; do
  expect_eq "$s compacted" "compacted" "$(jq -r --arg s "$s" '.contexts[] | select(.context == $s) | .compaction.status' "$WORK/eval.json")"
  expect_eq "$s is smaller than the full history" "true" \
    "$(jq --arg s "$s" '(.contexts[] | select(.context == $s) | .tokens) < (.contexts[0].tokens)' "$WORK/eval.json")"
done
# The figures' shape (bench/README.md "Probe accuracy"): the full history answers more than any
# compacted render alone, and recall answers at least as much as its render alone, more for rolling.
correct() { jq --arg c "$1" '.contexts[] | select(.context == $c) | .correct' "$WORK/eval.json"; }
for s in rolling lcm snapcompact; do
  expect_eq "full answers more than $s" "true" "$([ "$(correct full)" -gt "$(correct $s)" ] && echo true)"
  expect_eq "$s+recall answers at least what $s does" "true" "$([ "$(correct $s+recall)" -ge "$(correct $s)" ] && echo true)"
done
expect_eq "recall answers more than rolling alone" "true" \
  "$(jq '(.contexts[] | select(.context == "rolling+recall") | .correct) > (.contexts[] | select(.context == "rolling") | .correct)' "$WORK/eval.json")"
# each answer's correct flag is the scoring rule applied to it (case, whitespace)
expect_eq "correct flags follow the rule" "0" "$(jq --slurpfile p <(jq -c . "$fx/fa812bfe.probes.jsonl") '
  [.answers[] | . as $a | ($p | map(select(.id == $a.probe))[0].expect) as $e
   | ($a.answer | ascii_downcase | gsub("\\s+"; " ")) as $t
   | select(([$e[] | ascii_downcase | gsub("\\s+"; " ") | . as $x | $t | contains($x)] | all) != $a.correct)] | length' "$WORK/eval.json")"

expect_rc "eval --text" 0 C eval --probes "$fx/fa812bfe.probes.jsonl" --replay "$fx/fa812bfe.answers.jsonl" --text
expect_eq "--text: a row per context" "7" "$(grep -cE '^(full|rolling|lcm|snapcompact)' "$WORK/out")"
expect_eq "--text: the class columns" "1" "$(grep -cE '^context +tokens +file +command +decision +next_step +all' "$WORK/out")"
expect_eq "the database is only read" "$before" "$(sha256sum < "$db")"

# The recorded answers are what the answerer gives: asked again, it answers the same.
if command -v python3 >/dev/null; then
  (cd "$src" && CTXFOLD_SUMMARIZER_WINDOW=1000000 "$CTXFOLD" --db "$db" eval --probes tests/fixtures/eval/fa812bfe.probes.jsonl \
     --model 'command:python3 tests/fixtures/eval/answer.py' --record "$WORK/again.jsonl" >"$WORK/live.json" 2>"$WORK/err") \
    && ok || fail "the answerer again: $(head -c 300 "$WORK/err")"
  expect_eq "the answerer answers as recorded" "$(cat "$fx/fa812bfe.answers.jsonl")" "$(cat "$WORK/again.jsonl")"
  expect_eq "the same figures" "$(jq -c .contexts "$WORK/eval.json")" "$(jq -c .contexts "$WORK/live.json")"
fi

# Bad input: a malformed probe file names its file and line; nothing is asked.
{ head -2 "$fx/fa812bfe.probes.jsonl"; echo '{"id":"x","class":"weather","question":"q","expect":["a"]}'; } > "$WORK/bad.jsonl"
expect_rc "malformed probe file" 3 C eval --probes "$WORK/bad.jsonl" --replay "$fx/fa812bfe.answers.jsonl"
expect_eq "file:line in the message" "1" "$(grep -c "bad.jsonl:3: unknown class 'weather'" "$WORK/err")"
# A probe with no recorded answer: exit 3 naming the probe, never a guess.
{ cat "$fx/fa812bfe.probes.jsonl"; echo '{"id":"new-probe","class":"file","question":"Which file was edited to add `nothing_recorded`?","expect":["x.ex"]}'; } > "$WORK/more.jsonl"
expect_rc "missing replay entry" 3 C eval --probes "$WORK/more.jsonl" --replay "$fx/fa812bfe.answers.jsonl"
expect_eq "the probe is named" "1" "$(grep -c "probe 'new-probe' ($WORK/more.jsonl:$((probes + 1)))" "$WORK/err")"
expect_eq "nothing on stdout" "0" "$(wc -c < "$WORK/out")"
# A corrupt answers file: file and line.
{ head -1 "$fx/fa812bfe.answers.jsonl"; echo 'not json'; } > "$WORK/answers.jsonl"
expect_rc "malformed answers file" 3 C eval --probes "$fx/fa812bfe.probes.jsonl" --replay "$WORK/answers.jsonl"
expect_eq "answers file:line" "1" "$(grep -c "answers.jsonl:2: not valid JSON" "$WORK/err")"
# An unknown strategy is a usage error, before any work.
expect_rc "unknown strategy" 2 C eval --probes "$fx/fa812bfe.probes.jsonl" --replay "$fx/fa812bfe.answers.jsonl" --strategies rolling,weather
expect_eq "the strategy is named" "1" "$(grep -c "weather" "$WORK/err")"
expect_rc "no model and no replay" 2 C eval --probes "$fx/fa812bfe.probes.jsonl"
expect_rc "extractive answers nothing" 2 C eval --probes "$fx/fa812bfe.probes.jsonl" --model extractive
expect_eq "the database is still only read" "$before" "$(sha256sum < "$db")"
finish
