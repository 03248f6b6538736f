#!/usr/bin/env bash
# One source of truth for the command surface: the committed man pages are exactly what
# `ctxfold __man` generates from the CLI11 app and the command table (a flag added in cmd/*.cpp
# without regenerating fails here: run scripts/gen-man.sh), every page has the issue's sections and
# renders without troff warnings, and `--help` names the same commands and flags as the pages.
source "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
names=$("$CTXFOLD" __man --list)
expect_eq "__man --list starts with ctxfold" "ctxfold" "$(head -n 1 <<<"$names")"
# --help lists exactly the command table, and not the hidden generators.
help_cmds=$("$CTXFOLD" --help | awk '/^Subcommands:/{s=1;next} s&&NF{print $1}')
expect_eq "--help commands = command table" "$(tail -n +2 <<<"$names")" "$help_cmds"
grep -q __ <<<"$("$CTXFOLD" --help)" && fail "--help lists a hidden command" || ok
for name in $names; do
  page=ctxfold-$name.1; arg=$name
  [ "$name" = ctxfold ] && { page=ctxfold.1; arg=""; }
  "$CTXFOLD" __man "$arg" > "$WORK/$page" || fail "__man $name failed"
  if cmp -s "$WORK/$page" "$src/man/$page"; then ok; else
    fail "man/$page differs from \`ctxfold __man $arg\` (run scripts/gen-man.sh): $(diff "$src/man/$page" "$WORK/$page" | head -n 6)"
  fi
  for sec in NAME SYNOPSIS DESCRIPTION OPTIONS '"JSON OUTPUT"' '"EXIT STATUS"' EXAMPLES '"SEE ALSO"'; do
    grep -qx ".SH $sec" "$WORK/$page" && ok || fail "$page has no $sec section"
  done
  warnings=$(groff -ww -z -man "$WORK/$page" 2>&1; MANWIDTH=80 man -l "$WORK/$page" 2>&1 >/dev/null)
  expect_eq "$page renders without warnings" "" "$warnings"
  # every flag --help shows is documented on the page (and the page has no flag --help lacks)
  if [ -n "$arg" ]; then help=$("$CTXFOLD" "$arg" --help); else help=$("$CTXFOLD" --help); fi
  help_flags=$(grep -E '^ +-' <<<"$help" | sed 's/^ *//; s/  .*//' | grep -oE -- '--[a-z][a-z-]*' | grep -oE -- '--[a-z-]+' | grep -vx -- '--help' | sort -u)
  page_flags=$(sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$WORK/$page" | grep -A1 -x '\.TP' | grep -v -e '^\.TP' -e '^--$' \
               | sed 's/\\-/-/g; s/\\f[BRI]//g' | grep -oE -- '(^|, )--[a-z-]+' | grep -oE -- '--[a-z-]+' | sort -u)
  [ -z "$arg" ] || help_flags=$(grep -vx -e --db -e --session -e --text <<<"$help_flags")
  expect_eq "$page OPTIONS = \`$arg --help\` flags" "$help_flags" "$page_flags"
done
# no stale page for a command that is gone
for f in "$src"/man/*.1; do
  base=$(basename "$f" .1); base=${base#ctxfold-}
  grep -qx "$base" <<<"$names" && ok || fail "man/$(basename "$f") has no command"
done
# every command has hand-written sections, and none is left without one
for f in "$src"/man/src/*.roff; do
  grep -qx "$(basename "$f" .roff)" <<<"$names" && ok || fail "man/src/$(basename "$f") has no command"
done
expect_rc "__man of an unknown command" 2 "$CTXFOLD" __man nosuch
finish
