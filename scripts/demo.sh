#!/usr/bin/env bash
# Quick start, command 1: the whole path on a real sample dataset (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --demo
exec npm run -s demo -- "$@"
