#!/usr/bin/env bash
# Start-up cost: the binary does not link libcurl (its ~30 dependent libraries were loaded and
# relocated by every command); the HTTP summarizers load it with dlopen when they first send a
# request (e2e.compact_http_summarizers runs that path through this binary).
source "$(dirname "$0")/lib.sh"
command -v readelf >/dev/null || { echo "SKIP: no readelf" >&2; exit 0; }
needed=$(readelf -d "$CTXFOLD" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] && ok || fail "readelf listed no NEEDED entries for $CTXFOLD"
case "$needed" in
  *libcurl*) fail "ctxfold links libcurl at start-up: $(echo $needed)" ;;
  *) ok ;;
esac
expect_rc "--version" 0 "$CTXFOLD" --version
expect_eq "--version prints the version" "ctxfold 0.1.0" "$(cat "$WORK/out")"
finish
