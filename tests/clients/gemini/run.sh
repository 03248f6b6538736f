#!/usr/bin/env bash
# Gemini CLI conformance: drives the real client (headless, -p) against the loopback mock, imports
# the chats it wrote (isolated HOME) into a fresh database, and compares `ctxfold render --format
# gemini --body` with the requests really sent: the last main request of every scenario and the
# first main request after each chat compression. Scenarios (each a JSON beside this file):
#   tools           shell and read_file calls, parallel calls, a failing call; resumed twice
#   thinking_image  thoughts with signatures, a tool call after thinking, a PNG read by read_file
#                   and one referenced with @file; resumed three times
#   compress        one session resumed five times and compressed twice (the mock reports a usage
#                   near the window on a tool call, so the compression fires mid-turn); besides
#                   the render comparisons, checks.py every-turn proves from the mock's records
#                   and the client's files that every prompt and reply is in the database and
#                   that both compressions are summary view nodes.
# Usage: CTXFOLD=build/ctxfold bash tests/clients/gemini/run.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
source "$HERE/../lib.sh"
need_clients
CTXFOLD=$(cd "$(dirname "$CTXFOLD")" && pwd)/$(basename "$CTXFOLD")
CLIENT=gemini
MODEL=gemini-2.5-flash
GEM="$NODE_BIN/gemini"
GEM_TIMEOUT=${GEM_TIMEOUT:-120}
rm -f "$RESULTS_DIR/$CLIENT.jsonl"
FAILED=0
fail() { echo "gemini: $*" >&2; FAILED=1; }

# new_home NAME: a fresh HOME (settings: telemetry, usage statistics and update checks off; API
# key auth) and project folder under $WORK; sets D.
new_home() {
  D="$WORK/$1"
  mkdir -p "$D/home/.gemini" "$D/proj" "$D/rec"
  cat > "$D/home/.gemini/settings.json" <<'EOF'
{"general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false, "disableAutoUpdate": true},
 "privacy": {"usageStatisticsEnabled": false},
 "telemetry": {"enabled": false},
 "security": {"auth": {"selectedType": "gemini-api-key"}}}
EOF
  echo alpha > "$D/proj/notes.txt"
  python3 - "$D/proj/dot.png" <<'EOF'
import struct, sys, zlib
w = h = 4
raw = b"".join(b"\x00" + b"\xff\x00\x00" * w for _ in range(h))
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
open(sys.argv[1], "wb").write(png)
EOF
}

# gem PROMPT [resume]: one headless run of the client in $D.
gem() {
  local prompt=$1 resume=${2:-}
  local args=(-p "$prompt" -m "$MODEL" --yolo -o text)
  [ -n "$resume" ] && args+=(--resume latest)
  ( cd "$D/proj" && HOME="$D/home" GEMINI_CLI_NO_RELAUNCH=true GOOGLE_GEMINI_BASE_URL="$MOCK_URL" \
      GEMINI_API_KEY=dummy GEMINI_CLI_TRUST_WORKSPACE=true NO_COLOR=1 \
      timeout "$GEM_TIMEOUT" "$GEM" "${args[@]}" </dev/null ) >> "$D/client.log" 2>&1 \
    || fail "$(basename "$D"): the client failed on '$prompt' (see its log below)"
}

# run_scenario NAME PROMPT...: the first prompt starts the session, each later one resumes it.
run_scenario() {
  local name=$1; shift
  new_home "$name"
  start_mock "$HERE/$name.json" "$D/rec"
  local first=1 p
  for p in "$@"; do
    if [ $first = 1 ]; then gem "$p"; first=0; else gem "$p" resume; fi
  done
  stop_mock
  DB="$D/ctx.db"
  HOME="$D/home" "$CTXFOLD" --db "$DB" import --from gemini > "$D/import.json" 2> "$D/import.err" \
    || fail "$name: import failed: $(cat "$D/import.err")"
  SESSION=$(python3 "$HERE/checks.py" session-of "$D/home/.gemini/tmp" "${*: -1}")
  [ -n "$SESSION" ] || { fail "$name: no chat file holds the last prompt"; return; }
  local last; last=$(last_main "$D/rec")
  [ -n "$last" ] || { fail "$name: the mock saw no main request"; return; }
  # The last request is the context the final reply answered: render at the node that ends it.
  local id seq
  read -r id seq < <(python3 "$HERE/checks.py" node-for "$last" "$DB" "$SESSION") \
    || { fail "$name: no node ends $(basename "$last")"; return; }
  "$CTXFOLD" --db "$DB" --session "$SESSION" render --format gemini --body --head "$id" > "$D/render-last.json" \
    2> "$D/render.err" || fail "$name: render failed: $(cat "$D/render.err")"
  compare_to "$CLIENT" "$name" last "$last" gemini "$D/render-last.json" gemini
}

# compare_compactions NAME: the render at the node that ends the first request after each chat
# compression (read as of that node's append boundary) against that request.
compare_compactions() {
  local name=$1 k=0 rec id seq
  while read -r rec; do
    k=$((k + 1))
    read -r id seq < <(python3 "$HERE/checks.py" node-for "$rec" "$DB" "$SESSION") \
      || { fail "$name: no node ends $(basename "$rec")"; continue; }
    "$CTXFOLD" --db "$DB" --session "$SESSION" render --format gemini --body --head "$id" --as-of "$seq" \
      > "$D/render-compaction$k.json" 2>> "$D/render.err" || { fail "$name: render at $id failed"; continue; }
    compare_to "$CLIENT" "$name" "compaction$k" "$rec" gemini "$D/render-compaction$k.json" gemini
  done < <(python3 "$HERE/checks.py" compactions "$D/rec")
  [ "$k" -ge "${2:-0}" ] || fail "$name: $k chat compressions seen, ${2:-0} expected"
}

show_logs() { [ "$FAILED" = 1 ] && for f in "$WORK"/*/client.log "$WORK"/*/import.err; do
  [ -s "$f" ] && { echo "--- $f"; grep -v '256-color\|YOLO mode' "$f" | tail -20; }; done >&2; }

run_scenario tools "PROMPT-T1 run a shell command, then read notes.txt" \
  "PROMPT-T2 read notes.txt and run a command in parallel" "PROMPT-T3 read a file that does not exist"

run_scenario thinking_image "PROMPT-K1 think about 6 times 7" "PROMPT-K2 think, then read notes.txt" \
  "PROMPT-I1 read the image dot.png" "PROMPT-I2 describe @dot.png"

run_scenario compress "PROMPT-C1 remember: the project is called falcon" "PROMPT-C2 remember: the deadline is friday" \
  "PROMPT-C3 run a check" "PROMPT-C4 remember: the owner is dana" "PROMPT-C5 run another check" \
  "PROMPT-C6 summarise what you know"
compare_compactions compress 2
if ! python3 "$HERE/checks.py" every-turn "$D/rec" "$D/home/.gemini/tmp" "$DB" "$SESSION" 2 > "$D/every-turn.json"; then
  fail "compress: a turn is missing from the database or a compression is not a summary: $(cat "$D/every-turn.json")"
else
  echo "gemini compress: every turn kept: $(cat "$D/every-turn.json")"
fi

show_logs
# GEMINI_KEEP=DIR keeps every scenario's HOME, records, database and renders for a look.
[ -n "${GEMINI_KEEP:-}" ] && { rm -rf "$GEMINI_KEEP"; cp -r "$WORK" "$GEMINI_KEEP"; }
python3 "$CLIENTS_DIR/report.py" --client "$CLIENT"
rc=$?
[ "$FAILED" = 0 ] || rc=1
exit $rc
