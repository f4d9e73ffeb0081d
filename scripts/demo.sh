#!/usr/bin/env bash
# Quick start, command 1: the whole path on a real sample dataset (see README).
# The set-up (scripts/setup.sh --demo) installs the npm packages, and meanwhile builds the native
# module; the local node's jars download and the node starts while cargo builds. The demo then
# reuses that node.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --demo
exec npm run -s demo -- "$@"
