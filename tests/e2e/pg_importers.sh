#!/usr/bin/env bash
# Every importer with real transcripts, on both backends (docs/backends.md "What works", issue 25
# item 5): the Claude Code session folders (walked with `import --from all`: sub-agent files,
# inline 1.0.x sidechains, the compaction workers), the Codex rollout, the Gemini recordings (one
# rewritten twice under one sessionId) and the interchange files (an OpenAI messages array, an
# OpenHands trajectory), each group imported into its own SQLite file and its own server database.
# The import reports, sessions, log, list, every render and export format, context, the forensics
# commands and verify-invariants (JSON and text, per session and database-wide) must be the same
# byte for byte on both engines (`same`, tests/e2e/pg_lib.sh); a sidechain session gets the core of
# that battery (render, context, export, tokens, verify).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pg_lib.sh"
need_transcripts
start_pg

X="$CTXFOLD_TRANSCRIPTS"
# group NAME IMPORT-ARGS...: one importer's files into a fresh SQLite file and server database.
# Sets $lite and $PGURL for `same`.
group() {
  local name=$1; shift
  lite="$WORK/$name.db"
  PGURL=$(pg_createdb "$name")
  PG_SHOWN_URL="postgresql://ctxfold:***@/$name?host=$PG_DIR"
  same "$name: import" import "$@"
  same "$name: import again (adds nothing)" import "$@"
}

# compare NAME: the read commands on every session of the group, then the database-wide ones.
compare() {
  local name=$1 s fmt args id
  mapfile -t sessions < <(sqlite3 "$lite" "SELECT id FROM sessions ORDER BY rowid")
  [ "${#sessions[@]}" -gt 0 ] && ok || fail "$name: no session imported"
  for args in "sessions" "usage" "usage --by model" "usage --by day" "usage --by project" "files --all-sessions" "commands --all-sessions"; do
    # shellcheck disable=SC2086
    same "$name: $args" $args
  done
  same "$name: verify --all-sessions" verify-invariants --all-sessions
  [ "$(jq -r .ok "$WORK/b" 2>/dev/null)" = true ] && ok || fail "$name: the server's verify is not clean: $(head -c 400 "$WORK/b")"
  same "$name: verify --text --all-sessions" --text verify-invariants --all-sessions
  same "$name: verify --quick --all-sessions" verify-invariants --quick --all-sessions
  same "$name: export --all-sessions" export --all-sessions
  mapfile -t sidechains < <(sqlite3 "$lite" "SELECT id FROM sessions WHERE kind='sidechain'")
  for s in "${sessions[@]}"; do
    same "$name: list $s" --session "$s" list --limit 0
    # A sidechain (a sub-agent's session) is read by the same queries as its parent: the whole
    # battery on every main and fork session, the core of it on each sidechain (CI time).
    if printf '%s\n' "${sidechains[@]}" | grep -qxF -- "$s"; then
      for args in "render --format ctxfold" "context" "export --format ctxfold" "tokens" "verify-invariants"; do
        # shellcheck disable=SC2086
        same "$name: $args $s" --session "$s" $args
      done
      continue
    fi
    for fmt in ctxfold openai anthropic gemini responses text; do
      same "$name: render --format $fmt $s" --session "$s" render --format "$fmt"
    done
    same "$name: render --strategy raw $s" --session "$s" render --strategy raw
    same "$name: context $s" --session "$s" context
    for fmt in ctxfold openai anthropic; do same "$name: export --format $fmt $s" --session "$s" export --format "$fmt"; done
    for fmt in claude-code codex; do
      same "$name: export --format $fmt $s" --session "$s" export --format "$fmt" --id 00000000-0000-4000-8000-000000000000 --cwd /w
    done
    for args in "log" "log --graph --format dot" "tokens" "usage" "compactions" "files" "commands" "snapshot"; do
      # shellcheck disable=SC2086
      same "$name: $args $s" --session "$s" $args
    done
    same "$name: verify --session $s" --session "$s" verify-invariants
    for id in $(sqlite3 "$lite" "SELECT id FROM nodes WHERE session='$s' ORDER BY seq LIMIT 2") \
              $(sqlite3 "$lite" "SELECT id FROM nodes WHERE session='$s' AND kind='summary' LIMIT 1"); do
      same "$name: describe $id" --session "$s" describe "$id"
      same "$name: show $id" show "$id"
    done
  done
  expect_eq "$name: node count" "$(sqlite3 "$lite" 'SELECT count(*) FROM nodes')" "$(pg_psql -d "$name" -tA -c 'SELECT count(*) FROM nodes')"
  expect_eq "$name: source records" "$(sqlite3 "$lite" 'SELECT count(*) FROM source_records')" \
    "$(pg_psql -d "$name" -tA -c 'SELECT count(*) FROM source_records')"
  expect_eq "$name: events" "$(sqlite3 "$lite" 'SELECT count(*) FROM events')" "$(pg_psql -d "$name" -tA -c 'SELECT count(*) FROM events')"
}

need_files() { # need_files FILE...: each must exist (the sample set is fixed)
  local f
  for f in "$@"; do [ -e "$f" ] || { fail "missing transcript $f"; return 1; }; done
}

# Claude Code: every session folder and file, walked as an agent home would be.
if need_files "$X/claude-code"; then group claude "--from" all "$X/claude-code"; compare claude; fi
# Codex CLI: the rollout with a compaction (replacement_history).
mapfile -t codex < <(find "$X/codex" -name '*.jsonl' | sort)
if [ "${#codex[@]}" -gt 0 ] && need_files "${codex[@]}"; then group codex "${codex[@]}"; compare codex
else fail "no Codex rollout"; fi
# Gemini CLI: three recordings, two of them saves of one session.
mapfile -t gemini < <(find "$X/gemini" -name '*.json' | sort)
if [ "${#gemini[@]}" -gt 0 ] && need_files "${gemini[@]}"; then group gemini "${gemini[@]}"; compare gemini
else fail "no Gemini recording"; fi
# Interchange: an OpenAI chat-completions messages array and an OpenHands trajectory.
mapfile -t inter < <(find "$X/interchange" -name '*.json' | sort)
if [ "${#inter[@]}" -gt 0 ] && need_files "${inter[@]}"; then group interchange "${inter[@]}"; compare interchange
else fail "no interchange file"; fi
finish
