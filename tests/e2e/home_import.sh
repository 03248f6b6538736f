#!/usr/bin/env bash
# Issue 10: the whole transcript tree imported as an agent home (explicit folder and the agents'
# own roots through their environment overrides), incrementally: a second run adds nothing and
# opens nothing; appended, rewritten and deleted sources; the sessions index with every sub-agent
# under its parent; usage equal to an independent jq count over distinct message ids; both real
# compactions with their dropped reports.
source "$(dirname "$0")/lib.sh"
need_transcripts
T=$CTXFOLD_TRANSCRIPTS
db=$WORK/home.db
C() { "$CTXFOLD" --db "$db" "$@"; }

# ---- the tree as a folder ----
expect_rc "first import" 0 C import --from all "$T"
cp "$WORK/out" "$WORK/first.json"
agent_files=$( (find "$T/claude-code" "$T/codex" -name '*.jsonl'; find "$T/gemini" -name '*.json') | wc -l)
# --from all takes the interchange files too (an OpenAI messages trajectory, an OpenHands one).
expect_eq "every agent and interchange file new" "$((agent_files + 2))" "$(jq .outcomes.new "$WORK/first.json")"
expect_eq "nothing failed" "0" "$(jq .outcomes.failed "$WORK/first.json")"
expect_eq "nothing ignored" "0" "$(jq .outcomes.ignored "$WORK/first.json")"
expect_eq "interchange formats imported" "openai openhands" \
  "$(jq -r '[.files[] | select(.path | contains("/interchange/")) | .agent] | sort | join(" ")' "$WORK/first.json")"
expect_eq "interchange sessions have nodes" "true" \
  "$(jq '[.sessions[] | select(.format=="openai" or .format=="openhands") | .nodes_added > 0] | length == 2 and all' "$WORK/first.json")"
nodes1=$(db_sql "$db" 'select count(*) from nodes')
expect_rc "second import" 0 C import --from all "$T"
expect_eq "second run adds nothing" "0" "$(jq .nodes_added "$WORK/out")"
expect_eq "second run reads nothing" "0" "$(jq .bytes_read "$WORK/out")"
expect_eq "second run: all unchanged" "$((agent_files + 2))" "$(jq '.outcomes.unchanged' "$WORK/out")"
expect_eq "node count stable" "$nodes1" "$(db_sql "$db" 'select count(*) from nodes')"
expect_rc "verify" 0 C verify-invariants --all-sessions

# --from AGENT over the tree: every other file is ignored, and each is named with its reason in
# the output and on stderr (never a silent count).
expect_rc "codex only over the tree" 0 "$CTXFOLD" --db "$WORK/codex.db" import --from codex "$T"
ignored=$(jq .outcomes.ignored "$WORK/out")
expect_eq "codex only: the others ignored" "$((agent_files + 2 - $(find "$T/codex" -name '*.jsonl' | wc -l)))" "$ignored"
expect_eq "codex only: each ignored file listed with a reason" "$ignored" \
  "$(jq '[.files[] | select(.outcome=="ignored" and (.reason | length > 0))] | length' "$WORK/out")"
expect_eq "codex only: the interchange file's reason names its format" "true" \
  "$(jq '[.files[] | select(.path | endswith("openhands_trajectory_basic.json")) | .reason | contains("openhands")] == [true]' "$WORK/out")"
expect_eq "codex only: each ignored file named on stderr" "$ignored" "$(grep -c 'source.ignored' "$WORK/err")"

# Gemini: two files with one sessionId stay two sessions.
expect_eq "gemini sessions by file" "3" "$(C sessions --agent gemini | jq -s 'map(select(.type=="session")) | length')"

# ---- sessions index: every sub-agent directly under its parent ----
C sessions >"$WORK/idx.jsonl" || fail "sessions"
expect_eq "every sidechain has its parent in the index, listed before it" "0" "$(jq -s '. as $all
  | [to_entries[] | select(.value.kind=="sidechain") | . as $c
     | select([$all[0:$c.key][] | select(.id == $c.value.parent_session)] | length == 0)] | length' "$WORK/idx.jsonl")"
expect_eq "sidechains are nested" "0" "$(jq -s '[.[] | select(.kind=="sidechain" and .depth < 1)] | length' "$WORK/idx.jsonl")"
expect_eq "sub-agents seen" "true" "$(jq -s '[.[] | select(.kind=="sidechain")] | length >= 15' "$WORK/idx.jsonl")"
expect_eq "timestamps from records" "true" "$(jq -s 'map(select(.id=="fa812bfe-b295-4cca-9c2f-fdf01028cb46"))[0] | (.first_timestamp|startswith("20")) and .last_timestamp >= .first_timestamp' "$WORK/idx.jsonl")"
expect_eq "claude title record used" "agent" "$(jq -rs 'map(select(.id=="0ccf1a04-1b4c-43b6-8aa5-79e41db43a68"))[0].title_source' "$WORK/idx.jsonl")"
expect_eq "models listed" "true" "$(jq -s 'map(select(.agent=="codex"))[0].models | index("gpt-5.3-codex") != null' "$WORK/idx.jsonl")"
expect_eq "compaction counts" "2" "$(jq -s 'map(select(.agent=="claude-code") | .compactions.imported) | add' "$WORK/idx.jsonl")"
expect_rc "sessions --text" 0 C sessions --text
expect_eq "filters: --until before everything" "0" "$(C sessions --until 2000-01-01 | jq -s 'map(select(.type=="session")) | length')"
expect_eq "filters: --project" "true" "$(C sessions --project USER | jq -s 'map(select(.type=="session")) | length > 0 and all(.project | contains("USER"))')"

# ---- usage: totals equal the sum over distinct message ids (last line's usage), by jq ----
for main in "$T"/claude-code/compaction_manual_v2.1.39_TRUNCATED/*.jsonl "$T"/claude-code/auto_compaction_v2.1_full/*.jsonl \
            "$T"/claude-code/inline_sidechains_v1.0.98/fe5e1c67-*.jsonl "$T"/claude-code/async_agents_api_errors_v2.1.15/*.jsonl; do
  stem=$(basename "$main" .jsonl)
  files=("$main"); [ -d "$(dirname "$main")/$stem/subagents" ] && files+=("$(dirname "$main")/$stem"/subagents/*.jsonl)
  want=$(for f in "${files[@]}"; do
           jq -c 'select(.type=="assistant" and .message.usage != null) | {id: .message.id, u: .message.usage}' "$f" \
             | jq -s 'group_by(.id) | map(.[-1].u | (.input_tokens // 0) + (.cache_creation_input_tokens // 0)
                                               + (.cache_read_input_tokens // 0) + (.output_tokens // 0)) | add // 0'
         done | jq -s add)
  got=$(C usage | jq -r --arg s "$stem" 'select(.key==$s) | .with_subagents.tokens.total')
  expect_eq "usage of $stem equals jq's distinct-message sum" "$want" "$got"
done
expect_eq "unknown price is unknown, not zero" "null" "$(C usage --by model | jq -r 'select(.key=="gpt-5.3-codex") | .cost.micro_units')"
expect_eq "known price is an integer" "number" "$(C usage --by model | jq -r 'select(.key|startswith("claude-opus-4-6")) | .cost.micro_units | type')"
expect_rc "usage by day" 0 C usage --by day --text
expect_rc "usage by project" 0 C usage --by project

# ---- compactions: both real Claude compactions with dropped reports ----
for s in ae4a77f8-aedd-4bc1-888f-c94edc91af04 fa812bfe-b295-4cca-9c2f-fdf01028cb46; do
  C compactions "$s" >"$WORK/all.jsonl" || fail "compactions $s"
  expect_eq "$s: the summary counts the compactions" "$(jq -s 'map(select(.type=="compaction")) | length' "$WORK/all.jsonl")" \
    "$(tail -1 "$WORK/all.jsonl" | jq -r 'select(.type=="summary" and .schema=="ctxfold.compactions/1") | .count')"
  jq -c 'select(.type=="compaction")' "$WORK/all.jsonl" >"$WORK/cmp.jsonl"
  expect_eq "$s: one imported compaction" "1" "$(jq -s '[.[] | select(.origin=="claude-code")] | length' "$WORK/cmp.jsonl")"
  expect_eq "$s: measured tokens before" "measured" "$(jq -r '.tokens_before.label' "$WORK/cmp.jsonl")"
  expect_eq "$s: dropped paths and commands" "true" "$(jq '.dropped_count.path > 0 and .dropped_count.command > 0' "$WORK/cmp.jsonl")"
  node=$(jq -r '.dropped[0].node' "$WORK/cmp.jsonl")
  sid=$(jq -r '.summary_id' "$WORK/cmp.jsonl")
  expect_eq "$s: dropped item's node is covered" "1" "$(db_sql "$db" "select count(*) from covers c join nodes n on n.seq=c.summary_seq where n.id='$sid' and c.node_id='$node'")"
done
expect_eq "trigger kept" "manual auto" "$(for s in ae4a77f8-aedd-4bc1-888f-c94edc91af04 fa812bfe-b295-4cca-9c2f-fdf01028cb46; do C compactions "$s" | jq -r 'select(.type=="compaction") | .trigger'; done | xargs)"

# ---- the agents' own roots through their environment overrides ----
H=$WORK/h; mkdir -p "$H/cc/projects/-home-USER-p" "$H/codex/sessions/2026/02/23" "$H/codex/archived_sessions" "$H/home/.gemini/tmp/abc/chats"
cp -r "$T/claude-code/auto_compaction_v2.1_full/." "$H/cc/projects/-home-USER-p/"
cp "$T"/codex/*.jsonl "$H/codex/sessions/2026/02/23/"
cp "$T"/gemini/*.json "$H/home/.gemini/tmp/abc/chats/"
db=$WORK/roots.db
run_roots() { CLAUDE_CONFIG_DIR="$H/cc" CODEX_HOME="$H/codex" HOME="$H/home" "$CTXFOLD" --db "$db" import --from "$@"; }
run_roots all >"$WORK/out" 2>"$WORK/err" || fail "roots import: $(head -c 300 "$WORK/err")"
expect_eq "roots: files" "8" "$(jq .outcomes.new "$WORK/out")"
expect_eq "roots: four roots walked" "4" "$(jq '.roots | length' "$WORK/out")"
run_roots codex >"$WORK/out" || fail "codex only"
expect_eq "roots: codex only, unchanged" "1" "$(jq .outcomes.unchanged "$WORK/out")"

# appended: a file grown by new lines reads as appended and gains nodes; equal to a direct import
f=$H/cc/projects/-home-USER-p/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl
full=$WORK/full.jsonl; cp "$f" "$full"
head -n 700 "$full" >"$f"
db=$WORK/grow.db
run_roots claude-code >/dev/null || fail "grow: first"
b1=$(stat -c %s "$f")
# lines 701..1500: plain turns, read from where the last run stopped (only the appended bytes)
head -n 1500 "$full" >"$f"
b2=$(stat -c %s "$f")
run_roots claude-code >"$WORK/out" || fail "grow: second"
ff() { jq -r --arg f "$f" ".files[] | select(.path==\$f) | $1" "$WORK/out"; }
expect_eq "appended outcome" "appended" "$(ff .outcome)"
expect_eq "appended: read from the last offset" "$b1" "$(ff .resumed_at)"
expect_eq "appended: bytes read = appended bytes" "$((b2 - b1))" "$(ff .bytes_read)"
expect_eq "appended nodes added" "true" "$(jq '.nodes_added > 0' "$WORK/out")"
expect_eq "appended: no parent lost at the resume point" "0" "$(jq '[.warnings[] | select(.code=="parent.missing")] | length' "$WORK/out")"
# the rest holds the compaction (line 1584), whose covered chain lies before the offset: read whole
cp "$full" "$f"
run_roots claude-code >"$WORK/out" || fail "grow: third"
expect_eq "appended with a compaction: outcome" "appended" "$(ff .outcome)"
expect_eq "appended with a compaction: read whole, says why" "true" "$(ff '.read_whole_because | test("compaction")')"
expect_eq "appended with a compaction: whole file read" "$(stat -c %s "$f")" "$(ff .bytes_read)"
"$CTXFOLD" --db "$WORK/direct.db" import "$full" >/dev/null || fail "direct import"
expect_eq "grown file = direct import (nodes of the main session)" \
  "$(db_sql "$WORK/direct.db" "select count(*) from nodes where session='full'")" \
  "$(db_sql "$db" "select count(*) from nodes where session='fa812bfe-b295-4cca-9c2f-fdf01028cb46' and id not like '%~%'")"
# the same chain too: every node has the predecessor one import of the same home gives it (the
# compaction worker's reminders spliced in as well; conflict copies "~<8 hex>" left out)
db_grown=$db; db=$WORK/wholehome.db
run_roots claude-code >/dev/null || fail "whole home"
chain() { db_sql "$1" "select id||' '||coalesce(predecessor,'-') from nodes where session='fa812bfe-b295-4cca-9c2f-fdf01028cb46'
  and id not glob '*~[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]' order by id"; }
expect_eq "grown file = one import of it (predecessors)" "" "$(diff <(chain "$db") <(chain "$db_grown") | head -5)"
db=$db_grown
# rewritten: other bytes at the front
{ echo '{"type":"summary","summary":"rewritten title","leafUuid":"x"}'; cat "$full"; } >"$f"
run_roots claude-code >"$WORK/out" || fail "rewrite"
expect_eq "rewritten outcome" "rewritten" "$(jq -r --arg f "$f" '.files[] | select(.path==$f) | .outcome' "$WORK/out")"
expect_eq "rewritten file deduplicated (lines moved, nothing new)" "0" "$(jq .nodes_added "$WORK/out")"
# deleted: the database keeps everything
n=$(db_sql "$db" 'select count(*) from nodes')
rm -rf "$H/cc/projects"; mkdir -p "$H/cc/projects"
run_roots claude-code >"$WORK/out" || fail "after delete"
expect_eq "deleted source changes nothing" "$n" "$(db_sql "$db" 'select count(*) from nodes')"
# an unreadable file: reported as failed, the rest imported. As root no permission stops a read,
# so a file whose read fails with EIO stands in (a link to /proc/self/mem, a regular file).
mkdir -p "$H/cc/projects/x"; cp "$full" "$H/cc/projects/x/b.jsonl"
if [ "$(id -u)" != 0 ]; then
  cp "$full" "$H/cc/projects/x/a.jsonl"; chmod 000 "$H/cc/projects/x/a.jsonl"
elif ! head -c 1 /proc/self/mem >/dev/null 2>&1 && [ -f /proc/self/mem ]; then
  ln -s /proc/self/mem "$H/cc/projects/x/a.jsonl"
fi
if [ -e "$H/cc/projects/x/a.jsonl" ]; then
  # (the link leaves the tree: only --follow-symlinks reads it, as its target /proc/<pid>/mem)
  run_roots claude-code --follow-symlinks >"$WORK/out" 2>"$WORK/err" || fail "unreadable"
  expect_eq "unreadable reported, rest imported" "1 1" "$(jq -r '"\(.outcomes.failed) \(.outcomes.new)"' "$WORK/out")"
  expect_eq "unreadable: named with its reason" "source.unreadable" \
    "$(jq -r '.warnings[] | select(.file | endswith("a.jsonl") or endswith("/mem")) | .code' "$WORK/out")"
fi
finish
