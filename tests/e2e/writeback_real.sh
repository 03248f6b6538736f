#!/usr/bin/env bash
# export --format claude-code | codex (write-back) on the real transcripts: each session is
# compacted with rolling, lcm and snapcompact (extractive summarizer, small window, --force), written
# back as a new Claude Code session and a new Codex rollout, and the written file imported again
# (`ctxfold import`): its render equals the source's render item by item (role, block kind, text or
# tool id; image bytes), the leading system run aside (the client sends its own system prompt).
# Plus the contract: a fresh UUID, the provenance record, tool pairs intact, the source database
# and transcript untouched, --into-home layout, and an existing target never overwritten (exit 4).
# On a server (tests/e2e/server/run.sh) the transcripts are transcripts_for_run's subset (lib.sh).
source "$(dirname "$0")/lib.sh"
need_transcripts
ITEMS="$(cd "$(dirname "$0")" && pwd)/writeback_items.py"
cd "$WORK"
files=$(find "$CTXFOLD_TRANSCRIPTS" -type f \( -name '*.jsonl' -o -name '*.json' \) ! -path '*/subagents/*' \
        ! -path '*/interchange/*' | sort | transcripts_for_run)
[ -n "$files" ] || fail "no transcripts found"
n=0
ID=0e0e0e0e-1111-4222-8333-444455556666
while IFS= read -r f; do
  n=$((n+1)); d="t$n"; mkdir -p "$d"
  src_sum=$(sha256sum "$f" | cut -c1-64)
  "$CTXFOLD" --db "$d/a.db" import "$f" >/dev/null 2>"$d/import.err" || { fail "import $f: $(head -c 300 "$d/import.err")"; continue; }
  for strat in rolling lcm snapcompact; do
    db_cp "$d/a.db" "$d/$strat.db"
    "$CTXFOLD" --db "$d/$strat.db" compact --strategy $strat --force --window 16000 >"$d/$strat.compact.json" 2>"$d/$strat.compact.err" \
      || { fail "$f: compact $strat: $(head -c 300 "$d/$strat.compact.err")"; continue; }
    before=$(sha256sum "$d/$strat.db" | cut -c1-64)
    for client in claude-code codex; do
      proto=anthropic; [ $client = codex ] && proto=responses
      x="$d/$strat.$client.jsonl"
      "$CTXFOLD" --db "$d/$strat.db" render --strategy $strat --format $proto --body --max-row-bytes 0 > "$d/$strat.$proto.src.json" \
        || { fail "$f: render $strat"; continue; }
      "$CTXFOLD" --db "$d/$strat.db" export --format $client --strategy $strat --id $ID > "$x" 2>"$d/export.err" \
        || { fail "$f: export $client after $strat: $(head -c 300 "$d/export.err")"; continue; }
      db_rm "$d/r.db"
      "$CTXFOLD" --db "$d/r.db" import --format $client "$x" >/dev/null 2>"$d/reimport.err" \
        || { fail "$f: re-import of the $client write-back ($strat): $(head -c 300 "$d/reimport.err")"; continue; }
      "$CTXFOLD" --db "$d/r.db" render --format $proto --body --max-row-bytes 0 > "$d/$strat.$proto.back.json" \
        || { fail "$f: render of the $client write-back"; continue; }
      if cmp=$(python3 "$ITEMS" $proto "$d/$strat.$proto.src.json" "$d/$strat.$proto.back.json" 2>"$d/items.err"); then ok
      else fail "$f: $strat → $client → import: the render differs ($cmp items equal): $(head -c 600 "$d/items.err")"; fi
      echo "$f $strat $client $cmp $(stat -c %s "$x")" >> "$WORK/figures"
      # the new id, and where the session came from
      if [ $client = claude-code ]; then
        expect_eq "$f: $strat: every record names the new session" "$ID" "$(jq -r 'select(.sessionId) | .sessionId' "$x" | sort -u)"
        expect_eq "$f: $strat: provenance on the first record" "$("$CTXFOLD" --db "$d/$strat.db" render --strategy $strat | jq -r .head)" \
          "$(head -1 "$x" | jq -r .ctxfold.source_head)"
        [ "$(anthropic_orphans "$d/$strat.$proto.back.json")" = 0 ] && ok || fail "$f: $strat: orphan tool pairs in the written-back session"
      else
        expect_eq "$f: $strat: session_meta names the new id" "$ID" "$(head -1 "$x" | jq -r .payload.id)"
        expect_eq "$f: $strat: provenance in session_meta" "$("$CTXFOLD" --db "$d/$strat.db" render --strategy $strat | jq -r .head)" \
          "$(head -1 "$x" | jq -r .payload.ctxfold.source_head)"
      fi
    done
    expect_eq "$f: $strat: export is read-only" "$before" "$(sha256sum "$d/$strat.db" | cut -c1-64)"
  done
  expect_eq "$f: the source transcript is untouched" "$src_sum" "$(sha256sum "$f" | cut -c1-64)"
done <<<"$files"
[ "$n" -ge 5 ] && ok || fail "only $n transcripts"
column -t "$WORK/figures" >&2 2>/dev/null || cat "$WORK/figures" >&2

# --into-home: the client's layout, the id and the resume command; never over an existing file
db="t1/rolling.db"
out=$("$CTXFOLD" --db "$db" export --format claude-code --into-home home/.claude --cwd /w/my.proj --id $ID)
expect_eq "claude-code: the file in the project folder" "home/.claude/projects/-w-my-proj/$ID.jsonl" "$(jq -r 'select(.type=="writeback") | .path' <<<"$out")"
[ -s "home/.claude/projects/-w-my-proj/$ID.jsonl" ] && ok || fail "claude-code --into-home wrote no file"
expect_eq "claude-code: the resume command" "cd /w/my.proj && CLAUDE_CONFIG_DIR=home/.claude claude --resume $ID" "$(jq -r 'select(.type=="writeback") | .resume' <<<"$out")"
expect_eq "the stream ends with export's summary" "ctxfold.export/1" "$(tail -1 <<<"$out" | jq -r .schema)"
sum=$(sha256sum "home/.claude/projects/-w-my-proj/$ID.jsonl")
expect_rc "an existing target: environment, nothing written" 4 "$CTXFOLD" --db "$db" export --format claude-code --strategy lcm --into-home home/.claude --cwd /w/my.proj --id $ID
grep -q "already exists" "$WORK/err" && ok || fail "no clear message for an existing target: $(cat "$WORK/err")"
expect_eq "the existing file is unchanged" "$sum" "$(sha256sum "home/.claude/projects/-w-my-proj/$ID.jsonl")"
out=$(CLAUDE_CONFIG_DIR="$WORK/cfg" "$CTXFOLD" --db "$db" export --format claude-code --into-home --cwd /w)
id=$(jq -r 'select(.type=="writeback") | .id' <<<"$out")
[[ $id =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]] && ok || fail "not a fresh UUID v4: $id"
[ -s "$WORK/cfg/projects/-w/$id.jsonl" ] && ok || fail "CLAUDE_CONFIG_DIR is not honoured"
out=$(CODEX_HOME="$WORK/cx" "$CTXFOLD" --db "$db" export --format codex --into-home --cwd /w)
p=$(jq -r 'select(.type=="writeback") | .path' <<<"$out"); id=$(jq -r 'select(.type=="writeback") | .id' <<<"$out")
[[ $p =~ ^$WORK/cx/sessions/[0-9]{4}/[0-9]{2}/[0-9]{2}/rollout-[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}-[0-9]{2}-[0-9]{2}-$id\.jsonl$ ]] && ok || fail "codex path: $p"
[[ $id =~ ^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]] && ok || fail "not a UUID v7: $id"
[ -s "$p" ] && ok || fail "CODEX_HOME is not honoured"
expect_rc "--id that is no UUID: usage" 2 "$CTXFOLD" --db "$db" export --format codex --id nope
expect_rc "--into-home with the ctxfold format: usage" 2 "$CTXFOLD" --db "$db" export --into-home x
expect_rc "--all-sessions with claude-code: usage" 2 "$CTXFOLD" --db "$db" export --format claude-code --all-sessions
finish
