#!/usr/bin/env bash
# Stored rows of two ctxfold binaries' imports, compared byte for byte (issue 22 item 1: a faster
# or leaner importer must store exactly what the old one did). Each input is imported into a fresh
# database by each binary, and `sqlite3 DB .dump` (every table's rows, in rowid order, and the
# schema) of the two must be identical, but for the order of the schema's CREATE INDEX
# statements: an import into a new database builds `nodes_predecessor` last (docs/import.md
# "A first import"), which moves it in sqlite_master's order, so those lines are compared sorted,
# after the rest. Inputs: every transcript under the shared data folder
# (Claude Code main files, which pull in their sub-agent files, and sub-agent files on their own;
# Codex; Gemini) and the files named after the options.
#
# usage: bench/import_same.sh [--transcripts DIR] OLD_BIN NEW_BIN [FILE...]
# Prints one line per input (same / DIFFERENT, nodes stored); exit 1 when any differ.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
transcripts=${CTXFOLD_TRANSCRIPTS:-$(cd "$here/../.." && pwd)/shared/data/transcripts}
[ "${1:-}" = --transcripts ] && { transcripts=$2; shift 2; }
[ $# -ge 2 ] || { sed -n '2,10p' "$0"; exit 2; }
old=$1 new=$2; shift 2
command -v sqlite3 >/dev/null || { echo "import_same.sh: needs sqlite3" >&2; exit 4; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ctxfold-same.XXXXXX")
trap 'rm -rf "$work"' EXIT

inputs=()
if [ -d "$transcripts" ]; then
  while IFS= read -r f; do inputs+=("$f"); done < <(
    find "$transcripts/claude-code" "$transcripts/codex" "$transcripts/gemini" -type f \( -name '*.jsonl' -o -name '*.json' \) | sort)
fi
inputs+=("$@")
bad=0
for f in "${inputs[@]}"; do
  for side in old new; do
    bin=$old; [ $side = new ] && bin=$new
    rm -f "$work/$side.db" "$work/$side.db-wal" "$work/$side.db-shm"
    "$bin" --db "$work/$side.db" import "$f" > "$work/$side.json" 2> /dev/null || echo "exit $?" >> "$work/$side.json"
    if [ -f "$work/$side.db" ]; then
      sqlite3 "$work/$side.db" .dump > "$work/$side.dump"
      { grep -v '^CREATE INDEX ' "$work/$side.dump" || true; grep '^CREATE INDEX ' "$work/$side.dump" | sort || true; } > "$work/$side.sql"
    else : > "$work/$side.sql"; fi
  done
  nodes=$(grep -c '^INSERT INTO nodes ' "$work/new.sql" || true)
  if cmp -s "$work/old.sql" "$work/new.sql"; then
    echo "same       $nodes nodes  ${f#"$transcripts"/}"
  else
    echo "DIFFERENT  $nodes nodes  ${f#"$transcripts"/}"
    diff "$work/old.sql" "$work/new.sql" | head -c 2000 || true
    bad=1
  fi
done
exit $bad
