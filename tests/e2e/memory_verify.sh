#!/usr/bin/env bash
# verify-invariants on an uncompacted session holds its content about twice, not five times
# (docs/invariants.md "Memory", bench/README.md "Memory"): a Claude Code session of 1,200 turns
# whose prompts carry 32 KB of text each (38 MB of content, the whole history on HEAD's spine)
# verifies ok with a peak RSS (getrusage ru_maxrss of the child) under 150 MB (72 MB; 94 MB while
# the database-wide checks read the 81 MB file through a memory map, whose touched pages counted
# in RSS: e2e.memory_verify_flat). The render I5 and I10 read holds
# the content once (its messages; the items' content is moved into them, render/moved.hpp), next to
# one request body or document at a time, whose digests are computed as they are serialized.
# Holding the items and the messages, then a document and its serialized text beside them (the
# render verify made before), exceeds the bound: before 238 MB, after 104 MB.
# The process's own memory (the largest RssAnon in /proc/PID/status, polled every 20 ms: the
# mapped file pages are not in it) stays under 77 MB: the request bodies and `render` documents
# are streamed a message at a time (render_stream), never held beside the render's messages
# (before: 93 MB, after: 61 MB; bench/README.md "Memory", fourth pass).
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is required"
command -v jq >/dev/null || skip "jq is required"

python3 "$(dirname "$0")/big_prompts.py" "$WORK/s.jsonl" 11 memver-1
db=$WORK/m.db
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$WORK/s.jsonl"
rm -f "$WORK/s.jsonl"
echo "database file: $(($(stat -c %s "$db") / 1000000)) MB" >&2

check_peak "verify-invariants" 150 "$CTXFOLD" --db "$db" verify-invariants

# peak_anon_kb CMD...: the largest RssAnon (KiB) of CMD while it runs, polled every 20 ms; its exit code.
peak_anon_kb() {
  "$@" > "$WORK/anon.out" 2>/dev/null &
  local pid=$! max=0 kb
  while kill -0 "$pid" 2>/dev/null; do
    kb=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
    [ -n "$kb" ] && [ "$kb" -gt "$max" ] && max=$kb
    sleep 0.02
  done
  wait "$pid"
  echo "$max $?"
}
if [ -r /proc/self/status ] && grep -q '^RssAnon:' /proc/self/status; then
  read -r anon rc < <(peak_anon_kb "$CTXFOLD" --db "$db" verify-invariants)
  expect_eq "verify-invariants exit (RssAnon run)" 0 "$rc"
  echo "verify-invariants largest RssAnon: $((anon / 1024)) MB" >&2
  if [ "$anon" -le $((77 * 1024)) ]; then ok; else fail "verify-invariants: largest RssAnon $((anon / 1024)) MB, bound 77 MB"; fi
fi
expect_eq "verified ok" true "$(jq -r .ok "$WORK/peak.out")"
expect_eq "I5 and I10 checked" "true true" "$(jq -r '[.checks[] | select(.id == "I5" or .id == "I10") | .ok] | map(tostring) | join(" ")' "$WORK/peak.out")"
finish
