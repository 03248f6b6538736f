#!/usr/bin/env bash
# grep / describe / expand / list through the CLI: exit codes (0 match, 1 none, 2 bad pattern),
# JSON Lines shape, pipelines (grep | describe -), and on the real auto-compaction session a
# string only in covered history names its covering summary; expand pages concatenate to one page.
source "$(dirname "$0")/lib.sh"
db="$WORK/r.db"
cat > "$WORK/in.jsonl" <<'JSONL'
{"id":"t1","session":"s","predecessor":null,"kind":"message","role":"user","content":[{"type":"text","text":"我们用飞书沟通 TODO: fix"}],"metadata":{}}
{"id":"t2","session":"s","predecessor":"t1","kind":"message","role":"assistant","content":[{"type":"text","text":"重跑gen-itgc后 Über user@host"}],"metadata":{}}
{"id":"t3","session":"s","predecessor":"t2","kind":"message","role":"user","content":[{"type":"text","text":"it's the wrong-book"}],"metadata":{}}
{"id":"S","session":"s","predecessor":null,"kind":"summary","role":"user","content":[{"type":"text","text":"summary of t1 t2"}],"metadata":{"strategy":"rolling"},"covers_ids":["t1","t2"]}
JSONL
expect_rc "import" 0 "$CTXFOLD" --db "$db" import --format ctxfold "$WORK/in.jsonl"
expect_rc "grep 飞书" 0 "$CTXFOLD" --db "$db" grep 飞书
expect_eq "飞书 match names the covering summary" "t1 S 3" "$(jq -r 'select(.type=="match") | "\(.id) \(.covered_by) \(.offset)"' "$WORK/out")"
expect_eq "summary record last" "ctxfold.grep/2 1 0" "$(tail -1 "$WORK/out" | jq -r '"\(.schema) \(.raw_matches) \(.summary_matches)"')"
expect_rc "grep über is case-sensitive" 1 "$CTXFOLD" --db "$db" grep über
expect_rc "grep -i über" 0 "$CTXFOLD" --db "$db" grep -i über
expect_eq "-i über finds t2" "t2" "$(jq -r 'select(.type=="match") | .id' "$WORK/out")"
for q in "TODO: fix" "user@host" "it's" "wrong-book" "itgc" "gen"; do
  expect_rc "grep '$q'" 0 "$CTXFOLD" --db "$db" grep "$q"
done
expect_rc "invalid regex is exit 2" 2 "$CTXFOLD" --db "$db" grep --regex "(unclosed"
grep -q "invalid regular expression" "$WORK/err" && ok || fail "bad regex message: $(cat "$WORK/err")"
expect_rc "empty pattern is exit 2" 2 "$CTXFOLD" --db "$db" grep ""
expect_rc "literal (unclosed: no match, exit 1" 1 "$CTXFOLD" --db "$db" grep "(unclosed"
expect_rc "--in summaries" 0 "$CTXFOLD" --db "$db" grep --in summaries summary
expect_eq "summary match is not raw" "S false" "$(jq -r 'select(.type=="match") | "\(.id) \(.raw)"' "$WORK/out")"
expect_rc "--scope S excludes t3" 1 "$CTXFOLD" --db "$db" grep --scope S wrong-book
"$CTXFOLD" --db "$db" grep 飞书 | "$CTXFOLD" --db "$db" describe - > "$WORK/d.json"; rc=$?
expect_eq "grep | describe - exit" 0 "$rc"
expect_eq "describe of a grep match" "t1 0 S" "$(jq -r '"\(.id) \(.depth) \(.parents[0])"' "$WORK/d.json")"
expect_rc "describe S" 0 "$CTXFOLD" --db "$db" describe S
expect_eq "describe coverage" "t1 t2 2 true" "$(jq -r '"\(.coverage.first) \(.coverage.last) \(.coverage.count) \(.active)"' "$WORK/out")"
expect_rc "expand S" 0 "$CTXFOLD" --db "$db" expand S
expect_eq "expand rows" "我们用飞书沟通 TODO: fix|重跑gen-itgc后 Über user@host|null" "$(jq -r '([.rows[].text] | join("|")) + "|" + (.next_offset|tostring)' "$WORK/out")"
expect_rc "expand page 1" 0 "$CTXFOLD" --db "$db" expand S --limit 5
expect_eq "page 1 by graphemes" "我们用飞书 5" "$(jq -r '"\(.rows[0].text) \(.next_offset)"' "$WORK/out")"
expect_rc "expand of a raw node is an error" 3 "$CTXFOLD" --db "$db" expand t3
expect_rc "list" 0 "$CTXFOLD" --db "$db" list
expect_eq "list" "ctxfold.list/1 1 S true" "$(jq -r '"\(.schema) \(.total) \(.items[0].id) \(.items[0].frontier)"' "$WORK/out")"

# The derived index: same answers, from the index; read commands never update it.
expect_rc "index" 0 "$CTXFOLD" --db "$db" index
# A server's index is pg_trgm over the text (docs/backends.md "grep on a server"), not FTS5.
if on_server; then fts=false ix=pg_trgm; else fts=true ix=fts5; fi
expect_eq "index covers every node" "4 $fts" "$(jq -r '"\(.through_seq) \(.fts)"' "$WORK/out")"
expect_rc "index again adds nothing" 0 "$CTXFOLD" --db "$db" index
expect_eq "nothing new" "0" "$(jq -r .indexed "$WORK/out")"
for q in "TODO: fix" "user@host" "it's" "wrong-book" "itgc" "重跑gen-itgc" "ÜBER USER" "\"" "*" "NEAR" "%"; do
  a=$("$CTXFOLD" --db "$db" grep -i --all-sessions -- "$q" | jq -c 'if .type=="match" then . else {raw_matches,summary_matches} end')
  b=$("$CTXFOLD" --db "$db" grep -i --all-sessions --no-index -- "$q" | jq -c 'if .type=="match" then . else {raw_matches,summary_matches} end')
  expect_eq "index and scan agree on '$q'" "$b" "$a"
done
expect_rc "grep -i über from the index" 0 "$CTXFOLD" --db "$db" grep -i über
expect_eq "answered by the index" "$ix t2" "$(jq -r 'select(.type=="summary") | .index' "$WORK/out") $(jq -r 'select(.type=="match") | .id' "$WORK/out")"
expect_rc "empty pattern is exit 2 with an index" 2 "$CTXFOLD" --db "$db" grep ""
expect_rc "invalid regex is exit 2 with an index" 2 "$CTXFOLD" --db "$db" grep --regex "a(b"
expect_rc "render caps a row" 0 "$CTXFOLD" --db "$db" render --max-row-bytes 10
expect_eq "truncated rows named (the summary stands for t1 t2)" "S t3" "$(jq -r '[.truncated[].id] | join(" ")' "$WORK/out")"

if [ -n "$CTXFOLD_TRANSCRIPTS" ] && [ -d "$CTXFOLD_TRANSCRIPTS" ]; then
  f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
  rdb="$WORK/real.db"
  expect_rc "import real" 0 "$CTXFOLD" --db "$rdb" import "$f"
  summary_id=$(sed -n 1585p "$f" | jq -r .uuid)
  # Only in a pre-boundary tool result (source line 25).
  expect_rc "grep covered-only string" 0 "$CTXFOLD" --db "$rdb" grep "tmux waiting overlay summaries"
  expect_eq "covered by the imported summary" "$summary_id" "$(jq -r 'select(.type=="match") | .covered_by' "$WORK/out")"
  expect_rc "describe imported summary" 0 "$CTXFOLD" --db "$rdb" describe "$summary_id"
  expect_eq "describe: summary, depth 1, active, import" "summary 1 true import" "$(jq -r '"\(.kind) \(.depth) \(.active) \(.producer.origin)"' "$WORK/out")"
  count=$(jq -r .coverage.count "$WORK/out")
  # Page by page (limit 3000) joined as a reader joins them == one huge page.
  "$CTXFOLD" --db "$rdb" expand "$summary_id" --limit 100000000 | jq -j '[.rows[].text] | join("\n\n")' > "$WORK/whole.txt"
  off=0; : > "$WORK/paged.txt"; last=""; pages=0
  while :; do
    "$CTXFOLD" --db "$rdb" expand "$summary_id" --offset "$off" --limit 3000 > "$WORK/p.json" || { fail "expand page $off"; break; }
    jq -j --arg last "$last" 'reduce .rows[] as $r ({last:$last, s:""}; .s += (if .last != "" and .last != $r.id then "\n\n" else "" end) + $r.text | .last = $r.id) | .s' "$WORK/p.json" >> "$WORK/paged.txt"
    l=$(jq -r '.rows[-1].id // empty' "$WORK/p.json"); [ -n "$l" ] && last=$l
    pages=$((pages+1))
    nxt=$(jq -r .next_offset "$WORK/p.json"); [ "$nxt" == "null" ] && break; off=$nxt
  done
  [ "$pages" -gt 3 ] && ok || fail "expected several pages, got $pages"
  cmp -s "$WORK/whole.txt" "$WORK/paged.txt" && ok || fail "paged expansion differs from the whole"
  expect_eq "rows in the whole expansion" "$count" "$("$CTXFOLD" --db "$rdb" expand "$summary_id" --limit 100000000 | jq '.rows | length')"
  expect_rc "list real" 0 "$CTXFOLD" --db "$rdb" list
  expect_eq "list holds the summary" "$summary_id" "$(jq -r '.items[0].id' "$WORK/out")"
fi
finish
