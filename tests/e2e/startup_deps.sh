#!/usr/bin/env bash
# Start-up cost: the binary links neither libcurl (its ~30 dependent libraries were loaded and
# relocated by every command) nor libcrypto (its own relocations were ~40% of the dynamic
# loader's work) nor libnettle; the HTTP summarizers, snapcompact's frames and the digests load
# them with dlopen on first use (e2e.compact_http_summarizers, e2e.snapcompact_real_session and
# every import run those paths through this binary).
source "$(dirname "$0")/lib.sh"
command -v readelf >/dev/null || skip "no readelf"
needed=$(readelf -d "$CTXFOLD" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] && ok || fail "readelf listed no NEEDED entries for $CTXFOLD"
for lib in libcurl libcrypto libssl libnettle; do
  case "$needed" in
    *"$lib"*) fail "ctxfold links $lib at start-up: $(echo $needed)" ;;
    *) ok ;;
  esac
done
expect_rc "--version" 0 "$CTXFOLD" --version
expect_eq "--version prints the version" "ctxfold 0.1.0" "$(cat "$WORK/out")"
finish
