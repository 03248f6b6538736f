#!/usr/bin/env bash
# A database file this user cannot write (chmod 444 in a directory it cannot write, as the
# tester's `nobody` on a root-owned copy): commands that only read work on it, and so do
# `compact --dry-run` (writes nothing, calls no summarizer) and `prepare --budget N` without a
# window (fits one request without touching the database). A real compaction exits 4 and says
# once, with the path, why.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/compact_helpers.inc"
export HOME="$WORK/home"
mkdir -p "$HOME"
# Root writes any file: run the readers as nobody then (skip where that is not possible).
if [ "$(id -u)" = 0 ]; then
  chmod 755 "$WORK" "$HOME"
  if ! command -v runuser >/dev/null || ! runuser -u nobody -- "$CTXFOLD" --version >/dev/null 2>&1; then
    skip "running as root and cannot run ctxfold as nobody"
  fi
  reader() { runuser -u nobody -- env HOME="$HOME" "$@"; }
else
  reader() { "$@"; }
fi

mkdir "$WORK/rodir"
gen_session 20 | "$CTXFOLD" --db "$WORK/rodir/r.db" --session S append >/dev/null 2>"$WORK/err"
expect_eq "append" 0 $?
chmod 444 "$WORK/rodir/r.db"
chmod 555 "$WORK/rodir"
sum0=$(sha256sum "$WORK/rodir/r.db" | cut -d' ' -f1)
db="$WORK/rodir/r.db"

expect_rc "lcm dry run on a read-only file" 0 reader "$CTXFOLD" --db "$db" --session S compact --dry-run --strategy lcm --window 20000
expect_eq "lcm dry run plans" "planned lcm" "$(jq -r '"\(.status) \(.strategy)"' "$WORK/out")"
expect_rc "rolling dry run on a read-only file" 0 reader "$CTXFOLD" --db "$db" --session S compact --dry-run --window 20000
expect_eq "rolling dry run plans" "planned" "$(jq -r .status "$WORK/out")"
expect_rc "region dry run on a read-only file" 0 reader "$CTXFOLD" --db "$db" --session S compact --dry-run --from u1 --to b2
expect_eq "region dry run plans" "planned" "$(jq -r .status "$WORK/out")"
expect_rc "prepare --budget on a read-only file" 0 reader "$CTXFOLD" --db "$db" --session S prepare --budget 100000
expect_eq "prepare prints the request" "b20" "$(jq -r .head "$WORK/out")"
expect_eq "prepare compacted nothing" "false null" "$(jq -r '"\(.prepare.due) \(.prepare.compaction)"' "$WORK/out")"
expect_rc "render on a read-only file" 0 reader "$CTXFOLD" --db "$db" --session S render

# Writing needs a writable file: exit 4, the message once, with the path.
expect_rc "compact on a read-only file" 4 reader "$CTXFOLD" --db "$db" --session S compact --strategy lcm --window 20000
case "$(cat "$WORK/err")" in
  *"attempt to write a readonly database"*"attempt to write a readonly database"*) fail "the message is doubled: $(cat "$WORK/err")" ;;
  *"cannot write database '$db'"*"attempt to write a readonly database"*) ok ;;
  *) fail "compact on a read-only file: unexpected stderr: $(cat "$WORK/err")" ;;
esac
expect_rc "prepare with a window may compact: needs a writable file" 4 reader "$CTXFOLD" --db "$db" --session S prepare --window 20000
expect_eq "not a byte changed" "$sum0" "$(sha256sum "$db" | cut -d' ' -f1)"
chmod 755 "$WORK/rodir"
finish
