#!/usr/bin/env bash
# Quick start, command 2: every check the project has (see README). CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec npm test
