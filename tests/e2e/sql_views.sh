#!/usr/bin/env bash
# The documented SQL views (share/schema/005_views.sql) answer their documented example queries
# through plain sqlite3 on a database imported from the real transcript tree, and the views agree
# with the CLI (session count, compaction count).
source "$(dirname "$0")/lib.sh"
need_transcripts
src=$(cd "$(dirname "$0")/../.." && pwd)
command -v sqlite3 >/dev/null || skip "no sqlite3"
db=$WORK/v.db
"$CTXFOLD" --db "$db" import --from all "$CTXFOLD_TRANSCRIPTS" >/dev/null || fail "import"
n=0
while IFS= read -r q; do
  n=$((n+1))
  out=$(sqlite3 -readonly "$db" "$q" 2>"$WORK/err"); rc=$?
  if [ "$rc" -eq 0 ] && [ -n "$out" ]; then ok; else fail "example $n: \`$q\` rc=$rc out='${out:0:80}' $(head -c 200 "$WORK/err")"; fi
done < <(sed -n 's/^-- example: //p' "$src/share/schema/005_views.sql")
[ "$n" -ge 5 ] && ok || fail "only $n documented examples"
expect_eq "v_sessions = sessions" "$("$CTXFOLD" --db "$db" sessions | tail -1 | jq .count)" "$(sqlite3 "$db" 'select count(*) from v_sessions')"
expect_eq "v_summaries: both Claude compactions and Codex's" "3" "$(sqlite3 "$db" "select count(*) from v_summaries where origin='import'")"
expect_eq "v_usage: one row per Claude message id" "0" \
  "$(sqlite3 "$db" "select count(*) from (select session, message_id from v_usage where message_id is not null group by 1,2 having count(*) > 1)")"
finish
