#!/usr/bin/env bash
# Lineage without double counting (docs/forensics.md "Lineage"): a Codex child rollout that replays
# its parent's items and token_count events, a Claude Code --fork-session copy (same record uuids
# and message ids, requestSessionId naming the parent, as Claude Code 2.1.332 writes it) and a
# sub-agent that replays its parent's records are stored as children whose shared prefix is
# marked; `usage` counts every provider request once across the tree, whichever file is imported
# first; `sessions` shows the lineage; `grep --all-sessions`, `compactions` and `tokens` do not
# report the shared prefix twice. A child whose parent is missing counts its requests once and
# says the prefix is unknown; a lineage loop ends and counts once.
source "$(dirname "$0")/lib.sh"
D=$WORK/data
mkdir -p "$D/cx" "$D/cc/proj/p1/subagents"
P=019ad000-0000-7000-8000-0000000000a1
C=019ad000-0000-7000-8000-0000000000c1

# ---- Codex: a parent rollout and a child that replays it (the child's file begins with a
# session_meta naming forked_from_id, then the parent's records verbatim, then its own turn).
tc() { # tc TOTAL LAST: a token_count event
  printf '{"timestamp":"2026-11-30T10:00:0%sZ","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%s,"cached_input_tokens":0,"output_tokens":0,"reasoning_output_tokens":0,"total_tokens":%s},"last_token_usage":{"input_tokens":%s,"cached_input_tokens":100,"output_tokens":50,"reasoning_output_tokens":0,"total_tokens":%s},"model_context_window":258400}}}\n' \
    "${3:-5}" "$1" "$1" "$(($2 - 50))" "$2"
}
item() { # item ROLE TEXT: a message response_item
  local kind=input_text; [ "$1" = assistant ] && kind=output_text
  printf '{"timestamp":"2026-11-30T10:00:01Z","type":"response_item","payload":{"type":"message","role":"%s","content":[{"type":"%s","text":"%s"}]}}\n' "$1" "$kind" "$2"
}
meta() { # meta ID [FORKED_FROM]
  local f=""; [ -n "${2:-}" ] && f=",\"forked_from_id\":\"$2\""
  printf '{"timestamp":"2026-11-30T10:00:00Z","type":"session_meta","payload":{"id":"%s"%s,"timestamp":"2026-11-30T10:00:00Z","cwd":"/w/demo","originator":"codex_cli_rs","cli_version":"0.104.0","source":"cli","model_provider":"openai"}}\n' "$1" "$f"
}
turn() { printf '{"timestamp":"2026-11-30T10:00:01Z","type":"turn_context","payload":{"cwd":"/w/demo","model":"gpt-5.3-codex"}}\n'; }
parent_body() {
  turn; item user "plan the refactor"; item assistant "Here is a plan."; tc 1000 1000
  turn; printf '%s\n' '{"timestamp":"2026-11-30T10:00:02Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"call_1"}}'
  tc 2500 1500
  printf '%s\n' '{"timestamp":"2026-11-30T10:00:03Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"a.txt\nREPLAYEDWORD"}}'
  turn; item assistant "The folder holds a.txt."; tc 4300 1800
  printf '%s\n' '{"timestamp":"2026-11-30T10:00:04Z","type":"compacted","payload":{"message":"The user asked for a plan; the folder holds a.txt."}}'
}
{ meta "$P"; parent_body; } >"$D/cx/rollout-2026-11-30T10-00-00-$P.jsonl"
{ meta "$C" "$P"; meta "$P"; parent_body; turn; item user "try the other plan"; item assistant "Trying it."; tc 6300 2000 7; } \
  >"$D/cx/rollout-2026-11-30T10-05-00-$C.jsonl"
# distinct requests: the parent's 3 and the child's own 1; tokens 1000+1500+1800+2000
want_codex="4 6300"

usage_total() { # usage_total DB: "MESSAGES TOTAL_TOKENS" over every session row
  "$CTXFOLD" --db "$1" usage | jq -rs '[.[] | select(.type=="usage")] | "\(map(.messages)|add // 0) \(map(.tokens.total)|add // 0)"'
}
for order in parent-first child-first; do
  db=$WORK/cx-$order.db
  if [ $order = parent-first ]; then files=("$D/cx/"*"$P.jsonl" "$D/cx/"*"$C.jsonl"); else files=("$D/cx/"*"$C.jsonl" "$D/cx/"*"$P.jsonl"); fi
  "$CTXFOLD" --db "$db" import "${files[@]}" >/dev/null 2>"$WORK/err" || fail "codex import ($order): $(cat "$WORK/err")"
  expect_eq "codex fork ($order): usage counts each request once" "$want_codex" "$(usage_total "$db")"
  expect_eq "codex fork ($order): by model too" "$want_codex" \
    "$("$CTXFOLD" --db "$db" usage --by model | jq -rs '[.[]|select(.type=="usage")] | "\(map(.messages)|add) \(map(.tokens.total)|add)"')"
  "$CTXFOLD" --db "$db" usage >"$WORK/u.jsonl"
  expect_eq "codex fork ($order): the shared requests are the parent's" "3 1 3" \
    "$(jq -rs --arg p "$P" --arg c "$C" '(map(select(.key==$p))[0].messages|tostring) + " " + (map(select(.key==$c))[0].messages|tostring) + " " + (map(select(.key==$c))[0].replayed.messages|tostring)' "$WORK/u.jsonl")"
  expect_eq "codex fork ($order): the parent's row with its fork" "4" \
    "$(jq -r --arg p "$P" 'select(.key==$p) | .with_subagents.messages' "$WORK/u.jsonl")"
  "$CTXFOLD" --db "$db" sessions >"$WORK/s.jsonl"
  expect_eq "codex fork ($order): sessions shows the lineage" "$P fork stored 6 1" \
    "$(jq -r --arg c "$C" 'select(.id==$c) | "\(.lineage.parent) \(.lineage.relation) \(.lineage.parent_state) \(.lineage.shared_nodes) \(.depth)"' "$WORK/s.jsonl")"
  expect_eq "codex fork ($order): the child listed after its parent" "$P $C" "$(jq -r 'select(.type=="session") | .id' "$WORK/s.jsonl" | tr '\n' ' ' | sed 's/ $//')"
  expect_eq "codex fork ($order): grep --all-sessions finds the replayed output once" "1" \
    "$("$CTXFOLD" --db "$db" grep --all-sessions REPLAYEDWORD | jq -s 'map(select(.type=="match")) | length')"
  expect_eq "codex fork ($order): compactions lists the replayed compaction with the parent only" "1 0 1" \
    "$("$CTXFOLD" --db "$db" --session "$P" compactions | jq -r 'select(.type=="summary") | .count') $("$CTXFOLD" --db "$db" --session "$C" compactions | jq -r 'select(.type=="summary") | "\(.count) \(.shared_prefix)"')"
  expect_eq "codex fork ($order): tokens of the child skips the parent's requests" "1" \
    "$("$CTXFOLD" --db "$db" --session "$C" tokens | jq '.requests | length')"
done

# ---- Claude Code: --fork-session copies the parent's records (same uuids and message ids, the
# new sessionId, requestSessionId naming the parent on the copied assistant records).
PS=11111111-1111-4111-8111-111111111111
FS=22222222-2222-4222-8222-222222222222
cc_user() { # cc_user UUID PARENT SESSION TEXT
  printf '{"parentUuid":%s,"isSidechain":false,"type":"user","message":{"role":"user","content":"%s"},"uuid":"%s","timestamp":"2026-12-05T15:13:2%sZ","sessionId":"%s","cwd":"/w/demo","version":"2.1.332","userType":"external"}\n' \
    "$( [ -n "$2" ] && echo "\"$2\"" || echo null)" "$4" "$1" "${5:-1}" "$3"
}
cc_asst() { # cc_asst UUID PARENT SESSION MSGID INPUT [REQUEST_SESSION]
  local r=""; [ -n "${6:-}" ] && r=",\"requestSessionId\":\"$6\""
  printf '{"parentUuid":"%s","isSidechain":false,"type":"assistant","message":{"id":"%s","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[{"type":"text","text":"answer %s"}],"stop_reason":"end_turn","usage":{"input_tokens":%s,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":20}},"uuid":"%s","timestamp":"2026-12-05T15:13:22Z","sessionId":"%s","cwd":"/w/demo","version":"2.1.332","userType":"external"%s}\n' \
    "$2" "$4" "$4" "$5" "$1" "$3" "$r"
}
cc_parent() { # the parent's first turn, written with session $1 (and requestSessionId $2 on copies)
  cc_user u1 "" "$1" "first turn CCSHAREDWORD"; cc_asst a1 u1 "$1" msg_a1 1000 "${2:-}"
  cc_user u2 a1 "$1" "second turn"; cc_asst a2 u2 "$1" msg_a2 2000 "${2:-}"
}
{ cc_parent "$PS"; cc_user u5 a2 "$PS" "resumed turn" 5; cc_asst a5 u5 "$PS" msg_a5 4000; } >"$D/cc/$PS.jsonl"
{ cc_parent "$FS" "$PS"; cc_user f3 a2 "$FS" "forked turn" 6; cc_asst f4 f3 "$FS" msg_f4 3000; } >"$D/cc/$FS.jsonl"
# distinct: msg_a1 1020, msg_a2 2020, msg_a5 4020, msg_f4 3020
want_cc="4 10080"
for order in parent-first child-first; do
  db=$WORK/cc-$order.db
  if [ $order = parent-first ]; then files=("$D/cc/$PS.jsonl" "$D/cc/$FS.jsonl"); else files=("$D/cc/$FS.jsonl" "$D/cc/$PS.jsonl"); fi
  "$CTXFOLD" --db "$db" import "${files[@]}" >/dev/null 2>"$WORK/err" || fail "claude import ($order): $(cat "$WORK/err")"
  expect_eq "claude fork ($order): usage counts each request once" "$want_cc" "$(usage_total "$db")"
  expect_eq "claude fork ($order): lineage" "$PS fork stored 4" \
    "$("$CTXFOLD" --db "$db" sessions | jq -r --arg f "$FS" 'select(.id==$f) | "\(.lineage.parent) \(.lineage.relation) \(.lineage.parent_state) \(.lineage.shared_nodes)"')"
  expect_eq "claude fork ($order): the fork's own request only" "1 2" \
    "$("$CTXFOLD" --db "$db" usage | jq -r --arg f "$FS" 'select(.key==$f) | "\(.messages) \(.replayed.messages)"')"
  expect_eq "claude fork ($order): grep --all-sessions reports the shared prompt once" "1" \
    "$("$CTXFOLD" --db "$db" grep --all-sessions CCSHAREDWORD | jq -s 'map(select(.type=="match")) | length')"
done

# ---- Claude Code sub-agent that replays its parent's records (a fork sub-agent): the main file
# and subagents/agent-<id>.jsonl beginning with copies of the main file's records.
M=33333333-3333-4333-8333-333333333333
{ cc_user s1 "" "$M" "delegate this"; cc_asst s2 s1 "$M" msg_s2 1000; } >"$D/cc/proj/$M.jsonl"
mkdir -p "$D/cc/proj/$M/subagents"
{ cc_user s1 "" "$M" "delegate this" | jq -c '.isSidechain=true | .agentId="abc1234"'
  cc_asst s2 s1 "$M" msg_s2 1000 | jq -c '.isSidechain=true | .agentId="abc1234"'
  cc_user s3 s2 "$M" "sub-agent task" | jq -c '.isSidechain=true | .agentId="abc1234"'
  cc_asst s4 s3 "$M" msg_s4 500 | jq -c '.isSidechain=true | .agentId="abc1234"'; } >"$D/cc/proj/$M/subagents/agent-abc1234.jsonl"
db=$WORK/sub.db
"$CTXFOLD" --db "$db" import "$D/cc/proj/$M.jsonl" >/dev/null 2>"$WORK/err" || fail "sub-agent import: $(cat "$WORK/err")"
expect_eq "sub-agent replaying its parent: each request once" "2 1540" "$(usage_total "$db")"
expect_eq "sub-agent replaying its parent: lineage" "subagent stored 2" \
  "$("$CTXFOLD" --db "$db" sessions | jq -r 'select(.kind=="sidechain") | "\(.lineage.relation) \(.lineage.parent_state) \(.lineage.shared_nodes)"')"

# ---- A child whose parent is missing: its requests count once, the prefix is unknown.
db=$WORK/missing.db
"$CTXFOLD" --db "$db" import "$D/cx/"*"$C.jsonl" "$D/cc/$FS.jsonl" >/dev/null 2>"$WORK/err" || fail "missing import: $(cat "$WORK/err")"
expect_eq "missing parent: every request the archive holds, once" "7 12360" "$(usage_total "$db")"
expect_eq "missing parent: shown as unknown" "$P missing null 0|$PS missing null 0" \
  "$("$CTXFOLD" --db "$db" sessions | jq -r 'select(.type=="session") | "\(.lineage.parent) \(.lineage.parent_state) \(.lineage.shared_nodes) \(.depth)"' | sort | paste -sd'|')"

# ---- Codex 0.171 `exec fork` (paginated history): the child copies nothing, it names the
# parent's records by history_base; each response has its own token_usage_record.
Q=019ad000-0000-7000-8000-0000000000d1
{ printf '{"timestamp":"2026-12-05T10:00:00Z","ordinal":19,"type":"session_meta","payload":{"id":"%s","forked_from_id":"%s","forked_from_ordinal_exclusive":19,"history_base":{"thread_id":"%s","end_ordinal_exclusive":19,"end_byte_offset":4096},"history_mode":"paginated","cwd":"/w/demo","originator":"codex_exec","cli_version":"0.171.0","source":"exec","model_provider":"mock"}}\n' "$Q" "$P" "$P"
  turn; item user "fork prompt"; item assistant "Forked."
  printf '%s\n' '{"timestamp":"2026-12-05T10:00:02Z","ordinal":23,"type":"token_usage_record","payload":{"response_id":"resp_fork1","usage":{"input_tokens":4950,"cached_input_tokens":0,"output_tokens":50,"reasoning_output_tokens":0,"total_tokens":5000}}}'
  tc 9300 5000 8; } >"$D/cx/rollout-2026-12-05T10-00-00-$Q.jsonl"
db=$WORK/paginated.db
"$CTXFOLD" --db "$db" import "$D/cx/"*"$P.jsonl" "$D/cx/"*"$Q.jsonl" >/dev/null 2>"$WORK/err" || fail "paginated import: $(cat "$WORK/err")"
expect_eq "codex paginated fork: each request once" "4 9300" "$(usage_total "$db")"
expect_eq "codex paginated fork: under its parent, nothing copied" "$P fork stored 0 1" \
  "$("$CTXFOLD" --db "$db" sessions | jq -r --arg q "$Q" 'select(.id==$q) | "\(.lineage.parent) \(.lineage.relation) \(.lineage.parent_state) \(.lineage.shared_nodes) \(.depth)"')"

# ---- A lineage loop: A forked from B, B forked from A, the same history replayed.
A=019ad000-0000-7000-8000-0000000000aa
B=019ad000-0000-7000-8000-0000000000bb
{ meta "$A" "$B"; parent_body; } >"$D/cx/loop-a.jsonl"
{ meta "$B" "$A"; parent_body; turn; item user "more"; item assistant "More."; tc 6300 2000 7; } >"$D/cx/loop-b.jsonl"
db=$WORK/loop.db
"$CTXFOLD" --db "$db" import "$D/cx/loop-a.jsonl" "$D/cx/loop-b.jsonl" >/dev/null 2>"$WORK/err" || fail "loop import: $(cat "$WORK/err")"
expect_rc "loop: sessions ends" 0 timeout 20 "$CTXFOLD" --db "$db" sessions
expect_eq "loop: marked" "loop loop" "$(jq -r 'select(.type=="session") | .lineage.parent_state' "$WORK/out" | paste -sd' ')"
expect_eq "loop: each request once" "$want_codex" "$(timeout 20 "$CTXFOLD" --db "$db" usage | jq -rs '[.[] | select(.type=="usage")] | "\(map(.messages)|add) \(map(.tokens.total)|add)"')"
finish
