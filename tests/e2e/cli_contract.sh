#!/usr/bin/env bash
# Exit codes and error shapes of the command contract (docs/commands.md).
source "$(dirname "$0")/lib.sh"
db="$WORK/c.db"
expect_rc "no subcommand is a usage error" 2 "$CTXFOLD"
expect_rc "unknown flag is a usage error" 2 "$CTXFOLD" render --no-such-flag
expect_rc "unknown command is a usage error" 2 "$CTXFOLD" --db "$db" rendr
grep -q "unknown command 'rendr'" "$WORK/err" && grep -q "did you mean 'render'" "$WORK/err" && ok ||
  fail "unknown command message: $(cat "$WORK/err")"
expect_rc "read command on a missing database" 4 "$CTXFOLD" --db "$WORK/missing.db" render
[ ! -e "$WORK/missing.db" ] && ok || fail "a read command created the database"
if ! on_server; then  # a file that is not a database (a server's counterpart: pg_backend's other application)
  printf 'not a database at all, only text padding padding padding padding padding\n' > "$WORK/junk.db"
  expect_rc "read command on a foreign file" 3 "$CTXFOLD" --db "$WORK/junk.db" sessions
fi
# A failed first import leaves no database behind; the error names stdin, not a spool file.
expect_rc "empty stdin import" 3 sh -c "printf '' | '$CTXFOLD' --db '$WORK/fresh.db' import -"
grep -q "'stdin' is empty" "$WORK/err" && ok || fail "empty stdin message: $(cat "$WORK/err")"
[ ! -e "$WORK/fresh.db" ] && ok || fail "a failed import left $WORK/fresh.db behind"
printf 'plain words, no transcript\n' > "$WORK/words.txt"
expect_rc "import of an unknown format" 3 "$CTXFOLD" --db "$WORK/fresh.db" import "$WORK/words.txt"
[ ! -e "$WORK/fresh.db" ] && ok || fail "a failed import left $WORK/fresh.db behind"
# append: the harness write path; HEAD advances only on chain extension.
printf '%s\n' '{"id":"u1","role":"user","content":"hello"}' '{"id":"a1","role":"assistant","content":"hi"}' |
  "$CTXFOLD" --db "$db" --session s append >"$WORK/ap" 2>"$WORK/err"
expect_eq "append exit" 0 $?
expect_eq "append head" "a1" "$(jq -r '.heads.s' "$WORK/ap")"
printf '%s\n' '{"id":"b1","role":"user","content":"side branch","predecessor":"u1"}' |
  "$CTXFOLD" --db "$db" --session s append >"$WORK/ap" 2>"$WORK/err"
expect_eq "side-branch append leaves HEAD" "a1" "$(jq -r '.heads.s' "$WORK/ap")"
expect_rc "append with unknown predecessor fails" 3 sh -c "echo '{\"id\":\"x\",\"role\":\"user\",\"content\":\"x\",\"predecessor\":\"nope\"}' | '$CTXFOLD' --db '$db' --session s append"
expect_rc "a rejected append leaves no seq gap" 0 "$CTXFOLD" --db "$db" verify-invariants
expect_rc "render" 0 "$CTXFOLD" --db "$db" render --format openai
expect_eq "render follows HEAD" '["u1","a1"]' "$(jq -c .reads "$WORK/out")"
expect_rc "checkout" 0 "$CTXFOLD" --db "$db" checkout b1
expect_rc "render after checkout" 0 "$CTXFOLD" --db "$db" render --format openai
expect_eq "render follows the checked-out branch" '["u1","b1"]' "$(jq -c .reads "$WORK/out")"
expect_rc "show" 0 "$CTXFOLD" --db "$db" show a1
expect_eq "show prints the node" "assistant" "$(jq -r .node.role "$WORK/out")"
expect_rc "show unknown node" 3 "$CTXFOLD" --db "$db" show nope
expect_rc "log" 0 "$CTXFOLD" --db "$db" log
expect_eq "log ends with a summary record" "summary" "$(tail -n1 "$WORK/out" | jq -r .type)"
expect_eq "log walks the spine newest first" "b1 u1" "$(jq -r 'select(.type=="node") | .id' "$WORK/out" | xargs)"
expect_rc "verify" 0 "$CTXFOLD" --db "$db" verify-invariants
expect_eq "head moves recorded with causes" "append append checkout" \
  "$(db_sql "$db" 'select cause from head_moves order by seq' | xargs)"
# A broken pipe is a quiet exit 0.
"$CTXFOLD" --db "$db" log | head -c 1 >/dev/null
expect_eq "broken pipe exit" 0 "${PIPESTATUS[0]}"
finish
