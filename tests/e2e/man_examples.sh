#!/usr/bin/env bash
# The EXAMPLES of every committed man page run as written (exit 0 under pipefail, some output),
# each page's in a fresh directory holding ./ctxfold.db imported from a real Claude Code session
# with an auto-compaction (so list/expand have a summary) and ./session.jsonl, the same transcript.
source "$(dirname "$0")/lib.sh"
need_transcripts
src=$(cd "$(dirname "$0")/../.." && pwd)
transcript="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
[ -f "$transcript" ] || skip "no $transcript"
before=$(sha256sum < "$transcript")
mkdir -p "$WORK/bin" "$WORK/base"
ln -s "$CTXFOLD" "$WORK/bin/ctxfold"
export PATH="$WORK/bin:$PATH"
unset CTXFOLD_DB CTXFOLD_SESSION
(cd "$WORK/base" && ctxfold import "$transcript" >/dev/null) || fail "base import"
expect_eq "base db has a summary" "true" "$(cd "$WORK/base" && ctxfold list | jq '.total > 0')"
for page in "$src"/man/*.1; do
  name=$(basename "$page" .1)
  cmds=$(sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$page" | sed -n 's/^\$ //p' | sed 's/\\-/-/g; s/\\e/\\/g')
  [ -n "$cmds" ] || { fail "$name has no example commands"; continue; }
  dir="$WORK/$name"; mkdir -p "$dir"
  # A private copy, never a link: an example that writes session.jsonl must not reach the
  # shared transcript (root ignores its read-only mode).
  db_cp "$WORK/base/ctxfold.db" "$dir/ctxfold.db"; cp "$transcript" "$dir/session.jsonl"
  while IFS= read -r cmd; do
    out=$(cd "$dir" && bash -o pipefail -c "$cmd" 2>"$WORK/err"); rc=$?
    if [ "$rc" -eq 0 ]; then ok; else fail "$name: \`$cmd\` exit $rc: $(head -c 300 "$WORK/err")"; fi
    # a command writing to a file shows nothing; every other one prints something
    if [[ $cmd == *">"* ]] || [ -n "$out" ]; then ok; else fail "$name: \`$cmd\` printed nothing"; fi
  done <<<"$cmds"
done
expect_eq "the shared transcript is unchanged" "$before" "$(sha256sum < "$transcript")"
finish
