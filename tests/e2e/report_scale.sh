#!/usr/bin/env bash
# report on a generated 10^4-node session (docs/report.md "Size"): the page stays within its
# bounds, every node the model reads keeps its anchor when the bounds turn nodes into stubs, the
# capsule of a forced compaction lists at most --max-capsule-nodes, and memory stays bounded.
# Size, time and peak memory are printed on stderr.
source "$(dirname "$0")/lib.sh"
import_generated 1e4
s=$session
expect_rc "compact" 0 "$CTXFOLD" --db "$db" --session "$s" compact --window 20000 --force --summarizer-window 12000
start=$(date +%s.%N)
check_peak "report --html (default bounds)" 400 "$CTXFOLD" --db "$db" --session "$s" report -o "$WORK/r.html"
echo "report --html: $(wc -c <"$WORK/r.html") bytes in $(echo "$(date +%s.%N) - $start" | bc) s" >&2
cp "$WORK/peak.out" "$WORK/r.json"
expect_eq "one capsule, its list bounded" "1 true" \
  "$(jq -r '"\(.capsules) \(.capsule_omitted > 0)"' "$WORK/r.json")"
expect_eq "the page within the default bounds (24 MiB of nodes, 16 MiB of images)" "true" \
  "$([ "$(wc -c <"$WORK/r.html")" -le $((44 * 1024 * 1024)) ] && echo true)"

# Small bounds: most nodes become stubs; every node read keeps its anchor; the page stays small.
expect_rc "report with small bounds" 0 "$CTXFOLD" --db "$db" --session "$s" report -o "$WORK/small.html" \
  --max-read-bytes 100000 --max-covered-bytes 100000
cp "$WORK/out" "$WORK/small.json"
expect_eq "stubs past the bounds" "true" "$(jq '.stubs > 100' "$WORK/small.json")"
reads=$("$CTXFOLD" --db "$db" --session "$s" render | jq -r '.reads[]')
missing=0
while read -r id; do grep -q "id=\"node-$id\"" "$WORK/small.html" || missing=$((missing+1)); done <<<"$reads"
expect_eq "every read node anchored ($(wc -l <<<"$reads") reads)" 0 "$missing"
stubs=$(jq .stubs "$WORK/small.json")
expect_eq "bounded: 200 KB of nodes plus 400 bytes a stub plus 1 MB of tables and images" "true" \
  "$([ "$(wc -c <"$WORK/small.html")" -le $((200000 + stubs * 400 + 1048576)) ] && echo true)"
echo "small bounds: $(wc -c <"$WORK/small.html") bytes, $stubs stubs" >&2
finish
