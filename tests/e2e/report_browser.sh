#!/usr/bin/env bash
# The HTML report in a real browser (docs/report.md "Tested in a browser"): headless Chromium
# loads the real auto-compaction session's page with JavaScript on and off, a click opens a
# capsule, search finds a word of a covered turn and opens its capsule, nothing reaches the console
# and no request leaves the file; a page of hostile transcript text renders it as text. A page
# broken on purpose must fail the same checks (the checks can fail). The first screen is kept as
# $CTXFOLD_ARTIFACTS/first-screen.png (default build/report-artifacts).
source "$(dirname "$0")/lib.sh"
need_transcripts
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || skip "no chromium (scripts/deps.sh installs it)"
here="$(cd "$(dirname "$0")" && pwd)"
artifacts=${CTXFOLD_ARTIFACTS:-$CTXFOLD_BUILD/report-artifacts}
mkdir -p "$artifacts"
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
db="$WORK/a.db"
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$f"
expect_rc "report" 0 "$CTXFOLD" --db "$db" --session fa812bfe-b295-4cca-9c2f-fdf01028cb46 report -o "$WORK/r.html"
# The first prompt sits before the compaction boundary: inside the summary's capsule.
prompt=942615e0-f369-473f-b323-9c337564c3af
browse() { # browse WHAT PAGE ARGS...: the checks of report_browser.py, its lines on stderr
  local what=$1 page=$2; shift 2
  python3 "$here/report_browser.py" "$chromium" "$page" "$@" >"$WORK/browser.out" 2>&1
  local rc=$?
  sed "s/^/  [$what] /" "$WORK/browser.out" >&2
  return $rc
}
browse "js on" "$WORK/r.html" --node "$prompt" --search subtasks --screenshot "$artifacts/first-screen.png" \
  && ok || fail "js on: $(grep FAIL "$WORK/browser.out" | head -3)"
expect_eq "the first screen is a PNG" "PNG" "$(head -c 4 "$artifacts/first-screen.png" | tail -c 3)"
browse "js off" "$WORK/r.html" --js-off --node "$prompt" --search subtasks \
  && ok || fail "js off: $(grep FAIL "$WORK/browser.out" | head -3)"

# Hostile transcript text: markup, a closing textarea, an RTL override, NUL, a 1 MB line.
big=$(head -c 1048576 /dev/zero | tr '\0' 'y')
{
  jq -cn '{id:"h1", role:"user", content:"<script>alert(1)</script></textarea></details><img src=x onerror=alert(2)> \u202egpj.exe \u0000 end"}'
  jq -cn '{id:"h2", role:"assistant", content:[{type:"text",text:"# heading\n\n<script>alert(3)</script>\n\n![x](http://127.0.0.1:9/leak.png)"},{type:"tool_use",id:"t1",name:"Bash",input:{command:"echo </textarea><script>alert(4)</script>"}}]}'
  printf '{"id":"h3","role":"tool","content":[{"type":"tool_result","tool_use_id":"t1","content":"%s","is_error":false}]}\n' "$big"
} >"$WORK/hostile.jsonl"
hdb="$WORK/h.db"
expect_rc "append hostile" 0 "$CTXFOLD" --db "$hdb" --session hostile append <"$WORK/hostile.jsonl"
expect_rc "hostile report" 0 "$CTXFOLD" --db "$hdb" report -o "$WORK/hostile.html"
browse "hostile" "$WORK/hostile.html" --hostile --search gpj && ok || fail "hostile: $(grep FAIL "$WORK/browser.out" | head -3)"

# Broken on purpose: no CSP, an external image and a script error. The checks must fail.
sed -e 's/<meta http-equiv="Content-Security-Policy"[^>]*>//' \
    -e 's#<main>#<main><img src="http://127.0.0.1:9/leak.png"><script>undefinedFunction()</script>#' \
    "$WORK/r.html" >"$WORK/broken.html"
browse "broken" "$WORK/broken.html" --node "$prompt"
expect_eq "a broken page fails the browser checks" 1 $?
expect_eq "the broken page's request is caught" 1 "$(grep -c '^FAIL: no request leaves the file' "$WORK/browser.out")"
expect_eq "the broken page's error is caught" 1 "$(grep -c '^FAIL: no console error' "$WORK/browser.out")"
expect_eq "no browser left running" "" "$(pgrep -f "ctxfold-chromium-" || true)"
finish
