#!/usr/bin/env bash
# snapcompact on the real Claude Code auto-compaction session (issue 7 "Done when"):
# compact --strategy snapcompact --window 60000, then render --format anthropic gives image
# blocks whose PNGs decode to the expected geometry and to the pixels of the archive's text drawn
# with the 8x13 glyphs, followed by the verbatim tail; --frames-dir writes the same PNGs; a
# text-only model renders text from the same database; grep and expand reach the archive's text;
# verify-invariants exits 0 and HEAD never moves.
source "$(dirname "$0")/lib.sh"
need_transcripts
f="$CTXFOLD_TRANSCRIPTS/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
s=fa812bfe-b295-4cca-9c2f-fdf01028cb46
db="$WORK/a.db"
bdf="$CTXFOLD_BUILD/generated/8x13.bdf"
expect_rc "import" 0 "$CTXFOLD" --db "$db" import "$f"
head0=$("$CTXFOLD" --db "$db" --session $s render | jq -r .head)

expect_rc "compact snapcompact" 0 "$CTXFOLD" --db "$db" --session $s compact --strategy snapcompact --window 60000 --notes
cp "$WORK/out" "$WORK/c.json"
expect_eq "compacted" "compacted" "$(jq -r .status "$WORK/c.json")"
expect_eq "strategy" "snapcompact" "$(jq -r .strategy "$WORK/c.json")"
arc=$(jq -r .summary_id "$WORK/c.json")
expect_eq "an archive id" "arc-" "${arc:0:4}"
expect_eq "frames cached by compact" "true" "$(jq '.frames_cached > 0' "$WORK/c.json")"
# No --model: the frames are for the model the transcript names last (its newest assistant record).
recorded=$(jq -r 'select(.type=="assistant" and (.message.model // "" | startswith("<") | not)) | .message.model // empty' "$f" | tail -1)
expect_eq "the session's recorded model, not the defaults" "$recorded session" "$(jq -r '"\(.model.id) \(.model.source)"' "$WORK/c.json")"
expect_eq "under the trigger after" "true" "$(jq '.tokens_after.value < 48000' "$WORK/c.json")"
expect_eq "the archive is a view node" "archive" "$("$CTXFOLD" --db "$db" show "$arc" | jq -r .node.kind)"
expect_eq "notes written" "rewritten" "$(jq -r .notes.status "$WORK/c.json")"
notes=$(jq -r .notes.id "$WORK/c.json")

# render (no --strategy: the session's strategy is now snapcompact) in the anthropic format.
expect_rc "render anthropic" 0 "$CTXFOLD" --db "$db" --session $s render --format anthropic --frames-dir "$WORK/frames"
cp "$WORK/out" "$WORK/r.json"
expect_eq "strategy snapcompact" "snapcompact" "$(jq -r .strategy "$WORK/r.json")"
expect_eq "the archive rendered" "$arc" "$(jq -r .archive "$WORK/r.json")"
# The imported Claude Code summary stays as text ahead of the frames, in the same user turn.
expect_eq "sections: notes, summary, frames, tail" "notes,summary,frames,tail" "$(jq -r '[.sections[].kind] | join(",")' "$WORK/r.json")"
expect_eq "the request starts with the notes" "$notes" "$(jq -r .notes "$WORK/r.json")"
expect_eq "the caption, then image blocks, base64 PNG" "true" \
  "$(jq '.messages[0].content | (map(.type == "text" and (.text | startswith("[ctxfold snapcompact archive"))) | index(true)) as $c
        | $c != null and (.[$c + 1:] | length > 0 and all(.type == "image" and .source.type == "base64" and .source.media_type == "image/png"))' "$WORK/r.json")"
n=$(jq '[.messages[0].content[] | select(.type=="image")] | length' "$WORK/r.json")
expect_eq "as many images as kept frames" "$(jq .frames.kept "$WORK/r.json")" "$n"
expect_eq "frames read from the cache" "true" "$(jq '[.frames.frames[].cached] | all' "$WORK/r.json")"
expect_eq "the verbatim tail follows" "true" "$(jq '(.messages | length) > 1 and (.sections | map(.kind) | index("tail")) != null' "$WORK/r.json")"
expect_eq "no orphans" "0" "$(anthropic_orphans "$WORK/r.json")"
expect_eq "frames-dir holds every frame" "$n" "$(ls "$WORK/frames" | wc -l | tr -d ' ')"
if [ "$(jq .frames.dropped "$WORK/r.json")" -gt 0 ]; then
  expect_eq "the caption says how many characters were dropped" "true" \
    "$(jq --arg d "$(jq .frames.dropped_chars "$WORK/r.json")" '[.messages[0].content[] | select(.type == "text") | .text | contains($d + " characters in")] | any' "$WORK/r.json")"
fi

# Decode the images (PNG parsed here with zlib, independent of libpng) and compare the first frame
# with the archive's first rows drawn from the BDF glyphs.
"$CTXFOLD" --db "$db" show "$arc" | jq -r '.node.content[0].text' >"$WORK/archive.txt"
python3 - "$WORK/r.json" "$bdf" "$WORK/archive.txt" "$WORK/frames" >"$WORK/py.out" 2>&1 <<'PY'
import base64, json, os, struct, sys, zlib
doc = json.load(open(sys.argv[1]))
geo = doc["frames"]["geometry"]
def decode(png):
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, ihdr = 8, b"", None
    while pos < len(png):
        n, t = struct.unpack(">I4s", png[pos:pos + 8]); data = png[pos + 8:pos + 8 + n]; pos += 12 + n
        if t == b"IHDR": ihdr = struct.unpack(">IIBBBBB", data)
        elif t == b"IDAT": idat += data
    w, h, depth, color = ihdr[:4]
    assert depth == 1 and color == 0, ihdr
    raw, stride, rows = zlib.decompress(idat), (w + 7) // 8, []
    for y in range(h):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        assert line[0] == 0, "filter"
        rows.append([(line[1 + x // 8] >> (7 - x % 8)) & 1 == 0 for x in range(w)])  # True = ink
    return w, h, rows
imgs = [b for b in doc["messages"][0]["content"] if b["type"] == "image"]
for i, b in enumerate(imgs):
    w, h, _ = decode(base64.b64decode(b["source"]["data"]))
    fr = doc["frames"]["frames"][i]
    assert w == geo["width"] == fr["width"] and h == fr["height"] and h <= geo["height"] and h % 13 == 0, (w, h, fr)
    disk = open(os.path.join(sys.argv[4], "frame-%03d.png" % fr["index"]), "rb").read()
    assert disk == base64.b64decode(b["source"]["data"]), "frames-dir differs"
glyphs, enc, bits = {}, None, None
for line in open(sys.argv[2]):
    p = line.split()
    if not p: continue
    if p[0] == "ENCODING": enc = int(p[1])
    elif p[0] == "BITMAP": bits = []
    elif p[0] == "ENDCHAR": glyphs[enc] = bits; bits = None
    elif bits is not None: bits.append(int(p[0], 16))
w, h, rows = decode(base64.b64decode(imgs[0]["source"]["data"]))
text = open(sys.argv[3], encoding="utf-8").read().split("\n")
checked = 0
for r, line in enumerate(text[:3]):
    line = line[:geo["columns"]]
    if any(ord(c) < 32 or ord(c) > 126 for c in line): continue  # ASCII rows only: no tabs, no wide clusters
    for c in range(geo["columns"]):
        g = glyphs[ord(line[c])] if c < len(line) else [0] * 13
        for y in range(13):
            for x in range(8):
                assert rows[r * 13 + y][c * 8 + x] == bool((g[y] >> (7 - x)) & 1), (r, c, y, x)
    checked += 1
assert checked > 0, "no ASCII row to check"
print("ok", len(imgs), checked)
PY
expect_eq "PNGs decode to the expected geometry and glyph pixels" "ok" "$(cut -d' ' -f1 "$WORK/py.out" | head -1)"
[ "$(head -c2 "$WORK/py.out")" = "ok" ] || cat "$WORK/py.out" >&2

# openai format: image_url data URLs.
expect_rc "render openai" 0 "$CTXFOLD" --db "$db" --session $s render --format openai
expect_eq "openai image_url" "true" "$(jq '[.messages[].content | if type=="array" then .[] else empty end | select(.type=="image_url") | .image_url.url | startswith("data:image/png;base64,")] | (length > 0 and all)' "$WORK/out")"

# A text-only model: the same database renders text (rolling's view, the archive read as text).
expect_rc "render text-only" 0 "$CTXFOLD" --db "$db" --session $s render --format anthropic --model deepseek-chat
cp "$WORK/out" "$WORK/t.json"
expect_eq "fallback rolling" "rolling" "$(jq -r .fallback "$WORK/t.json")"
expect_eq "no image blocks" "0" "$(jq '[.messages[].content | if type=="array" then .[] else empty end | select(.type=="image")] | length' "$WORK/t.json")"
expect_eq "the archive read as text" "archive" "$(jq -r '.folds[0].kind' "$WORK/t.json")"
# compacting for it runs rolling's text compaction: a text summary.
expect_rc "compact text-only" 0 "$CTXFOLD" --db "$db" --session $s compact --strategy snapcompact --model deepseek-chat --window 60000 --force
expect_eq "rolling fallback compacts" "rolling" "$(jq -r .fallback "$WORK/out")"
expect_rc "render text-only again" 0 "$CTXFOLD" --db "$db" --session $s render --format anthropic --model deepseek-chat --strategy snapcompact
expect_eq "a text summary" "true" "$(jq '.summary != null and ([.messages[].content | if type=="array" then .[] else empty end | select(.type=="image")] | length) == 0' "$WORK/out")"
expect_eq "the notes survive the switch" "$notes" "$(jq -r .notes "$WORK/out")"
expect_rc "render lcm" 0 "$CTXFOLD" --db "$db" --session $s render --strategy lcm
expect_eq "notes under lcm too" "$notes" "$(jq -r .notes "$WORK/out")"
expect_rc "render vision again" 0 "$CTXFOLD" --db "$db" --session $s render --format anthropic --strategy snapcompact
expect_eq "the archive stayed for a vision model" "$arc" "$(jq -r .archive "$WORK/out")"

# grep and expand reach the archive's text.
word=$(grep -o '[A-Za-z_]\{8,\}' "$WORK/archive.txt" | sed -n 40p)
expect_rc "grep" 0 "$CTXFOLD" --db "$db" --session $s grep --in summaries "$word"
expect_eq "grep finds the archive" "true" "$(jq -s --arg a "$arc" '[.[] | select(.type == "match" and .id == $a)] | length > 0' "$WORK/out")"
expect_rc "expand" 0 "$CTXFOLD" --db "$db" expand "$arc"

expect_rc "verify" 0 "$CTXFOLD" --db "$db" verify-invariants --all-sessions
expect_eq "HEAD never moved" "$head0" "$("$CTXFOLD" --db "$db" --session $s render | jq -r .head)"
finish
