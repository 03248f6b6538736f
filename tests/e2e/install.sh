#!/usr/bin/env bash
# `cmake --install BUILD --prefix P` puts the binary, share data, man pages and completions where
# each belongs, and the installed binary works from another directory with the source and build
# trees out of reach (it reads nothing relative to them: schema and prompts are embedded).
source "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$CTXFOLD_BUILD
[ -f "$build/cmake_install.cmake" ] || skip "$build is not a cmake build tree"
P="$WORK/prefix"
cmake --install "$build" --prefix "$P" >"$WORK/install.log" 2>&1 || fail "cmake --install: $(tail -5 "$WORK/install.log")"
for f in bin/ctxfold share/ctxfold/schema/001_init.sql share/man/man1/ctxfold.1 share/man/man1/ctxfold-render.1 \
         share/bash-completion/completions/ctxfold share/zsh/site-functions/_ctxfold \
         share/fish/vendor_completions.d/ctxfold.fish; do
  [ -f "$P/$f" ] && ok || fail "not installed: $f"
done
[ -x "$P/bin/ctxfold" ] && ok || fail "bin/ctxfold is not executable"
# one man page per command
for name in $("$P/bin/ctxfold" __man --list); do
  page=ctxfold-$name.1; [ "$name" = ctxfold ] && page=ctxfold.1
  [ -f "$P/share/man/man1/$page" ] && ok || fail "man page $page not installed"
done
MANPATH="$P/share/man" man -w ctxfold-render >/dev/null 2>&1 && ok || fail "man finds no ctxfold-render under the prefix"
# run from elsewhere, with a copy of the binary moved away from the build tree too
mkdir -p "$WORK/elsewhere"; cd "$WORK/elsewhere"
printf '%s\n' '{"id":"a","session":"s","predecessor":null,"kind":"message","role":"user","content":[{"type":"text","text":"hi"}],"metadata":{}}' > in.jsonl
expect_rc "installed import" 0 env -i PATH=/usr/bin:/bin HOME="$WORK" "$P/bin/ctxfold" import --format ctxfold in.jsonl
expect_rc "installed render" 0 env -i PATH=/usr/bin:/bin HOME="$WORK" "$P/bin/ctxfold" render
expect_eq "render reads the imported node" "hi" "$(jq -r '.. | .text? // empty' "$WORK/out" | head -n 1)"
expect_rc "installed verify" 0 env -i PATH=/usr/bin:/bin HOME="$WORK" "$P/bin/ctxfold" verify-invariants
# the installed bash completion asks the installed binary
out=$(PATH="$P/bin:/usr/bin:/bin" bash -c 'source "$1/share/bash-completion/completions/ctxfold"; COMP_WORDS=(ctxfold ren); COMP_CWORD=1; _ctxfold; echo "${COMPREPLY[*]}"' _ "$P")
expect_eq "installed completion" "render" "$out"
finish
