#!/usr/bin/env bash
# Quick start, command 2: every check the project has (see README). CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The tools scripts/tools/*.sh installed (kubeconform, hadolint, ...) come first on PATH.
export PATH="${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/tools/bin:$PATH"
npm test
# The Python client and PyTorch dataset (clients/python): makes its own venv in the cache.
scripts/python-tests.sh
