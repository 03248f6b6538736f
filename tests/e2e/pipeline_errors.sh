#!/usr/bin/env bash
# Commands that read ids from stdin (`-`) report an error in one record with its line number and
# still answer the others; the exit code is decided at the end (the first failure's).
source "$(dirname "$0")/lib.sh"
cd "$WORK"
printf '%s\n' '{"id":"n1","session":"s1","predecessor":null,"kind":"message","role":"user","content":[{"type":"text","text":"hi"}],"metadata":{}}' \
  '{"id":"n2","session":"s1","predecessor":"n1","kind":"message","role":"assistant","content":[{"type":"text","text":"hello"}],"metadata":{}}' \
  '{"id":"S","session":"s1","predecessor":null,"kind":"summary","role":"user","content":[{"type":"text","text":"sum"}],"metadata":{"strategy":"rolling"},"covers_ids":["n1"]}' > in.jsonl
"$CTXFOLD" import --format ctxfold in.jsonl >/dev/null || fail "import"
for cmd in show describe; do
  printf 'n1\nnosuch\n{"id":"n2"}\n' | "$CTXFOLD" $cmd - > out.jsonl 2> err.txt; rc=$?
  expect_eq "$cmd -: exit of the bad record" 3 "$rc"
  expect_eq "$cmd -: the good records still answered" 2 "$(wc -l < out.jsonl)"
  grep -q "stdin:2: .*nosuch" err.txt && ok || fail "$cmd -: error without its line: $(cat err.txt)"
done
printf 'S\nn1\nS\n' | "$CTXFOLD" expand - > out.jsonl 2> err.txt; rc=$?
[ "$rc" -ne 0 ] && ok || fail "expand - of a non-summary exits 0"
expect_eq "expand -: both summaries expanded" 2 "$(jq -s 'map(select(.schema=="ctxfold.expand/1")) | length' out.jsonl)"
grep -q "stdin:2:" err.txt && ok || fail "expand -: error without its line: $(cat err.txt)"
printf 'n1\n\nn2\n' | "$CTXFOLD" show - > out.jsonl 2> err.txt
expect_eq "blank lines skipped, all good: exit 0, two records" "0 2" "$? $(wc -l < out.jsonl)"
expect_rc "a plain unknown id: exit 3" 3 "$CTXFOLD" show nosuch
"$CTXFOLD" describe --text S > d.txt && grep -q "^  covers    1 rows: n1 (seq 1) .. n1 (seq 1)$" d.txt && ok || fail "describe --text: $(cat d.txt)"
grep -q "^sum$" d.txt && ok || fail "describe --text shows no summary text"
finish
