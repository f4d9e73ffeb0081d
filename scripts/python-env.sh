#!/usr/bin/env bash
# The Python client's test environment (clients/python): the one place that names and makes it.
# scripts/setup.sh makes it before any test runs, scripts/python-tests.sh runs in it, and
# `bench transform` (src of its Python legs: bench/transform/benchPython.ts) finds it here.
#
#   scripts/python-env.sh           make the venv if it is missing; print its folder
#   scripts/python-env.sh --path    print the folder the venv has (or would have); make nothing
#   scripts/python-env.sh --find    print its interpreter if the venv is complete, else fail
#
# The venv lives under ${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/python, named after a hash
# of the lock file, pyproject.toml and the base interpreter's version: a warm run reuses it and
# downloads nothing; a changed lock makes a new one (wheels come from the uv and pip caches kept
# next to it). Everything is installed with --no-deps from requirements/test-lock.txt, which is
# how torch gets only the CUDA libraries it loads at import (see the lock file's header). uv
# (PyPI's `uv` package, pinned, kept in the same cache) installs them: it downloads the wheels
# side by side, which on this machine's link is twice the rate of pip's one at a time (one
# stream 14.5 MB/s, four 28 MB/s); from empty caches the venv took uv 142 s and pip 262 s
# (2026-11-28, both on the same loaded machine); pip does it when uv cannot be had. Progress and
# errors go to stderr; stdout holds only the answer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pkg="$root/clients/python"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/python"
mode="${1:-make}"
case "$mode" in
  make | --path | --find) ;;
  *)
    echo "usage: scripts/python-env.sh [--path | --find]" >&2
    exit 2
    ;;
esac

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
  echo "python-env: need Python 3.10+ with the venv module (set SCYLLA_LOADER_PYTHON)" >&2
  exit 1
fi

key=$( (cat "$pkg/requirements/test-lock.txt" "$pkg/pyproject.toml"; "$python" -c 'import sys; print(sys.version_info[:2])') |
  sha256sum | cut -c1-16)
venv="$cache/venv-$key"

case "$mode" in
  --path)
    echo "$venv"
    exit 0
    ;;
  --find)
    if [ -f "$venv/.complete" ]; then
      echo "$venv/bin/python"
      exit 0
    fi
    echo "python-env: no test venv at $venv: run scripts/python-env.sh (or scripts/setup.sh) to make it" >&2
    exit 1
    ;;
esac

export PIP_CACHE_DIR="$cache/pip" PIP_DISABLE_PIP_VERSION_CHECK=1
UV_VERSION=0.13.8
# uv in a venv of its own in the cache (made once, a 20 MB download); fails if it cannot be had.
# uv reads neither pip's settings nor its index: a PIP_INDEX_URL (a mirror) is passed on.
uv_tool() {
  local dir="$cache/uv-$UV_VERSION"
  if [ ! -x "$dir/bin/uv" ]; then
    rm -rf "$dir"
    if ! { "$python" -m venv "$dir" && "$dir/bin/pip" install --quiet "uv==$UV_VERSION"; } >&2; then
      rm -rf "$dir"
      return 1
    fi
  fi
  echo "$dir/bin/uv"
}
if [ -n "${PIP_INDEX_URL:-}" ] && [ -z "${UV_INDEX_URL:-}" ]; then export UV_INDEX_URL="$PIP_INDEX_URL"; fi
if [ ! -f "$venv/.complete" ]; then
  echo "python-env: creating $venv (first run: downloads about 2.2 GB, mostly torch)" >&2
  started=$SECONDS
  rm -rf "$venv"
  "$python" -m venv "$venv"
  # Wheels fetched by hand into $cache/wheels are used before the network.
  mkdir -p "$cache/wheels"
  if uv=$(uv_tool); then
    # --compile-bytecode: the .pyc files pip would write, made now (in parallel) rather than by
    # the first test that imports torch.
    UV_CACHE_DIR="$cache/uv" "$uv" pip install --quiet --python "$venv/bin/python" --no-deps \
      --compile-bytecode --find-links "$cache/wheels" ${PIP_FIND_LINKS:+--find-links "$PIP_FIND_LINKS"} \
      -r "$pkg/requirements/test-lock.txt" >&2
  else
    echo "python-env: uv could not be installed; pip installs the venv (one download at a time)" >&2
    "$venv/bin/pip" install --quiet --no-deps --find-links "$cache/wheels" \
      -r "$pkg/requirements/test-lock.txt" >&2
  fi
  touch "$venv/.complete"
  echo "python-env: made the venv in $((SECONDS - started)) s" >&2
fi
# Editable install, re-pointed at this checkout on every run (offline, about a second).
"$venv/bin/pip" install --quiet --no-deps --no-build-isolation --no-index -e "$pkg" >/dev/null
echo "$venv"
