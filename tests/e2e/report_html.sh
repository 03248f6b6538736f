#!/usr/bin/env bash
# report --html / --markdown on the real auto-compaction session (docs/report.md): one
# self-contained page whose imported summary is a capsule holding the pre-boundary turns, every
# node the model reads anchored once, the sub-agents linked, the dropped report and usage shown,
# no external asset; the Markdown digest stays within its bound; the database is never written.
source "$(dirname "$0")/lib.sh"
need_transcripts
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
s=fa812bfe-b295-4cca-9c2f-fdf01028cb46
db="$WORK/a.db"
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$f"
before=$(sha256sum "$db" | cut -d' ' -f1)
start=$(date +%s.%N)
expect_rc "report --html" 0 "$CTXFOLD" --db "$db" --session "$s" report --html -o "$WORK/r.html"
echo "report --html: $(wc -c <"$WORK/r.html") bytes in $(echo "$(date +%s.%N) - $start" | bc) s" >&2
cp "$WORK/out" "$WORK/r.json"
page="$WORK/r.html"
expect_eq "summary schema" "ctxfold.report/1 html" "$(jq -r '"\(.schema) \(.format)"' "$WORK/r.json")"
expect_eq "summary bytes are the file's" "$(wc -c <"$page")" "$(jq .bytes "$WORK/r.json")"
expect_eq "the session, then its sub-agents" "true $s" "$(jq -r '"\(.sessions | length >= 3) \(.sessions[0])"' "$WORK/r.json")"
expect_eq "the page is HTML" "<!DOCTYPE html>" "$(head -c 15 "$page")"
expect_eq "a strict CSP" 1 "$(grep -c "Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'sha256-" "$page")"
expect_eq "one script, inline" "1 0" "$(grep -o '<script' "$page" | wc -l) $(grep -c '<script src' "$page")"
expect_eq "no external asset" 0 "$(grep -Eci '<(link|iframe|object|embed)\b|src="(https?:|//)' "$page")"

# Every node the model reads has its anchor, exactly once; no anchor is written twice.
expect_rc "render" 0 "$CTXFOLD" --db "$db" --session "$s" render
jq -r '.reads[]' "$WORK/out" >"$WORK/reads"
missing=0
while read -r id; do grep -q "id=\"node-$id\"" "$page" || missing=$((missing+1)); done <"$WORK/reads"
expect_eq "every read node anchored ($(wc -l <"$WORK/reads") reads)" 0 "$missing"
expect_eq "no anchor twice" "" "$(grep -o 'id="[^"]*"' "$page" | sort | uniq -d | head -3)"

# The imported summary (line 1585 of the source) is a capsule; the first prompt (before the
# boundary) sits inside its <details class="covered">, after the summary, before the tail.
summary=$(sed -n 1585p "$f" | jq -r .uuid)
prompt=942615e0-f369-473f-b323-9c337564c3af
cap=$(grep -bo "<section class=\"node capsule kind-summary\" id=\"node-$summary\"" "$page" | head -1 | cut -d: -f1)
covered=$(grep -bo '<details class="covered">' "$page" | head -1 | cut -d: -f1)
inner=$(grep -bo "id=\"node-$prompt\"" "$page" | head -1 | cut -d: -f1)
tail_id=$(tail -1 "$WORK/reads")
last=$(grep -bo "id=\"node-$tail_id\"" "$page" | head -1 | cut -d: -f1)
expect_eq "capsule, covered, first prompt, tail in that order" "true" \
  "$([ -n "$cap" ] && [ -n "$covered" ] && [ -n "$inner" ] && [ "$cap" -lt "$covered" ] && [ "$covered" -lt "$inner" ] && [ "$inner" -lt "$last" ] && echo true)"
expect_eq "the dropped report" 1 "$(grep -c '<details class="dropped"><summary>dropped by this summary' "$page")"
expect_eq "details balanced" "$(grep -o '<details' "$page" | wc -l)" "$(grep -o '</details>' "$page" | wc -l)"

# Files and commands: the session's edits of one file, counted independently from the raw JSONL
# (Edit/MultiEdit/Write calls on it, once per tool_use id), appear as rows of the files table.
target=lib/spotter_web/live/pane_list_live.ex
want=$(jq -r --arg f "$target" 'select(.type=="assistant") | .message.content[]? | select(.type=="tool_use")
  | select((.name=="Edit" or .name=="MultiEdit" or .name=="Write") and (.input.file_path | endswith("/" + $f))) | .id' \
  "$f" | sort -u | wc -l)
python3 - "$page" "$target" >"$WORK/files_rows" <<'PY' || fail "files table: $(cat "$WORK/files_rows")"
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.table = None; s.row = []; s.cell = None; s.rows = {"files": [], "commands": []}
    def handle_starttag(s, t, a):
        a = dict(a)
        if t == "table" and a.get("class") in s.rows and s.table is None: s.table = a["class"]
        if s.table and t == "tr": s.row = []
        if s.table and t == "td": s.cell = ""
    def handle_endtag(s, t):
        if s.table and t == "td": s.row.append(s.cell); s.cell = None
        if s.table and t == "tr" and s.row: s.rows[s.table].append(s.row)
        if t == "table": s.table = None
    def handle_data(s, d):
        if s.cell is not None: s.cell += d
p = P(); p.feed(open(sys.argv[1], encoding="utf-8").read())
edits = [r for r in p.rows["files"] if r[0].endswith("/" + sys.argv[2]) and r[1] in ("edit", "write", "create")]
print(len(edits), len(p.rows["commands"]))
PY
read -r got_edits got_commands <"$WORK/files_rows"
expect_eq "files and commands: the edits of $target, one row each (jq: $want)" "$want" "$got_edits"
expect_eq "files and commands: the commands table has rows" "true" "$([ "${got_commands:-0}" -gt 0 ] && echo true)"
python3 - "$page" >"$WORK/tags" <<'PY' || fail "tags: $(cat "$WORK/tags")"
# The elements the report writes nest properly (html.parser, standard library).
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__(); self.stack = []; self.bad = []
    def handle_starttag(self, t, a):
        if t in ("details", "section", "article", "main", "table", "summary"): self.stack.append(t)
    def handle_endtag(self, t):
        if t in ("details", "section", "article", "main", "table", "summary"):
            if not self.stack or self.stack.pop() != t: self.bad.append(t)
p = P(); p.feed(open(sys.argv[1], encoding="utf-8").read())
print("unbalanced:", p.bad[:5], "open:", p.stack[:5]); sys.exit(1 if p.bad or p.stack else 0)
PY
[ $? -eq 0 ] && ok
# Tool calls hold their results; thinking is collapsed; sub-agents are linked from their launch.
expect_eq "tool calls" "true" "$([ "$(grep -c '<details class="tool">' "$page")" -gt 10 ] && echo true)"
expect_eq "results paired with calls" "true" "$([ "$(grep -c '<div class="paired"' "$page")" -gt 10 ] && echo true)"
for sub in $(jq -r '.sessions[1:][]' "$WORK/r.json"); do
  agent=$(sed "s#/#~2F#g" <<<"$sub")  # the anchor writes a byte outside [A-Za-z0-9._:-] as ~XX
  expect_eq "sub-agent $agent has its section" 1 "$(grep -c "<section class=\"session\" id=\"session-$agent\"" "$page")"
  expect_eq "sub-agent $agent is linked" "true" "$([ "$(grep -c "href=\"#session-$agent\"" "$page")" -ge 2 ] && echo true)"
done
expect_eq "usage names the model" "true" "$(grep -q '<table class="usage">.*claude-' <(tr -d '\n' <"$page") && echo true)"

# --markdown: a bounded digest; --redact runs; the database did not change.
expect_rc "report --markdown" 0 "$CTXFOLD" --db "$db" --session "$s" report --markdown
expect_eq "the digest fits an issue" "true" "$([ "$(wc -c <"$WORK/out")" -le 66000 ] && echo true)"
expect_eq "the digest's parts" "3" "$(grep -oE '^### (Usage and cost|Compactions|Conversation)' "$WORK/out" | sort -u | wc -l)"
expect_rc "report --redact" 0 "$CTXFOLD" --db "$db" --session "$s" report --redact -o "$WORK/red.html"
expect_eq "redaction counted" 1 "$(grep -c '^ctxfold: redacted' "$WORK/err")"
expect_rc "both formats is a usage error" 2 "$CTXFOLD" --db "$db" report --html --markdown
expect_eq "read-only" "$before" "$(sha256sum "$db" | cut -d' ' -f1)"
finish
