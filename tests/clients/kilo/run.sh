#!/usr/bin/env bash
# Kilo CLI (an opencode fork) conformance: ../opencode/suite.sh with CLIENT=kilo (see there).
# Usage: CTXFOLD=build/ctxfold bash tests/clients/kilo/run.sh
CLIENT=kilo exec bash "$(dirname "${BASH_SOURCE[0]}")/../opencode/suite.sh"
