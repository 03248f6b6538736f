#!/usr/bin/env bash
# The documented SQL views (share/schema/005_views.sql) answer their documented example queries
# through plain sqlite3 on a database imported from the real transcript tree, and the views agree
# with the CLI (session count, compaction count). Under tests/e2e/server/run.sh the same queries
# run through psql on the server's views (share/schema/pg/005_views.sql).
source "$(dirname "$0")/lib.sh"
need_transcripts
src=$(cd "$(dirname "$0")/../.." && pwd)
on_server || command -v sqlite3 >/dev/null || skip "no sqlite3"
db=$WORK/v.db
"$CTXFOLD" --db "$db" import --from all "$CTXFOLD_TRANSCRIPTS" >/dev/null || fail "import"
n=0
while IFS= read -r q; do
  n=$((n+1))
  # read-only: a view never writes (a server: a read-only transaction)
  if on_server; then
    out=$(db_sql "$db" "SET default_transaction_read_only = on; $q" 2>"$WORK/err"); rc=$?
  else
    out=$(sqlite3 -readonly "$db" "$q" 2>"$WORK/err"); rc=$?
  fi
  if [ "$rc" -eq 0 ] && [ -n "$out" ]; then ok; else fail "example $n: \`$q\` rc=$rc out='${out:0:80}' $(head -c 200 "$WORK/err")"; fi
done < <(sed -n 's/^-- example: //p' "$src/share/schema/005_views.sql")
[ "$n" -ge 5 ] && ok || fail "only $n documented examples"
expect_eq "v_sessions = sessions" "$("$CTXFOLD" --db "$db" sessions | tail -1 | jq .count)" "$(db_sql "$db" 'select count(*) from v_sessions')"
expect_eq "v_summaries: both Claude compactions and Codex's" "3" "$(db_sql "$db" "select count(*) from v_summaries where origin='import'")"
expect_eq "v_usage: one row per Claude message id" "0" \
  "$(db_sql "$db" "select count(*) from (select session, message_id from v_usage where message_id is not null group by 1,2 having count(*) > 1) AS dup")"
finish
