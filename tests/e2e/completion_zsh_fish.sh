#!/usr/bin/env bash
# Drives the zsh and fish completion scripts the way each shell would. fish: `complete -C LINE`
# asks fish's own completion engine. zsh: the completion function runs with `words`/`CURRENT` set as
# compsys sets them and `compadd`/`_files` replaced by recorders, so the test sees exactly what the
# script offers. Both must agree with --help (the command table) and stay silent on errors.
source "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
command -v zsh >/dev/null || { fail "zsh is not installed (scripts/deps.sh installs it)"; finish; }
command -v fish >/dev/null || { fail "fish is not installed (scripts/deps.sh installs it)"; finish; }
mkdir -p "$WORK/bin"; ln -s "$CTXFOLD" "$WORK/bin/ctxfold"; export PATH="$WORK/bin:$PATH"
unset CTXFOLD_DB CTXFOLD_SESSION
cd "$WORK"
printf '%s\n' '{"id":"n1","session":"s1","predecessor":null,"kind":"message","role":"user","content":[{"type":"text","text":"hi"}],"metadata":{}}' \
  '{"id":"n2","session":"s1","predecessor":"n1","kind":"message","role":"assistant","content":[{"type":"text","text":"hello"}],"metadata":{}}' > in.jsonl
"$CTXFOLD" import --format ctxfold in.jsonl >/dev/null || fail "import"
help_cmds=$("$CTXFOLD" --help | awk '/^Subcommands:/{s=1;next} s&&NF{print $1}' | sort)
[ -n "$help_cmds" ] && ok || fail "--help lists no subcommands"

# fish: its own engine; candidates may carry a tab and a description
fishc() { HOME=$WORK fish --no-config -c "source '$src/completions/ctxfold.fish'; complete -C '$1'" 2>&1 | cut -f1; }
expect_eq "fish: ctxfold <tab> lists every subcommand" "$help_cmds" "$(fishc 'ctxfold ' | grep -v '^-' | sort)"
expect_eq "fish: ctxfold ver<tab>" "verify-invariants" "$(fishc 'ctxfold ver')"
expect_eq "fish: render --format an<tab>" "anthropic" "$(fishc 'ctxfold render --format an')"
expect_eq "fish: show n<tab> offers node ids" "$(printf '%s\n' n1 n2)" "$(fishc 'ctxfold show n' | sort)"
want=$("$CTXFOLD" grep --help | grep -oE -- '--in\b' | head -1)
got=$(fishc 'ctxfold grep --i' | grep -x -- '--in')
expect_eq "fish: grep --i<tab> offers --in" "$want" "$got"
expect_eq "fish: no database: only -, no error text" "-" "$(fishc 'ctxfold --db /nonexistent/x.db show ')"
expect_eq "fish: a file argument completes paths" "in.jsonl" "$(fishc 'ctxfold import in')"

# zsh: the completion function with compsys's words/CURRENT, compadd and _files recorded
zshc() { # zshc WORD... : completes the last word
  zsh -f -c '
    compadd() { while [[ $1 == -* && $1 != -- ]]; do shift; done; [[ $1 == -- ]] && shift; print -rl -- "$@"; }
    _files() { print -r -- "<files>"; }
    functions[_ctxfold_autoload]=$(<$1); shift   # what autoload makes of a #compdef file
    words=(ctxfold "$@"); CURRENT=${#words}
    _ctxfold_autoload' zsh "$src/completions/_ctxfold" "$@" 2>&1
}
expect_eq "zsh: ctxfold <tab> lists every subcommand" "$help_cmds" "$(zshc "" | grep -v '^-' | sort)"
expect_eq "zsh: ctxfold ver<tab>" "verify-invariants" "$(zshc ver)"
expect_eq "zsh: render --format <tab>" "$(printf '%s\n' ctxfold openai anthropic gemini responses text)" "$(zshc render --format "")"
expect_eq "zsh: show n<tab> offers node ids" "$(printf '%s\n' n1 n2)" "$(zshc show n | sort)"
expect_eq "zsh: a file argument falls back to files" "<files>" "$(zshc import "")"
expect_eq "zsh: no database: only -, no error" "-" "$(zshc --db /nonexistent/x.db show "")"
[ ! -e /nonexistent/x.db ] && ok || fail "completion created a database"
finish
