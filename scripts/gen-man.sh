#!/usr/bin/env bash
# Regenerates the committed man pages man/*.1 from the binary (`ctxfold __man`): run after changing
# a flag in cmd/*.cpp, the command table, or man/src/*.roff. e2e.man_pages fails until you do.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${CTXFOLD:-build/ctxfold}
rm -f man/ctxfold.1 man/ctxfold-*.1
for name in $("$bin" __man --list); do
  page=man/ctxfold-$name.1
  [ "$name" = ctxfold ] && page=man/ctxfold.1
  "$bin" __man "$([ "$name" = ctxfold ] || echo "$name")" > "$page"
done
