#!/usr/bin/env bash
# One run of a ctxfold command with its memory and CPU: peak RSS (`/usr/bin/time -f %M`, which
# counts the pages of any file the process maps), the largest RssAnon (the process's own memory,
# /proc/PID/status polled every 20 ms) and user+sys CPU seconds, plus an md5 of its stdout to
# compare binaries. bench/README.md "Memory" (fifth pass) is made with it.
#
# usage: bench/peak_rss.sh LABEL BIN DB ARGS...
#   e.g. bench/peak_rss.sh "2e5 verify" build/ctxfold n2e5.db verify-invariants
set -uo pipefail
[ $# -ge 3 ] || { sed -n '2,9p' "$0"; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/peak_rss.sh: /usr/bin/time is required (apt-get install time)" >&2; exit 4; }
label=$1 bin=$2 db=$3
shift 3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/peak-rss.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
/usr/bin/time -f "%U %S %M" -o "$tmp/time" "$bin" --db "$db" "$@" > "$tmp/out" 2>/dev/null &
tpid=$!
pid=""
while [ -z "$pid" ] && kill -0 "$tpid" 2>/dev/null; do pid=$(pgrep -P "$tpid" | head -1); done
max=0
while kill -0 "$tpid" 2>/dev/null; do
  kb=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
  [ -n "$kb" ] && [ "$kb" -gt "$max" ] && max=$kb
  sleep 0.02
done
wait "$tpid"
rc=$?
read -r user sys peak < "$tmp/time"
printf "%-30s exit %s  CPU %6.2f s  peak RSS %5d MB  RssAnon %5d MB  stdout %s\n" "$label" "$rc" \
  "$(echo "$user + $sys" | bc)" $((peak / 1024)) $((max / 1024)) "$(md5sum < "$tmp/out" | cut -c1-8)"
