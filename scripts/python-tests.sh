#!/usr/bin/env bash
# The Python client's checks (clients/python): type check (mypy --strict) and pytest, unit and
# integration (these use the local Cassandra node and start real loader processes).
#
# The environment lives under ${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/python, in a venv
# named after a hash of the lock file and pyproject.toml: a warm run reuses it and downloads
# nothing; a changed lock makes a new one (wheels come from the pip cache kept next to it).
# Everything is installed with --no-deps from requirements/test-lock.txt, which is how torch
# gets only the CUDA libraries it loads at import (see the lock file's header).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
pkg="$root/clients/python"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/python"

python=""
for candidate in "${SCYLLA_LOADER_PYTHON:-}" python3.13 python3.12 python3.11 python3.10 python3; do
  [ -n "$candidate" ] || continue
  if command -v "$candidate" >/dev/null 2>&1 &&
    "$candidate" -c 'import sys, venv; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    python="$candidate"
    break
  fi
done
if [ -z "$python" ]; then
  echo "python-tests: need Python 3.10+ with the venv module (set SCYLLA_LOADER_PYTHON)" >&2
  exit 1
fi

key=$( (cat "$pkg/requirements/test-lock.txt" "$pkg/pyproject.toml"; "$python" -c 'import sys; print(sys.version_info[:2])') |
  sha256sum | cut -c1-16)
venv="$cache/venv-$key"
export PIP_CACHE_DIR="$cache/pip" PIP_DISABLE_PIP_VERSION_CHECK=1
if [ ! -f "$venv/.complete" ]; then
  echo "python-tests: creating $venv (first run: downloads about 2.2 GB, mostly torch)"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  # Wheels fetched by hand into $cache/wheels are used before the network.
  mkdir -p "$cache/wheels"
  "$venv/bin/pip" install --quiet --no-deps --find-links "$cache/wheels" \
    -r "$pkg/requirements/test-lock.txt"
  touch "$venv/.complete"
fi
# Editable install, re-pointed at this checkout on every run (offline, about a second).
"$venv/bin/pip" install --quiet --no-deps --no-build-isolation --no-index -e "$pkg" >/dev/null

cd "$pkg"
echo "python-tests: mypy --strict"
"$venv/bin/mypy"
echo "python-tests: pytest"
exec "$venv/bin/pytest" -q -p no:cacheprovider "$@"
