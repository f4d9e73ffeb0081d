#!/usr/bin/env bash
# Makes kustomize available for rendering deploy/k8s: `kubectl kustomize` when kubectl is on PATH
# (it embeds kustomize v5), otherwise the standalone kustomize, go-installed into
# $SCYLLA_LOADER_TOOLS/bin. The tests prefer $SCYLLA_LOADER_TOOLS/bin/kustomize, then kubectl.
set -euo pipefail
: "${SCYLLA_LOADER_TOOLS:=${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/tools}"
KUSTOMIZE_VERSION=v5.7.1
bin="$SCYLLA_LOADER_TOOLS/bin"
if [ -x "$bin/kustomize" ]; then
  exit 0
fi
if command -v kubectl >/dev/null 2>&1 && kubectl kustomize --help >/dev/null 2>&1; then
  exit 0
fi
command -v go >/dev/null 2>&1 || {
  echo "error: kustomize.sh needs kubectl (kubectl kustomize) or Go (go install sigs.k8s.io/kustomize/kustomize/v5); neither is on PATH" >&2
  exit 1
}
mkdir -p "$bin"
echo "kubectl not found: installing kustomize $KUSTOMIZE_VERSION into $bin" >&2
if ! GOBIN="$bin" go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"; then
  echo "error: go install sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION failed" >&2
  exit 1
fi
