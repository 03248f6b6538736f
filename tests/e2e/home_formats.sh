#!/usr/bin/env bash
# Issue 10, current formats, from small synthetic fixtures (tests/fixtures/home): Gemini CLI's
# JSON Lines sessions (rewritten turns, $set, $rewindTo, a sub-agent file) under GEMINI_CLI_HOME;
# Claude Code tool outputs stored beside the session (tool-results/); Codex forked_from_id
# lineage in `sessions`.
source "$(dirname "$0")/lib.sh"
F=$(cd "$(dirname "$0")/../fixtures/home" && pwd)
H=$WORK/h; cp -r "$F" "$H"
db=$WORK/h.db
run() { CLAUDE_CONFIG_DIR="$H/claude" CODEX_HOME="$H/codex" GEMINI_CLI_HOME="$H/gemini" HOME="$WORK/nohome" \
        "$CTXFOLD" --db "$db" import --from "$@"; }
expect_rc "import the home" 0 run all
expect_eq "files" "5" "$(jq .outcomes.new "$WORK/out")"
expect_eq "no warning" "0" "$(jq '.warnings | length' "$WORK/out")"
expect_eq "gemini root from GEMINI_CLI_HOME" "true" "$(jq --arg r "$H/gemini/.gemini/tmp" '.roots | index($r) != null' "$WORK/out")"
C() { "$CTXFOLD" --db "$db" "$@"; }

# ---- Gemini JSONL ----
g=session-2026-11-30T10-00-6d1f0a52
expect_eq "gemini: the rewritten turn once, newest text; the rewound prompt kept" \
  "user:what is in src? assistant:Let me look. tool:main.rs lib.rs user:a typo, ignore this user:summarize lib.rs assistant:lib.rs exports the parser." \
  "$(db_sql "$db" "select role||':'||coalesce(json_extract(content,'\$[0].text'),json_extract(content,'\$[0].content')) from nodes where session='$g' order by seq" | xargs)"
expect_eq "gemini: the rewound prompt is off HEAD's branch" \
  "user:what is in src? assistant:Let me look. tool:main.rs lib.rs user:summarize lib.rs assistant:lib.rs exports the parser." \
  "$(C --session "$g" render --format ctxfold | jq -r '.messages[] | "\(.role):\(.content[0].text // .content[0].content)"' | tr '\n' ' ' | xargs)"
expect_eq "gemini: \$set kept" "2026-11-30T10:00:04.000Z" "$(db_sql "$db" "select json_extract(metadata,'\$.lastUpdated') from sessions where id='$g'")"
C sessions >"$WORK/idx.jsonl" || fail "sessions"
expect_eq "gemini: sub-agent under its parent" "$g 1" \
  "$(jq -r 'select(.id=="k3x9p2") | "\(.parent_session) \(.depth)"' "$WORK/idx.jsonl")"
expect_eq "gemini: usage per model" "true" "$(C usage --by model | jq -s 'map(select(.key=="gemini-3-pro-preview")) | length == 1')"
expect_rc "verify" 0 C verify-invariants --all-sessions

# ---- Claude Code: tool output stored beside the session ----
expect_eq "claude: persisted output archived" "/var/log/deep/only-in-the-file.log" \
  "$(db_sql "$db" "select json_extract(metadata,'\$.persisted_outputs[0].text') from nodes where id='cr1'" | sed -n 3p)"
expect_eq "claude: the content stays what the model saw" "true" \
  "$(db_sql "$db" "select json_extract(content,'\$[0].content') from nodes where id='cr1'" | grep -q '^<persisted-output>' && echo true)"
# the archive keeps it after Claude Code deletes the folder; a re-import changes nothing
rm -rf "$H/claude/projects/-w-demo/c1a2b3c4-0000-4000-8000-000000000001"
expect_rc "re-import" 0 run all
expect_eq "re-import adds nothing" "0" "$(jq .nodes_added "$WORK/out")"
expect_eq "claude: still archived" "1" "$(db_sql "$db" "select count(*) from nodes where id='cr1' and CAST(json_extract(metadata,'\$.persisted_outputs[0].bytes') AS INTEGER) > 0")"

# ---- Codex: forked_from_id lineage ----
expect_eq "codex: the fork under the session it came from" "019ad000-0000-7000-8000-0000000000aa 1" \
  "$(jq -r 'select(.id=="019ad000-0000-7000-8000-0000000000bb") | "\(.forked_from) \(.depth)"' "$WORK/idx.jsonl")"
expect_eq "codex: the fork listed right after its parent" "019ad000-0000-7000-8000-0000000000bb" \
  "$(jq -rs 'map(.id) | .[(index("019ad000-0000-7000-8000-0000000000aa") + 1)]' "$WORK/idx.jsonl")"

# a sub-agent file alone (its parent not imported): imported, the missing parent said
db=$WORK/alone.db
"$CTXFOLD" --db "$db" import --from gemini "$H/gemini/.gemini/tmp/proj/chats/6d1f0a52-1111-4222-8333-444455556666" >"$WORK/out" 2>/dev/null \
  || fail "sub-agent alone"
expect_eq "sub-agent alone: parent missing said" "session.parent_missing" "$(jq -r '.warnings[0].code' "$WORK/out")"
finish
