#!/usr/bin/env bash
# opencode conformance: suite.sh beside this file with CLIENT=opencode (see there).
# Usage: CTXFOLD=build/ctxfold bash tests/clients/opencode/run.sh
CLIENT=opencode exec bash "$(dirname "${BASH_SOURCE[0]}")/suite.sh"
