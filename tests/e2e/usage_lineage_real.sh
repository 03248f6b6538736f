#!/usr/bin/env bash
# On the real transcripts, `usage` counts every provider request exactly once (docs/forensics.md
# "Lineage"): the total over an archive of all of them equals the sum of the distinct requests
# the files record (counted here independently: Claude Code message.id, each new cumulative Codex
# token_count, Gemini CLI messages with tokens, OpenHands model responses). Then forks are made
# of two real sessions the way the clients write them (a Claude Code --fork-session copy: same
# uuids and message ids, the new sessionId, requestSessionId on the copied assistant records; a
# Codex child rollout: a session_meta with forked_from_id, then the parent's records verbatim):
# the totals do not move and the forks show their lineage.
source "$(dirname "$0")/lib.sh"
need_transcripts
command -v python3 >/dev/null || skip "python3 is not installed"
T=$CTXFOLD_TRANSCRIPTS
distinct() { # distinct DIR...: {"requests","total"} of the distinct requests in the files
  python3 - "$@" <<'PY'
import json, os, sys
reqs = {}
def claude(p):
    for line in open(p, errors='replace'):
        try: v = json.loads(line)
        except Exception: continue
        if not isinstance(v, dict) or v.get('type') != 'assistant': continue
        m = v.get('message') or {}
        u = m.get('usage')
        if isinstance(u, dict) and m.get('id'):
            reqs[('claude', m['id'])] = sum(u.get(k, 0) for k in ('input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens'))
def codex(p):
    last = None
    for line in open(p, errors='replace'):
        try: v = json.loads(line)
        except Exception: continue
        pl = v.get('payload') if isinstance(v, dict) else None
        if v.get('type') == 'session_meta' and isinstance(pl, dict) and pl.get('forked_from_id'):
            return  # a child rollout: its replayed records are the parent's requests
        if v.get('type') == 'event_msg' and isinstance(pl, dict) and pl.get('type') == 'token_count' and isinstance(pl.get('info'), dict):
            tot = pl['info']['total_token_usage']['total_tokens']
            if tot == last: continue  # the same cumulative figure again: no new request
            last = tot
            u = pl['info']['last_token_usage']
            reqs[('codex', os.path.basename(p), tot)] = u['input_tokens'] + u['output_tokens']
def gemini(p):
    for m in json.load(open(p)).get('messages', []):
        t = m.get('tokens')
        if m.get('type') == 'gemini' and isinstance(t, dict):
            reqs[('gemini', m['id'])] = t.get('input', 0) + t.get('tool', 0) + t.get('output', 0) + t.get('thoughts', 0)
def openhands(p):
    for e in json.load(open(p)):
        r = (e.get('tool_call_metadata') or {}).get('model_response') if isinstance(e, dict) else None
        if r and isinstance(r.get('usage'), dict):
            reqs[('openhands', r['id'])] = r['usage']['total_tokens']
for root in sys.argv[1:]:
    for dp, dn, fn in os.walk(root):
        for f in fn:
            p = os.path.join(dp, f)
            head = open(p, errors='replace').read(4096)
            if f.endswith('.jsonl') and '"session_meta"' in head: codex(p)
            elif f.endswith('.jsonl'): claude(p)
            elif f.startswith('session-') and f.endswith('.json'): gemini(p)
            elif f.startswith('openhands') and f.endswith('.json'): openhands(p)
print("%d %d" % (len(reqs), sum(reqs.values())))
PY
}
usage_total() { # usage_total DB: "MESSAGES TOTAL_TOKENS" over every session row
  "$CTXFOLD" --db "$1" usage | jq -rs '[.[] | select(.type=="usage")] | "\(map(.messages)|add // 0) \(map(.tokens.total)|add // 0)"'
}
want=$(distinct "$T")
db=$WORK/all.db
expect_rc "import every real transcript" 0 "$CTXFOLD" --db "$db" import --from all "$T"
expect_eq "real transcripts: usage = the distinct requests" "$want" "$(usage_total "$db")"
expect_eq "real transcripts: by model, the same" "$want" \
  "$("$CTXFOLD" --db "$db" usage --by model | jq -rs '[.[]|select(.type=="usage")] | "\(map(.messages)|add) \(map(.tokens.total)|add)"')"

# Forks of two real sessions, written as the clients write them.
F=$WORK/forks
mkdir -p "$F"
cc=$T/claude-code/v2.1.38_short_parallel_tool_rejection.jsonl
parent=$(jq -r 'select(.sessionId) | .sessionId' "$cc" | head -1)
fork=99999999-9999-4999-8999-999999999999
jq -c --arg f "$fork" --arg p "$parent" 'if .sessionId then .sessionId = $f else . end
  | if .type == "assistant" then .requestSessionId = $p else . end' "$cc" >"$F/$fork.jsonl"
cx=$(ls "$T"/codex/*.jsonl | head -1)
cparent=$(head -1 "$cx" | jq -r .payload.id)
child=019ad000-0000-7000-8000-00000000f0c1
{ head -1 "$cx" | jq -c --arg c "$child" --arg p "$cparent" '.payload.id = $c | .payload.forked_from_id = $p'; cat "$cx"; } \
  >"$F/rollout-2026-12-05T10-00-00-$child.jsonl"
expect_eq "the forks add no distinct request" "$want" "$(distinct "$T" "$F")"
expect_rc "import the forks" 0 "$CTXFOLD" --db "$db" import "$F/$fork.jsonl" "$F/rollout-2026-12-05T10-00-00-$child.jsonl"
expect_eq "real transcripts and their forks: usage = the distinct requests" "$want" "$(usage_total "$db")"
"$CTXFOLD" --db "$db" sessions >"$WORK/s.jsonl"
expect_eq "the Claude Code fork under its parent" "$(basename "$cc" .jsonl) fork stored" \
  "$(jq -r --arg f "$fork" 'select(.id==$f) | "\(.lineage.parent) \(.lineage.relation) \(.lineage.parent_state)"' "$WORK/s.jsonl")"
expect_eq "the Codex child under its parent, every node of the parent shared" "$cparent fork stored yes" \
  "$(jq -r --arg c "$child" --arg p "$cparent" --slurp '(map(select(.id==$p))[0].node_count) as $n
     | map(select(.id==$c))[0] | "\(.lineage.parent) \(.lineage.relation) \(.lineage.parent_state) \(if .lineage.shared_nodes >= $n - 1 then "yes" else "no: \(.lineage.shared_nodes) of \($n)" end)"' "$WORK/s.jsonl")"
expect_eq "the Codex child's compactions are its parent's" "0" \
  "$("$CTXFOLD" --db "$db" --session "$child" compactions | jq -r 'select(.type=="summary") | .count')"
finish
