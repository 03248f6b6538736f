#!/usr/bin/env bash
# A fork renders what its source rendered at the fork point, byte for byte (docs/strategies.md
# "What a fork copies"): for rolling, lcm and snapcompact sessions, forked at HEAD, at a node of
# the kept tail and at a node inside the compacted history, and a fork of that fork, every provider
# request body equals the source's `render --head AT` body, and the ctxfold and text formats hold
# the same messages. Model-visible text quotes no copy's own id, and every id it quotes in the
# fork is one `expand` or `show` reads there.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
gen_session 16 >"$WORK/s.jsonl"

# same_render DB SOURCE_SESSION AT FORK_SESSION STRATEGY WHAT
same_render() {
  local db=$1 src=$2 at=$3 fork=$4 strategy=$5 what=$6 f a b
  for f in openai anthropic gemini responses; do
    a=$("$CTXFOLD" --db "$db" --session "$src" render --strategy "$strategy" --head "$at" --format "$f" --body | sha256sum)
    b=$("$CTXFOLD" --db "$db" --session "$fork" render --strategy "$strategy" --format "$f" --body | sha256sum)
    expect_eq "$what: $f body" "$a" "$b"
  done
  # Without --strategy the fork renders with its source's own strategy.
  a=$("$CTXFOLD" --db "$db" --session "$src" render --head "$at" --format anthropic --body | sha256sum)
  b=$("$CTXFOLD" --db "$db" --session "$fork" render --format anthropic --body | sha256sum)
  expect_eq "$what: anthropic body, the session's own strategy" "$a" "$b"
  # The ctxfold and text formats list each message's storage ids; what they send is the same.
  a=$("$CTXFOLD" --db "$db" --session "$src" render --strategy "$strategy" --head "$at" | jq -c '[.messages[] | {role, kind, content}]' | sha256sum)
  b=$("$CTXFOLD" --db "$db" --session "$fork" render --strategy "$strategy" | jq -c '[.messages[] | {role, kind, content}]' | sha256sum)
  expect_eq "$what: ctxfold messages" "$a" "$b"
  a=$("$CTXFOLD" --db "$db" --session "$src" render --strategy "$strategy" --head "$at" --text | grep -v '^## ' | sha256sum)
  b=$("$CTXFOLD" --db "$db" --session "$fork" render --strategy "$strategy" --text | grep -v '^## ' | sha256sum)
  expect_eq "$what: text" "$a" "$b"
  # No text the model reads names one of the fork's own ids; every id it quotes opens in the fork.
  "$CTXFOLD" --db "$db" --session "$fork" render --strategy "$strategy" --format anthropic --body >"$WORK/body.json"
  expect_eq "$what: no fork id quoted" "0" "$(grep -c "$fork:" "$WORK/body.json")"
  for id in $(grep -o 'ctxfold expand [^`]*`' "$WORK/body.json" | sed 's/ctxfold expand //; s/`$//' | sort -u); do
    expect_rc "$what: expand $id in the fork" 0 "$CTXFOLD" --db "$db" --session "$fork" expand "$id"
  done
  for id in $(grep -o '<user-message id=\\"[^\\]*' "$WORK/body.json" | sed 's/.*id=\\"//' | sort -u); do
    expect_rc "$what: show $id in the fork" 0 "$CTXFOLD" --db "$db" --session "$fork" show "$id"
  done
}

for strategy in rolling lcm snapcompact; do
  db="$WORK/$strategy.db"
  "$CTXFOLD" --db "$db" --session s append <"$WORK/s.jsonl" >/dev/null 2>&1 || fail "$strategy: append"
  expect_rc "$strategy: compact" 0 "$CTXFOLD" --db "$db" --session s compact --strategy "$strategy" --window 16000
  expect_eq "$strategy: compacted" "compacted" "$(jq -r .status "$WORK/out")"
  head=$("$CTXFOLD" --db "$db" --session s render | jq -r .head)
  # HEAD, the first node of the kept tail, and a user message inside the compacted history.
  tail_first=$("$CTXFOLD" --db "$db" --session s render --strategy "$strategy" | jq -r '[.sections[] | select(.kind == "tail")][0].ids[0]')
  [ -n "$tail_first" ] && [ "$tail_first" != null ] && ok || fail "$strategy: no tail"
  for at in "$head" "$tail_first" u6; do
    fork="f-$strategy-$at"
    expect_rc "$strategy at $at: fork" 0 "$CTXFOLD" --db "$db" fork --at "$at" --name "$fork"
    same_render "$db" s "$at" "$fork" "$strategy" "$strategy at $at"
  done
  # A fork of the fork at its HEAD still renders as the original did.
  expect_rc "$strategy: fork of a fork" 0 "$CTXFOLD" --db "$db" fork --at "f-$strategy-$head:$head" --name "g-$strategy"
  same_render "$db" s "$head" "g-$strategy" "$strategy" "$strategy fork of a fork"
  expect_rc "$strategy: verify" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
done
finish
