#!/usr/bin/env bash
# report, prepare, replay, eval, hook and mcp on the PostgreSQL backend (docs/backends.md "What
# works"): each gives the same exit code and output on a SQLite file and on a throwaway server
# holding the same real Claude Code sessions (the auto-compaction session and the resumed/branched
# one); prepare's compaction writes the same summary on both; the hook archives the same sessions
# and re-injects the same context, its recall commands naming the server without the password
# (and running as printed); hook install writes no password into the settings.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pg_lib.sh"
need_transcripts
start_pg
src=$(cd "$(dirname "$0")/../.." && pwd)
fx="$src/tests/fixtures/eval"

lite="$WORK/lite.db"
big=fa812bfe-b295-4cca-9c2f-fdf01028cb46
small=47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c
: >"$WORK/stdin"
for f in "$CC_COMPACTED" "$CC_RESUMED"; do
  [ -f "$f" ] || { fail "missing transcript $f"; finish; }
  same "import $(basename "$f")" import "$f"
done

# report: the page and its JSON summary.
for args in "report" "report --markdown" "report --all-sessions" "report --redact" \
            "report --markdown --all-sessions --redact" "--session $small report" \
            "report --max-read-bytes 20000 --max-covered-bytes 10000"; do
  # shellcheck disable=SC2086
  same "$args" $args
done
same "report -o" report -o "$WORK/page.html"
expect_eq "report -o wrote the page it counts" "$(jq -r .bytes "$WORK/b")" "$(stat -c %s "$WORK/page.html")"

# eval from recorded answers: the same scores (its compactions run on an in-memory SQLite copy).
same "eval --replay" --session "$big" eval --probes "$fx/fa812bfe.probes.jsonl" --replay "$fx/fa812bfe.answers.jsonl"
expect_eq "eval scored every context" 7 "$(jq '.contexts | length' "$WORK/b")"
same "eval --text" --session "$big" eval --probes "$fx/fa812bfe.probes.jsonl" --replay "$fx/fa812bfe.answers.jsonl" --text
same "eval --generate" --session "$big" eval --generate

# prepare: the request, then a compaction run when due (rolling at a 40k window).
for args in "prepare" "prepare --format anthropic --body" "prepare --format openai --body" "prepare --format text"; do
  # shellcheck disable=SC2086
  same "$big $args" --session "$big" $args
done
same "prepare compacts when due" --session "$big" prepare --window 40000 --format anthropic --body
grep -q 'prepare: compacted with rolling' "$WORK/b.err" && ok || fail "prepare did not compact: $(head -c 300 "$WORK/b.err")"
same "compactions after prepare" --session "$big" compactions
same "render after prepare" --session "$big" render --format anthropic
same "verify after prepare" verify-invariants --all-sessions
expect_eq "verify clean after prepare" true "$(jq -r .ok "$WORK/b")"

# replay: an lcm summary re-derived from its recorded calls, and the calls exported.
same "compact lcm" --session "$small" compact --strategy lcm --summarizer extractive --window 20000 --force
id=$(jq -r .summary_id "$WORK/b")
[ -n "$id" ] && [ "$id" != null ] && ok || fail "no lcm summary id: $(head -c 300 "$WORK/b")"
same "replay $id" --session "$small" replay "$id"
expect_eq "replay is identical" true "$(jq -r .identical "$WORK/b")"
"$CTXFOLD" --db "$lite" --session "$small" replay "$id" --export "$WORK/ex.lite" >/dev/null 2>&1
"$CTXFOLD" --db "$PGURL" --session "$small" replay "$id" --export "$WORK/ex.pg" >/dev/null 2>&1
if diff -r "$WORK/ex.lite" "$WORK/ex.pg" >/dev/null && [ -n "$(ls "$WORK/ex.pg")" ]; then ok; else fail "replay --export wrote different answers"; fi

# mcp over stdio: every answer the same.
init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}'
summary=$(sqlite3 "$lite" "SELECT id FROM nodes WHERE session='$big' AND kind='summary' ORDER BY seq LIMIT 1")
call() { jq -cn --argjson id "$1" --arg t "$2" --argjson a "$3" '{jsonrpc:"2.0",id:$id,method:"tools/call",params:{name:$t,arguments:$a}}'; }
{
  echo "$init"
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
  call 2 grep '{"pattern":"tmux waiting overlay summaries"}'
  call 3 grep '{"pattern":"mix\\s+test","regex":true,"limit":5}'
  call 4 expand "{\"id\":\"$summary\",\"limit\":3000}"
  call 5 expand "{\"id\":\"$summary\",\"offset\":3000,\"limit\":2000}"
  call 6 dropped '{}'
  call 7 expand '{"id":"no-such-summary"}'
  call 8 describe "{\"id\":\"$summary\"}"
  call 9 list '{"limit":5}'
  call 10 sessions '{"agent":"claude-code"}'
  call 11 grep '{"pattern":"overlay","all_sessions":true,"ignore_case":true,"limit":3,"offset":2}'
} >"$WORK/stdin"
same "mcp" --session "$big" mcp
expect_eq "mcp answered every request" 12 "$(wc -l <"$WORK/b" | tr -d ' ')"
expect_eq "mcp: only the unknown summary's call failed" "[7]" "$(jq -sc '[.[] | select(.error or .result.isError) | .id]' "$WORK/b")"
: >"$WORK/stdin"

# hook: a new archive on each engine, fed the same payloads.
hook_url=$(pg_createdb hooks)
hook_run_url="postgresql://ctxfold@/hooks?host=$PG_DIR"   # as the recall commands must name it
payload() { jq -cn --arg e "$1" --arg t "$CC_COMPACTED" --arg s "$big" --arg k "$2" --arg v "$3" \
  '{session_id: $s, transcript_path: $t, cwd: "/p", hook_event_name: $e} + {($k): $v}'; }
for ev in "PreCompact trigger auto" "Stop stop_hook_active false" "Stop stop_hook_active false" \
          "SessionStart source resume" "SessionStart source compact"; do
  # shellcheck disable=SC2086
  set -- $ev
  payload "$1" "$2" "$3" >"$WORK/payload"
  "$CTXFOLD" --db "$WORK/hook.db" hook --max-bytes 1000000 claude-code <"$WORK/payload" >"$WORK/ha" 2>"$WORK/ha.err"; ra=$?
  "$CTXFOLD" --db "$hook_url" hook --max-bytes 1000000 claude-code <"$WORK/payload" >"$WORK/hb" 2>"$WORK/hb.err"; rb=$?
  expect_eq "hook $1 exit (SQLite, server)" "0 0" "$ra $rb"
  if grep -qF "$PG_PASS" "$WORK/hb" "$WORK/hb.err"; then fail "hook $1: the password is shown"; else ok; fi
  if [ "$1" = SessionStart ]; then
    jq -r .hookSpecificOutput.additionalContext "$WORK/ha" | X="$WORK/hook.db" perl -pe 's/\Q$ENV{X}\E/DB/g' >"$WORK/ha.txt"
    jq -r .hookSpecificOutput.additionalContext "$WORK/hb" | X="'$hook_run_url'" perl -pe 's/\Q$ENV{X}\E/DB/g' >"$WORK/hb.txt"
    [ "$(grep -c -- '--db DB' "$WORK/ha.txt")" -gt 10 ] && ok || fail "hook $1 $3: no recall commands: $(head -c 300 "$WORK/ha.txt")"
    if cmp -s "$WORK/ha.txt" "$WORK/hb.txt"; then ok; else fail "hook $1 $3: contexts differ: $(diff "$WORK/ha.txt" "$WORK/hb.txt" | head -4 | cut -c1-300)"; fi
  fi
done
for args in "sessions" "--session $big log" "verify-invariants --all-sessions"; do
  # shellcheck disable=SC2086
  a=$("$CTXFOLD" --db "$WORK/hook.db" $args 2>&1 | sed "s|$WORK/hook.db|DB|g"); b=$("$CTXFOLD" --db "$hook_url" $args 2>&1 | sed "s|$PG_DIR|DIR|g; s|postgresql://ctxfold:\*\*\*@/hooks?host=DIR|DB|g")
  expect_eq "hook archive: $args" "$a" "$b"
done
# A recall command the server's context lists runs as printed (the password from PGPASSWORD).
cmd=$(jq -r .hookSpecificOutput.additionalContext "$WORK/hb" | grep -o "ctxfold --db '$hook_run_url' --session $big grep -- [^ ]*$" | head -1)
[ -n "$cmd" ] && ok || fail "no plain grep recall command in the server's context"
expect_rc "the recall command runs" 0 bash -c "${cmd/ctxfold/\"\$CTXFOLD\"}"
expect_eq "and finds its match" true "$(head -1 "$WORK/out" | jq -r '.type == "match"')"

# hook install: the settings name the server without the password.
expect_rc "hook install" 0 "$CTXFOLD" --db "$hook_url" hook install claude-code --settings "$WORK/settings.json" --write
if grep -qF "$PG_PASS" "$WORK/settings.json" "$WORK/out" "$WORK/err"; then fail "hook install wrote the password"; else ok; fi
grep -qF -- "--db '$hook_run_url' hook" "$WORK/settings.json" && ok || fail "settings: $(head -c 400 "$WORK/settings.json")"
finish
