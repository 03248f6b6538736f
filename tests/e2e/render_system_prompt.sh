#!/usr/bin/env bash
# render's system prompt (docs/render.md "The system prompt"): a session that records none says
# known:false; --system FILE supplies it first in every format and is not a read; a missing file
# is exit 4. grep --in thinking searches the thinking blocks, which plain grep does not.
source "$(dirname "$0")/lib.sh"
cf() { "$CTXFOLD" --db "$WORK/s.db" "$@"; }
printf '%s\n' '{"role":"user","content":"please list the files"}' \
  '{"role":"assistant","content":[{"type":"thinking","thinking":"the user wants ls; zanzibar plan","signature":"sig1"},{"type":"text","text":"Here they are."}]}' \
  | cf --session s1 append >/dev/null || fail "append"
expect_eq "unknown system prompt" '{"known":false,"source":"none"}' "$(cf render | jq -c '.system_prompt | {known, source}')"
printf 'You are a careful agent.' > "$WORK/sys.txt"
expect_eq "anthropic system from --system" '"You are a careful agent."' \
  "$(cf render --system "$WORK/sys.txt" --format anthropic --body | jq -c .system)"
expect_eq "openai system message first" '{"role":"system","content":"You are a careful agent."}' \
  "$(cf render --system "$WORK/sys.txt" --format openai --body | jq -c '.messages[0]')"
expect_eq "source option, reads unchanged" 'option 2' \
  "$(cf render --system "$WORK/sys.txt" | jq -r '"\(.system_prompt.source) \(.reads | length)"')"
expect_rc "missing --system file" 4 cf render --system "$WORK/nope.txt"
expect_rc "plain grep does not see thinking" 1 cf grep zanzibar
expect_rc "grep --in thinking" 0 cf grep --in thinking zanzibar
expect_eq "thinking match record" 'thinking assistant' "$(jq -r 'select(.type=="match") | "\(.in) \(.role)"' "$WORK/out")"
expect_rc "--scope with --in thinking" 2 cf grep --in thinking zanzibar --scope x
finish
