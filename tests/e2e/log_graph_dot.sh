#!/usr/bin/env bash
# log --graph --format dot: the session DAG as Graphviz, drawn by Debian's dot. The active summary
# is one capsule folding exactly its covers_ids on branches that carry it (docs/model.md "How a
# render uses a summary"); a fork from inside the covered range keeps the raw nodes it needs.
source "$(dirname "$0")/lib.sh"
command -v dot >/dev/null || { fail "graphviz's dot is not installed (scripts/deps.sh installs it)"; finish; }
cd "$WORK"
node() { # node ID PRED ROLE TEXT
  local pred=null; [ -n "$2" ] && pred="\"$2\""
  printf '{"id":"%s","session":"s1","predecessor":%s,"kind":"message","role":"%s","content":[{"type":"text","text":"%s"}],"metadata":{}}\n' "$1" "$pred" "$3" "$4"
}
{ node n1 "" user 'first \"quoted\" ask'; node n2 n1 assistant 'answer one'; node n3 n2 user 'second ask'
  node b1 n2 user 'a retry from inside the covered range'
  node n4 n3 assistant 'answer two'; node n5 n4 user 'third ask'
  echo '{"id":"S","session":"s1","predecessor":null,"kind":"summary","role":"user","content":[{"type":"text","text":"the first two turns"}],"metadata":{"strategy":"rolling"},"covers_ids":["n1","n2","n3"]}'
} > in.jsonl
"$CTXFOLD" import --format ctxfold in.jsonl >/dev/null || fail "import"
"$CTXFOLD" log --graph --format dot > g.dot 2>g.err || fail "log --graph: $(cat g.err)"
dot -Tsvg g.dot > g.svg 2>dot.err && ok || fail "dot rejected the graph: $(head -c 300 dot.err)"
grep -q '<svg' g.svg && ok || fail "no svg"
drawn() { grep -oE '^  "[^"]+" \[' g.dot | cut -d'"' -f2 | sort | tr '\n' ' '; }
expect_eq "drawn nodes: S folds n3; n1 n2 stay for the fork b1" "S b1 n1 n2 n4 n5 " "$(drawn)"
grep -q '"S" \[.*peripheries=2' g.dot && ok || fail "S is not drawn as a capsule"
grep -q '^  "S" -> "n4";' g.dot && ok || fail "the tail does not hang off the capsule"
grep -q '^  "n2" -> "b1";' g.dot && ok || fail "the fork does not hang off its raw predecessor"
grep -q '"n5" \[.*HEAD' g.dot && ok || fail "HEAD not marked"
grep -q 'first \\"quoted\\" ask' g.dot && ok || fail "quotes not escaped"
grep -q '1 capsule(s) folding 1 nodes' g.err && ok || fail "stderr counts: $(cat g.err)"
# without the fork every covered node folds
grep -v '"b1"' in.jsonl > in2.jsonl
"$CTXFOLD" --db two.db import --format ctxfold in2.jsonl >/dev/null
"$CTXFOLD" --db two.db log --graph --format dot > g.dot 2>/dev/null
expect_eq "no fork: n1..n3 folded" "S n4 n5 " "$(drawn)"
# usage errors
expect_rc "--format dot without --graph" 2 "$CTXFOLD" log --format dot
expect_rc "--graph without --format dot" 2 "$CTXFOLD" log --graph
expect_rc "unknown format" 2 "$CTXFOLD" log --graph --format png

# the real auto-compaction session: the imported compaction is a capsule
need_transcripts
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
[ -f "$f" ] || { echo "SKIP: no $f" >&2; finish; }
"$CTXFOLD" --db real.db import "$f" >/dev/null || fail "import real"
s=$("$CTXFOLD" --db real.db sessions | jq -rs '[.[] | select(.kind=="main")][0].id')
before=$(sha256sum real.db)
"$CTXFOLD" --db real.db --session "$s" log --graph --format dot > real.dot 2>/dev/null || fail "log --graph on the real session"
expect_eq "read-only" "$before" "$(sha256sum real.db)"
dot -Tsvg real.dot > real.svg 2>dot.err && ok || fail "dot on the real graph: $(head -c 300 dot.err)"
sum=$("$CTXFOLD" --db real.db --session "$s" list | jq -r '.items[0].id')
grep -q "^  \"$sum\" \[.*peripheries=2" real.dot && ok || fail "the real compaction $sum is not a capsule"
grep -q "${sum%%-*}&#45;" real.svg && ok || fail "the capsule is not in the svg"
covered=$("$CTXFOLD" --db real.db --session "$s" describe "$sum" | jq -r '.coverage.first')
if grep -q "^  \"$covered\" \[" real.dot; then fail "covered node $covered drawn raw"; else ok; fi
finish
