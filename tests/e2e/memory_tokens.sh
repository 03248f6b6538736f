#!/usr/bin/env bash
# `tokens` holds figures, not the history (docs/render.md "Memory", bench/README.md "Memory"): on a
# Claude Code session of 1,200 turns whose prompts carry 32 KB of text each (38 MB of content), raw
# and after `compact`, its peak RSS (getrusage ru_maxrss of the child) stays under 64 MB. Rendering
# the context of the last request before the first compaction whole (the whole history, which the
# table did before figures-only renders) holds the 38 MB of content at least twice (the items and
# their messages) and exceeds it (before: 95-99 MB raw and compacted; figures-only: 15-19 MB). The
# table itself is checked too: one row per measured response, the same before and after the
# walk reads it in figures (tests/unit/render/figures_test.cpp pins the values).
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is required"
command -v jq >/dev/null || skip "jq is required"

python3 "$(dirname "$0")/big_prompts.py" "$WORK/s.jsonl" 7 memtok-1
db=$WORK/m.db
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$WORK/s.jsonl"

check_peak "tokens" 64 "$CTXFOLD" --db "$db" tokens --min-growth 0
expect_eq "one row per measured response" 2400 "$(jq '.requests | length' "$WORK/peak.out")"
expect_eq "one edit result in each prompt's turn" 1200 "$(jq '[.pairs[] | .edits] | add' "$WORK/peak.out")"
check_peak "tokens --text" 64 "$CTXFOLD" --db "$db" --text tokens
expect_eq "text rows" 2400 "$(grep -c '^b-\|^a-' "$WORK/peak.out")"

# One pass: it stops partial (the summarizer-call limit) but writes its summary.
"$CTXFOLD" --db "$db" compact --force --window 200000 > "$WORK/out" 2>/dev/null
case "$(jq -r .status "$WORK/out")" in compacted | partial) ok ;; *) fail "compact: $(head -c 300 "$WORK/out")" ;; esac
check_peak "tokens (compacted)" 64 "$CTXFOLD" --db "$db" tokens
expect_eq "rows after compact" 2400 "$(jq '.requests | length' "$WORK/peak.out")"
finish
