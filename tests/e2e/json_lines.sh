#!/usr/bin/env bash
# The one JSON Lines envelope of every stream (docs/commands.md "Output", cmd/stream.hpp): each
# record a flat object whose first key is a string "type", and exactly one summary record, the
# last, whose schema names the command; ids read from a piped stream skip its summary. And the
# one --as-of (cmd/as_of.hpp): a seq or "-" (a snapshot on stdin) for log, render, sessions,
# show, snapshot, files and commands, checked with one error code and one message form.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
src=$(cd "$(dirname "$0")/../.." && pwd)
db="$WORK/j.db"
gen_session 12 | "$CTXFOLD" --db "$db" --session s append >/dev/null 2>"$WORK/err" || fail "append: $(cat "$WORK/err")"
C() { "$CTXFOLD" --db "$db" --session s "$@"; }
C compact --window 8000 >/dev/null 2>&1 || fail "compact"
C snapshot >"$WORK/snap.json" || fail "snapshot"  # read back with --as-of below
# A second session with recorded usage, so usage has records and not only its summary.
"$CTXFOLD" --db "$db" import "$src/tests/fixtures/home/claude/projects/-w-demo/c1a2b3c4-0000-4000-8000-000000000001.jsonl" \
  >/dev/null 2>&1 || fail "import the usage fixture"

# envelope NAME SCHEMA TYPE CMD...: every line an object with "type" first, one summary, last.
envelope() {
  local name=$1 schema=$2 type=$3; shift 3
  "$@" >"$WORK/$name.jsonl" 2>"$WORK/err" || { fail "$name: exit $?: $(head -c 300 "$WORK/err")"; return; }
  expect_eq "$name: every line is an object whose first key is a string \"type\"" "true" \
    "$(jq -s 'length > 1 and all(type == "object" and (keys_unsorted[0] == "type") and (.type | type == "string"))' "$WORK/$name.jsonl")"
  expect_eq "$name: no nested \"data\" envelope" "0" "$(jq -s 'map(select(has("data"))) | length' "$WORK/$name.jsonl")"
  expect_eq "$name: exactly one summary record" "1" "$(jq -s 'map(select(.type == "summary")) | length' "$WORK/$name.jsonl")"
  expect_eq "$name: the last line is the summary, schema $schema" "summary $schema" \
    "$(tail -n 1 "$WORK/$name.jsonl" | jq -r '"\(.type) \(.schema)"')"
  expect_eq "$name: the other records are $type records" "true" \
    "$(jq -s --arg t "$type" '.[:-1] | length > 0 and all(.type == $t)' "$WORK/$name.jsonl")"
}
envelope grep ctxfold.grep/2 match C grep "request 3"
envelope log ctxfold.log/1 node C log
envelope sessions ctxfold.sessions/1 session C sessions
envelope compactions ctxfold.compactions/1 compaction C compactions
envelope usage ctxfold.usage/1 usage C usage
envelope usage-by-model ctxfold.usage/1 usage C usage --by model
envelope commands ctxfold.commands/1 command C commands
expect_eq "export: a session record, then node records" "session node" \
  "$(C export | jq -rs '.[:-1] | [.[0].type, (.[1:] | map(.type) | unique | join(","))] | join(" ")')"
C export >"$WORK/export.jsonl"
expect_eq "export: the last line is the summary" "summary ctxfold.export/1" "$(tail -n 1 "$WORK/export.jsonl" | jq -r '"\(.type) \(.schema)"')"
expect_eq "export: every line has \"type\" first" "true" "$(jq -s 'all(keys_unsorted[0] == "type")' "$WORK/export.jsonl")"
"$CTXFOLD" --db "$WORK/re.db" import --format ctxfold "$WORK/export.jsonl" >/dev/null 2>"$WORK/err" || fail "re-import: $(cat "$WORK/err")"
expect_eq "export with \"type\" re-imports into the same nodes" "$(grep '^{"type":"node"' "$WORK/export.jsonl" | md5sum)" \
  "$("$CTXFOLD" --db "$WORK/re.db" --session s export | grep '^{"type":"node"' | md5sum)"
expect_eq "summary counts: sessions" "$(jq -s 'map(select(.type=="session")) | length' "$WORK/sessions.jsonl")" \
  "$(tail -n 1 "$WORK/sessions.jsonl" | jq .count)"
expect_eq "summary counts: compactions" "$(jq -s 'map(select(.type=="compaction")) | length' "$WORK/compactions.jsonl")" \
  "$(tail -n 1 "$WORK/compactions.jsonl" | jq .count)"
expect_eq "summary counts: usage" "$(jq -s 'map(select(.type=="usage")) | length' "$WORK/usage.jsonl")" \
  "$(tail -n 1 "$WORK/usage.jsonl" | jq .count)"
# --text is a human view: no JSON and no summary record.
expect_eq "sessions --text is no JSON" "SESSION" "$(C sessions --text | head -n 1 | cut -d' ' -f1)"

# Ids from stdin: flat records, grep/1's nested ones, and no id taken from a summary (log's has "head").
expect_eq "log | show -: one document per node, none for the summary" \
  "$(jq -s 'map(select(.type=="node")) | length' "$WORK/log.jsonl")" "$(C show - <"$WORK/log.jsonl" | jq -s length)"
expect_eq "grep | describe -: one description per match" \
  "$(jq -s 'map(select(.type=="match")) | length' "$WORK/grep.jsonl")" "$(C describe - <"$WORK/grep.jsonl" | jq -s length)"
id=$(jq -r 'select(.type=="match") | .id' "$WORK/grep.jsonl" | head -n 1)
printf '%s\n' "{\"type\":\"match\",\"data\":{\"id\":\"$id\"}}" '{"type":"summary","data":{"schema":"ctxfold.grep/1"}}' >"$WORK/grep1.jsonl"
expect_eq "grep/1's nested records still read, its summary skipped" "$id" "$(C show - <"$WORK/grep1.jsonl" | jq -r .node.id)"
expect_rc "a summary record alone gives no id" 0 sh -c "tail -n 1 '$WORK/log.jsonl' | '$CTXFOLD' --db '$db' show -"
expect_eq "... and prints nothing" "" "$(cat "$WORK/out")"

# --as-of: one value syntax and one check for every command that takes it.
b=$(jq .boundary_seq "$WORK/snap.json")
head=$(jq -r .head "$WORK/snap.json")
printf '%s\n' '{"id":"late","role":"user","content":"after the snapshot"}' | C append >/dev/null 2>&1 || fail "append late"
for cmd in "log" "render" "sessions" "snapshot" "show $head" "files" "commands"; do
  # shellcheck disable=SC2086
  C $cmd --as-of "$b" >"$WORK/seq.out" 2>"$WORK/err" || fail "$cmd --as-of $b: $(cat "$WORK/err")"
  # shellcheck disable=SC2086
  C $cmd --as-of - <"$WORK/snap.json" >"$WORK/pipe.out" 2>"$WORK/err" || fail "$cmd --as-of -: $(cat "$WORK/err")"
  cmp -s "$WORK/seq.out" "$WORK/pipe.out" && ok || fail "$cmd: --as-of - (a piped snapshot) differs from --as-of $b"
  # shellcheck disable=SC2086
  expect_rc "$cmd --as-of beyond the boundary" 3 C $cmd --as-of 999999
  grep -q "^ctxfold: error: --as-of 999999 is outside the append boundaries of " "$WORK/err" && ok \
    || fail "$cmd: the out-of-range message: $(cat "$WORK/err")"
  # shellcheck disable=SC2086
  expect_rc "$cmd --as-of not a seq" 2 C $cmd --as-of yesterday
  # shellcheck disable=SC2086
  expect_rc "$cmd --as-of -1 is not a seq" 2 C $cmd --as-of -1
  # shellcheck disable=SC2086
  expect_rc "$cmd --as-of - without a snapshot" 3 sh -c "echo '[]' | \"\$@\"" _ "$CTXFOLD" --db "$db" --session s $cmd --as-of -
  "$CTXFOLD" --db "$db" "${cmd%% *}" --help | grep -q -- "--as-of SEQ|-" && ok || fail "$cmd --help: no '--as-of SEQ|-'"
done
expect_eq "sessions --as-of - lists what existed at the piped snapshot" "s" \
  "$(C sessions --as-of - <"$WORK/snap.json" | jq -r 'select(.type=="session") | .id')"
expect_eq "... and says which boundary" "$b" "$(C sessions --as-of - <"$WORK/snap.json" | tail -n 1 | jq .as_of)"
expect_eq "log --as-of - stops before the later node" "$head" "$(C log --as-of - <"$WORK/snap.json" | head -n 1 | jq -r .id)"
expect_rc "show --as-of: the later node does not exist yet" 3 C show late --as-of "$b"
expect_rc "show - and --as-of - both read stdin" 2 C show - --as-of -
first=$(db_sql "$db" "select min(seq) from nodes where session='c1a2b3c4-0000-4000-8000-000000000001'")
expect_rc "--as-of before the session began" 3 "$CTXFOLD" --db "$db" --session c1a2b3c4-0000-4000-8000-000000000001 log --as-of 1
expect_eq "the session's range is named" \
  "ctxfold: error: --as-of 1 is outside the append boundaries of session 'c1a2b3c4-0000-4000-8000-000000000001': $first..$(db_sql "$db" 'select max(seq) from nodes')" \
  "$(head -n 1 "$WORK/err")"
expect_rc "sessions is database-wide: --as-of 0 is in range" 0 C sessions --as-of 0
finish
