#!/usr/bin/env bash
# `import --from all DIR` stays inside the tree it walks: a symbolic link to a transcript outside
# it is not imported but listed as ignored with its path and target; --follow-symlinks imports
# it. A link to a file inside the tree is read once, as its target; a link to a folder is not
# followed. The database the import writes to, when inside the tree, is passed by unopened.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
mk() { # mk FILE SESSION
  printf '%s\n' \
    "{\"type\":\"user\",\"uuid\":\"$2-u1\",\"parentUuid\":null,\"sessionId\":\"$2\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}" \
    "{\"type\":\"assistant\",\"uuid\":\"$2-a1\",\"parentUuid\":\"$2-u1\",\"sessionId\":\"$2\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"yo\"}]}}" > "$1"
}
mkdir -p outside tree/proj tree/other
mk outside/secret.jsonl secret
mk tree/proj/inner.jsonl inner
ln -s "$WORK/outside/secret.jsonl" tree/proj/link-out.jsonl
ln -s ../proj/inner.jsonl tree/other/link-in.jsonl
ln -s "$WORK/outside" tree/dirlink
sessions() { db_sql "$1" 'select id from sessions order by id' | xargs; }

expect_rc "--from all, default" 0 "$CTXFOLD" --db a.db import --from all tree
cp "$WORK/out" a.json
expect_eq "only the file inside the tree, once" "inner" "$(sessions a.db)"
expect_eq "the link out is ignored, with its target named" "ignored true" \
  "$(jq -r '.files[] | select(.path | endswith("link-out.jsonl")) | "\(.outcome) \(.reason | contains("outside/secret.jsonl"))"' a.json)"
grep -q "link-out.jsonl:0: not imported: a symbolic link to '.*outside/secret.jsonl'.*(source.ignored)" "$WORK/err" && ok ||
  fail "the skipped link is not named on stderr: $(cat "$WORK/err")"
expect_eq "the inner file is read once (its link in the tree is the same file)" "1" \
  "$(jq '[.files[] | select(.outcome=="new")] | length' a.json)"
expect_eq "nothing of the linked folder" "0" "$(jq '[.files[] | select(.path | contains("dirlink"))] | length' a.json)"

expect_rc "--from all --follow-symlinks" 0 "$CTXFOLD" --db b.db import --from all --follow-symlinks tree
expect_eq "the link out is imported" "inner secret" "$(sessions b.db)"
expect_eq "two files new, none ignored" "2 0" "$(jq -r '"\(.outcomes.new) \(.outcomes.ignored)"' "$WORK/out")"
expect_rc "the same again" 0 "$CTXFOLD" --db b.db import --from all --follow-symlinks tree
expect_eq "second run: both unchanged" "2 0" "$(jq -r '"\(.outcomes.unchanged) \(.nodes_added)"' "$WORK/out")"

# The database the import writes to, inside the folder walked: passed by, unopened and unlisted.
expect_rc "--from all into a database inside the tree" 0 "$CTXFOLD" --db tree/own.db import --from all tree
expect_rc "the same again (the database and its companions now exist)" 0 "$CTXFOLD" --db tree/own.db import --from all tree
expect_eq "the database is not among the files" "0" "$(jq '[.files[] | select(.path | contains("own.db"))] | length' "$WORK/out")"
expect_eq "ignored: only the link out" "1" "$(jq '.outcomes.ignored' "$WORK/out")"
finish
