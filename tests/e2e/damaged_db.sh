#!/usr/bin/env bash
# Damaged databases (docs/commands.md "Damaged databases"): a dropped ledger table, a JSON column
# whose bytes were changed and a page overwritten with garbage are exit 3 naming the table (and
# the row), for read commands, write commands and verify-invariants alike; import and index refuse
# a file SQLite reports corrupt before writing anything, and append stops at a damaged page.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
gen_session 40 > "$WORK/s.jsonl"
gen_session 2 "new_" > "$WORK/more.jsonl"
fresh() { rm -f "$1" "$1-wal" "$1-shm"; "$CTXFOLD" --db "$1" --session S append <"$WORK/s.jsonl" >/dev/null || fail "seed $1"; }
# expect_damaged WHAT WORDS... -- CMD...: exit 3, stderr holds every word, never "internal".
expect_damaged() {
  local what=$1; shift
  local words=()
  while [ "$1" != "--" ]; do words+=("$1"); shift; done
  shift
  expect_rc "$what" 3 "$@"
  for w in "${words[@]}"; do
    grep -qF -- "$w" "$WORK/err" || fail "$what: stderr lacks '$w': $(head -c 300 "$WORK/err")"
  done
}

# 1. A dropped ledger table.
db="$WORK/dropped.db"; fresh "$db"
sqlite3 "$db" 'DROP TABLE head_moves'
for cmd in "render" "log" "sessions" "export" "verify-invariants"; do
  expect_damaged "$cmd, no head_moves" "table head_moves is missing" -- "$CTXFOLD" --db "$db" --session S $cmd
done
expect_damaged "append, no head_moves" "table head_moves is missing" -- "$CTXFOLD" --db "$db" --session S append <"$WORK/more.jsonl"
expect_damaged "import, no head_moves" "table head_moves is missing" -- "$CTXFOLD" --db "$db" import --format ctxfold "$WORK/more.jsonl"
expect_damaged "index, no head_moves" "table head_moves is missing" -- "$CTXFOLD" --db "$db" index
expect_eq "nothing was appended" 160 "$(count "$db" 'SELECT count(*) FROM nodes')"

# 2. A byte changed in a node's content (the append-only trigger dropped for the edit, then restored).
db="$WORK/flipped.db"; fresh "$db"
trigger=$(sqlite3 "$db" "SELECT sql FROM sqlite_master WHERE name='nodes_no_update'")
sqlite3 "$db" "DROP TRIGGER nodes_no_update; UPDATE nodes SET content = '#' || substr(content, 2) WHERE id = 'u3'; $trigger;"
seq=$(count "$db" "SELECT seq FROM nodes WHERE id='u3'")
for cmd in "render" "show u3" "export"; do
  expect_damaged "$cmd, bad JSON" "table nodes" "node seq $seq (id 'u3')" "column content" -- "$CTXFOLD" --db "$db" --session S $cmd
done
# The readers that parse content outside the store (grep's scan, index,
# expand of a summary that covers the row, the session title) name the row too.
expect_damaged "grep, bad JSON" "table nodes" "node seq $seq (id 'u3')" "column content" -- "$CTXFOLD" --db "$db" --session S grep 'src/mod3.cpp'
expect_damaged "index, bad JSON" "table nodes" "node seq $seq" "column content" -- "$CTXFOLD" --db "$db" index
db1="$WORK/flipped-title.db"; fresh "$db1"
"$CTXFOLD" --db "$db1" --session S compact --force >/dev/null 2>"$WORK/err" || fail "compact: $(head -c 300 "$WORK/err")"
summary=$(count "$db1" "SELECT id FROM nodes WHERE kind='summary' ORDER BY seq DESC LIMIT 1")
sqlite3 "$db1" "DROP TRIGGER nodes_no_update; UPDATE nodes SET content = '#' || substr(content, 2) WHERE id = 'u1'; $trigger;"
seq1=$(count "$db1" "SELECT seq FROM nodes WHERE id='u1'")
expect_damaged "sessions, bad JSON in the first prompt" "node seq $seq1 (id 'u1')" "column content" -- "$CTXFOLD" --db "$db1" sessions
expect_damaged "expand over a bad row" "node seq $seq1 (id 'u1')" "column content" -- "$CTXFOLD" --db "$db1" --session S expand "$summary"
"$CTXFOLD" --db "$db" --session S verify-invariants >"$WORK/out" 2>"$WORK/err"; rc=$?
case "$rc" in
  1|3) grep -qF "u3" "$WORK/out" "$WORK/err" && ok || fail "verify names no row: $(head -c 300 "$WORK/out") $(head -c 300 "$WORK/err")" ;;
  *) fail "verify of a changed content byte: exit $rc: $(head -c 300 "$WORK/err")" ;;
esac

# 3. A page of the nodes table overwritten with garbage ('Z' bytes).
damage_page() { # damage_page DB OFFSET-SQL: overwrites the nodes leaf page the ORDER BY/OFFSET picks
  local page psize
  page=$(sqlite3 "$1" "SELECT pageno FROM dbstat WHERE name='nodes' AND pagetype='leaf' ORDER BY pageno $2")
  psize=$(sqlite3 "$1" 'PRAGMA page_size')
  [ -n "$page" ] || fail "no leaf page of nodes to damage"
  head -c "$psize" /dev/zero | tr '\0' 'Z' | dd of="$1" bs="$psize" seek=$((page - 1)) conv=notrunc status=none
}
# A page in the middle: import and index check the whole file first and refuse it.
db="$WORK/page.db"; fresh "$db"
damage_page "$db" "LIMIT 1 OFFSET 10"
before=$(sha256sum "$db" | cut -d' ' -f1)
expect_damaged "import on a corrupt file" "is damaged" -- "$CTXFOLD" --db "$db" import --format ctxfold "$WORK/more.jsonl"
expect_damaged "index on a corrupt file" "is damaged" -- "$CTXFOLD" --db "$db" index
expect_eq "the refused writes changed nothing" "$before" "$(sha256sum "$db" | cut -d' ' -f1)"
expect_damaged "render over the corrupt page" "is damaged" "table nodes" -- "$CTXFOLD" --db "$db" --session S render
"$CTXFOLD" --db "$db" --session S verify-invariants >"$WORK/out" 2>"$WORK/err"; rc=$?
case "$rc" in 1|3) ok ;; *) fail "verify of a corrupt page: exit $rc, wanted 1 (I11) or 3" ;; esac
# The last page, where append adds its node: append stops there and writes nothing.
db="$WORK/tail.db"; fresh "$db"
damage_page "$db" "DESC LIMIT 1"
before=$(sha256sum "$db" | cut -d' ' -f1)
expect_damaged "append onto a corrupt page" "is damaged" -- "$CTXFOLD" --db "$db" --session S append <"$WORK/more.jsonl"
expect_eq "the refused append changed nothing" "$before" "$(sha256sum "$db" | cut -d' ' -f1)"
finish
