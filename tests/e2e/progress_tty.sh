#!/usr/bin/env bash
# Progress bars and colour appear on a terminal only: verify-invariants under `script` (a pty) draws
# a progress line on stderr and erases it, and colours --text; piped, stderr and stdout carry neither,
# and NO_COLOR turns colour off on a terminal. stdout's JSON is the same either way.
source "$(dirname "$0")/lib.sh"
need_transcripts
command -v script >/dev/null || { fail "script(1) (bsdutils) is missing"; finish; }
cd "$WORK"
unset CTXFOLD_PROGRESS NO_COLOR
export TERM=xterm
for f in "$CTXFOLD_TRANSCRIPTS"/claude-code/*/*.jsonl "$CTXFOLD_TRANSCRIPTS"/codex/*.jsonl; do
  "$CTXFOLD" import "$f" >/dev/null 2>&1 || fail "import $f"
done
# under a pty: stderr and stdout both go to the terminal script records
script -qec "'$CTXFOLD' verify-invariants --all-sessions --text" tty.log >/dev/null 2>&1 </dev/null
# the line names the database (on a server, the name of the one standing for ./ctxfold.db)
named='ctxfold\.db'; on_server && named='f_[0-9a-f]*'
grep -qa "ctxfold: verify $named \\[" tty.log && ok || fail "no progress line on a terminal: $(head -c 400 tty.log | od -c | head)"
grep -qaF "$(printf '\r\033[K')" tty.log && ok || fail "the progress line is not erased"
grep -qaF "$(printf '\033[32mok\033[0m')" tty.log && ok || fail "no colour on a terminal"
NO_COLOR=1 script -qec "'$CTXFOLD' verify-invariants --all-sessions --text" nc.log >/dev/null 2>&1 </dev/null
if grep -qaF "$(printf '\033[32m')" nc.log; then fail "NO_COLOR still coloured"; else ok; fi
grep -qa ' ok' nc.log && ok || fail "NO_COLOR run printed no report"
# piped: no progress, no colour, no control bytes at all
"$CTXFOLD" verify-invariants --all-sessions --text > out.txt 2> err.txt || fail "verify piped"
if grep -qaF "$(printf '\033')" out.txt err.txt; then fail "control sequences in piped output"; else ok; fi
if grep -qa 'ctxfold: verify' err.txt; then fail "progress in piped stderr"; else ok; fi
# JSON is identical on a terminal and in a pipe
script -qec "'$CTXFOLD' verify-invariants --all-sessions 2>/dev/null" j.log >/dev/null 2>&1 </dev/null
"$CTXFOLD" verify-invariants --all-sessions > j.json 2>/dev/null
expect_eq "same checks on a terminal" "$(jq -c '[.checks[] | [.id, .ok]]' j.json)" \
  "$(tr -d '\r' < j.log | grep -a '^{' | jq -c '[.checks[] | [.id, .ok]]')"
# a compaction shows its summarizer calls on a terminal, and nothing when piped
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
"$CTXFOLD" --db c1.db import "$f" >/dev/null 2>&1 && db_cp c1.db c2.db
s=fa812bfe-b295-4cca-9c2f-fdf01028cb46
script -qec "'$CTXFOLD' --db c1.db --session $s compact --window 20000" comp.log >/dev/null 2>&1 </dev/null
grep -qa 'ctxfold: compact [0-9]* summarizer call(s)' comp.log && ok || fail "no compaction progress on a terminal: $(head -c 300 comp.log)"
grep -qa '"status":"compacted"' comp.log && ok || fail "the compaction under a terminal did not compact"
"$CTXFOLD" --db c2.db --session $s compact --window 20000 > comp.json 2> comp.err
expect_eq "piped: same outcome" compacted "$(jq -r .status comp.json)"
if grep -qa 'ctxfold: compact' comp.err; then fail "compaction progress in piped stderr"; else ok; fi
# importing a whole agent home draws a progress line on a terminal, never when piped
script -qec "'$CTXFOLD' --db h1.db import --from all '$CTXFOLD_TRANSCRIPTS'" home.log >/dev/null 2>&1 </dev/null
grep -qa 'ctxfold: import \[' home.log && ok || fail "no import progress on a terminal: $(head -c 300 home.log)"
"$CTXFOLD" --db h2.db import --from all "$CTXFOLD_TRANSCRIPTS" > home.json 2> home.err || fail "import --from piped"
if grep -qa 'ctxfold: import' home.err; then fail "import progress in piped stderr"; else ok; fi
expect_eq "same nodes either way" "$(tr -d '\r' < home.log | grep -a '^{' | jq .nodes_added)" "$(jq .nodes_added home.json)"
finish
