#!/usr/bin/env bash
# Drives bash's completion machinery on completions/ctxfold.bash: source it, set COMP_WORDS and
# COMP_CWORD as readline would, call the function `complete -p ctxfold` names, read COMPREPLY.
# Subcommands and flags must equal --help's (the command table); ids come from the database.
source "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$WORK/bin"; ln -s "$CTXFOLD" "$WORK/bin/ctxfold"; export PATH="$WORK/bin:$PATH"
unset CTXFOLD_DB CTXFOLD_SESSION
source "$src/completions/ctxfold.bash"
fn=$(complete -p ctxfold | grep -oE -- '-F [^ ]+' | cut -d' ' -f2)
[ -n "$fn" ] && ok || fail "completions/ctxfold.bash registers no function for ctxfold"
comp() { # comp WORD... : completes the last word; prints COMPREPLY one per line
  COMP_WORDS=(ctxfold "$@"); COMP_CWORD=$#; COMP_LINE="ctxfold $*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
  "$fn" ctxfold "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
  printf '%s\n' "${COMPREPLY[@]}"
}
cd "$WORK"
printf '%s\n' '{"id":"n1","session":"s1","predecessor":null,"kind":"message","role":"user","content":[{"type":"text","text":"hi"}],"metadata":{}}' \
  '{"id":"n2","session":"s1","predecessor":"n1","kind":"message","role":"assistant","content":[{"type":"text","text":"hello"}],"metadata":{}}' \
  '{"id":"S","session":"s1","predecessor":null,"kind":"summary","role":"user","content":[{"type":"text","text":"sum"}],"metadata":{"strategy":"rolling"},"covers_ids":["n1"]}' > in.jsonl
"$CTXFOLD" import --format ctxfold in.jsonl >/dev/null || fail "import"

help_cmds=$("$CTXFOLD" --help | awk '/^Subcommands:/{s=1;next} s&&NF{print $1}')
expect_eq "ctxfold <tab>: every subcommand" "$help_cmds" "$(comp "")"
expect_eq "ctxfold ver<tab>" "verify-invariants" "$(comp ver)"
for cmd in $help_cmds; do
  want=$( ("$CTXFOLD" "$cmd" --help; "$CTXFOLD" --help) | grep -E '^ +-' | sed 's/^ *//; s/  .*//' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
  got=$(comp "$cmd" -- | sort -u)
  expect_eq "ctxfold $cmd --<tab>: --help's flags" "$want" "$got"
done
expect_eq "render --format <tab>" "$(printf '%s\n' ctxfold openai anthropic gemini responses text)" "$(comp render --format "")"
expect_eq "render --format an<tab>" "anthropic" "$(comp render --format an)"
expect_eq "grep --in <tab>" "$(printf '%s\n' raw summaries both thinking)" "$(comp grep --in "")"
expect_eq "verify-invariants --format <tab>" "$(printf '%s\n' json junit)" "$(comp verify-invariants --format "")"
formats=$(comp import --format "")  # captured first: grep -q under pipefail may close the pipe early
grep -qx claude-code <<<"$formats" && ok || fail "import --format offers claude-code: $formats"
expect_eq "--session <tab>: session ids" "s1" "$(comp --session "")"
expect_eq "show <tab>: node ids, newest first, and -" "$(printf '%s\n' - S n2 n1)" "$(comp show "")"
expect_eq "show n<tab>" "$(printf '%s\n' n2 n1)" "$(comp show n)"
expect_eq "grep --scope <tab>: summaries" "S" "$(comp grep --scope "")"
expect_eq "no database: only -, no error" "-" "$(comp --db nosuch.db show "")"
expect_eq "a file argument: nothing (bash falls back to files)" "" "$(comp import "")"
# completion never prints into the shell, and never writes the database
before=$(sha256sum ctxfold.db)
out=$(COMP_WORDS=(ctxfold --db /nonexistent/x.db show ""); COMP_CWORD=4; "$fn" 2>&1; printf '%s' "${COMPREPLY[*]}")
expect_eq "errors stay silent" "-" "$out"
expect_eq "database unchanged" "$before" "$(sha256sum ctxfold.db)"
[ ! -e /nonexistent/x.db ] && ok || fail "completion created a database"
# zsh and fish scripts at least parse where those shells exist
if command -v zsh >/dev/null; then zsh -n "$src/completions/_ctxfold" && ok || fail "zsh syntax"; fi
if command -v fish >/dev/null; then fish -n "$src/completions/ctxfold.fish" && ok || fail "fish syntax"; fi
finish
