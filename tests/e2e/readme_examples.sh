#!/usr/bin/env bash
# The README's "Using it" commands run as written (exit 0 under pipefail) against s.db imported
# from a real Claude Code session with an auto-compaction; lines with a placeholder (…) or an
# interactive pager are left out, and the first import line is replaced by a real import.
source "$(dirname "$0")/lib.sh"
need_transcripts
src=$(cd "$(dirname "$0")/../.." && pwd)
transcript="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
[ -f "$transcript" ] || skip "no $transcript"
mkdir -p "$WORK/bin"; ln -s "$CTXFOLD" "$WORK/bin/ctxfold"; export PATH="$WORK/bin:$PATH"
unset CTXFOLD_DB CTXFOLD_SESSION
cd "$WORK"
ctxfold --db s.db import "$transcript" >/dev/null || fail "import"
cmds=$(sed -n '/^## Using it/,/^## /p' "$src/README.md" | awk '/^```sh/{c=1;next} /^```/{c=0} c' \
       | grep -v -e '…' -e '| less' | sed 's/ *# .*$//')
[ "$(wc -l <<<"$cmds")" -ge 10 ] && ok || fail "found only $(wc -l <<<"$cmds") README commands"
while IFS= read -r cmd; do
  [ -n "$cmd" ] || continue
  out=$(bash -o pipefail -c "$cmd" 2>"$WORK/err"); rc=$?
  if [ "$rc" -eq 0 ]; then ok; else fail "\`$cmd\` exit $rc: $(head -c 300 "$WORK/err")"; fi
  if [[ $cmd == *">"* ]] || [ -n "$out" ]; then ok; else fail "\`$cmd\` printed nothing"; fi
done <<<"$cmds"
# the pipelines print one record per id they were given
expect_eq "list | expand -: one page per summary" "$(ctxfold --db s.db list | jq .total)" \
  "$(ctxfold --db s.db list | ctxfold --db s.db expand - --limit 10 | jq -s length)"
expect_eq "grep | describe -: one description per match" \
  "$(ctxfold --db s.db grep -i error --limit 3 | jq -s 'map(select(.type=="match")) | length')" \
  "$(ctxfold --db s.db grep -i error --limit 3 | ctxfold --db s.db describe - | jq -s length)"
finish
