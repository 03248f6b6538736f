#!/usr/bin/env bash
# Installs the Debian packages ctxfold builds and tests with (needs root or sudo).
set -euo pipefail
pkgs=(cmake g++ make ninja-build pkg-config libcli11-dev libsqlite3-dev nlohmann-json3-dev libfmt-dev
      libcurl4-openssl-dev nettle-dev googletest libgtest-dev libgmock-dev libutf8proc-dev libre2-dev libpng-dev xfonts-base pcf2bdf
      libcmark-gfm-dev libcmark-gfm-extensions-dev libsimdjson-dev libpq-dev
      jq sqlite3 ripgrep python3 man-db groff-base postgresql   # postgresql: the server e2e.pg_* tests start
      zsh fish graphviz chromium)   # test-only peers: the zsh/fish completion tests, dot for log --graph,
                                  # headless chromium for the report's browser test (e2e.report_browser)
missing=()
# Node.js and npm for the client conformance suite (tests/clients: the agents are npm packages);
# a machine that has them (from any source) keeps its own.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then pkgs+=(nodejs npm); fi
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
