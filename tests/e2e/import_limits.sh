#!/usr/bin/env bash
# The record limit (--max-record-bytes, default 64 MiB): a line longer than it is reported with
# its file and line and skipped whole, read past in bounded memory; the records before and after
# it are imported, in a regular file and in a pipe. /dev/zero (an endless line of NUL bytes, which
# once grew an import to 14 GB in 20 s) ends with a report and a small peak RSS. A JSON document
# longer than the limit is reported and not read.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
long=$(head -c 5000 /dev/zero | tr '\0' 'x')
{
  echo '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"before"}}'
  echo "{\"type\":\"user\",\"uuid\":\"u2\",\"parentUuid\":\"u1\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"$long\"}}"
  echo '{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"role":"assistant","content":[{"type":"text","text":"after"}]}}'
} > s.jsonl
expect_rc "a 5 kB line with a 1 KiB limit" 0 "$CTXFOLD" --db a.db import --max-record-bytes 1KiB s.jsonl
expect_eq "the long line is reported at s.jsonl:2" "s.jsonl 2" \
  "$(jq -r '.warnings[] | select(.code=="line.too_long") | "\(.file) \(.line)"' "$WORK/out")"
grep -q "^ctxfold: warning: s.jsonl:2: .*record limit.*(line.too_long)" "$WORK/err" && ok || fail "no file:line on stderr: $(cat "$WORK/err")"
expect_eq "the records before and after are imported" "u1 a1" \
  "$(db_sql a.db "select id from nodes order by seq" | xargs)"
expect_rc "the default limit keeps the line" 0 "$CTXFOLD" --db b.db import s.jsonl
expect_eq "default: three nodes, no warning" "3 0" "$(db_sql b.db 'select count(*) from nodes') $(jq '.warnings | length' "$WORK/out")"
expect_rc "through a pipe" 0 "$CTXFOLD" --db c.db import --max-record-bytes 1024 <(cat s.jsonl)
expect_eq "a pipe: the long line is reported at line 2" "2" \
  "$(jq -r '.warnings[] | select(.code=="line.too_long") | .line' "$WORK/out")"
expect_eq "a pipe: the records before and after are imported" "2" "$(db_sql c.db 'select count(*) from nodes')"
expect_rc "a bad limit is a usage error" 2 "$CTXFOLD" --db d.db import --max-record-bytes lots s.jsonl

# /dev/zero never sends a newline: the stream is read past the limit a bounded number of times,
# reported, and the import ends. Peak RSS from /usr/bin/time when it is installed.
if [ -x /usr/bin/time ]; then
  /usr/bin/time -v "$CTXFOLD" --db z.db import --format claude-code --max-record-bytes 1MiB /dev/zero \
    > z.out 2> z.err
  rc=$?
  rss=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' z.err)
  [ -n "$rss" ] && [ "$rss" -lt 204800 ] && ok || fail "/dev/zero: peak RSS ${rss:-?} KiB (want < 200 MiB)"
else
  "$CTXFOLD" --db z.db import --format claude-code --max-record-bytes 1MiB /dev/zero > z.out 2> z.err
  rc=$?
fi
expect_eq "/dev/zero: ends with exit 0" "0" "$rc"
expect_eq "/dev/zero: the endless line reported at line 1" "line.too_long line.unterminated" \
  "$(jq -r '[.warnings[] | select(.line==1) | .code] | sort | join(" ")' z.out)"
grep -q "/dev/zero:1: .*(line.unterminated)" z.err && ok || fail "/dev/zero: no file:line on stderr: $(tail -3 z.err)"

# A whole JSON document is one record.
printf '{"messages":[{"role":"user","content":"%s"},{"role":"assistant","content":"ok"}]}\n' "$long" > chat.json
expect_rc "a 5 kB document with a 1 KiB limit" 0 "$CTXFOLD" --db e.db import --max-record-bytes 1KiB chat.json
expect_eq "the document is reported, not read" "document.too_large 1 0" \
  "$(jq -r '.warnings[0] | "\(.code) \(.line)"' "$WORK/out") $(db_sql e.db 'select count(*) from nodes')"
expect_rc "the default limit reads it" 0 "$CTXFOLD" --db f.db import chat.json
expect_eq "default: two nodes" "2" "$(db_sql f.db 'select count(*) from nodes')"
finish
