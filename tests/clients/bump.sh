#!/usr/bin/env bash
# Moves the pinned clients to their newest releases on the npm registry, reinstalls them and reruns
# the conformance suite against them; package.json and package-lock.json then hold the new pins
# and share/models/catalog.json the new clients' models (review the figures and the diff, then
# commit all three). Usage: bash tests/clients/bump.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
cd "$here"
for pkg in @anthropic-ai/claude-code-linux-x64 @openai/codex @google/gemini-cli @qwen-code/qwen-code \
           @mariozechner/pi-coding-agent @github/copilot cline opencode-ai @kilocode/cli; do
  latest=$(npm view "$pkg" version)
  echo "$pkg -> $latest" >&2
  npm pkg set "dependencies.$pkg=$latest"
done
rm -rf node_modules
npm install --no-audit --no-fund
# The new clients' model tables into the catalog (docs/models.md); rebuild so ctxfold embeds it.
python3 "$here/models.py" --write
cmake --build "$build" --target ctxfold
export CTXFOLD=${CTXFOLD:-$build/ctxfold}
rc=0
for dir in claude codex gemini qwen pi copilot cline opencode kilo hooks writeback; do
  bash "$here/$dir/run.sh" || rc=1
done
python3 "$here/report.py" || rc=1
exit $rc
