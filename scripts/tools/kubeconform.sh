#!/usr/bin/env bash
# Installs kubeconform (validates rendered Kubernetes manifests against local JSON schemas) into
# $SCYLLA_LOADER_TOOLS/bin with `go install`. Skips when it is already there.
set -euo pipefail
: "${SCYLLA_LOADER_TOOLS:=${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/tools}"
KUBECONFORM_VERSION=v0.7.0
bin="$SCYLLA_LOADER_TOOLS/bin"
# `kubeconform -v` says "development" for a go-installed build: read the module version instead.
if [ -x "$bin/kubeconform" ] && command -v go >/dev/null 2>&1 &&
  go version -m "$bin/kubeconform" 2>/dev/null | grep -Eq "^\s+mod\s+github.com/yannh/kubeconform\s+$KUBECONFORM_VERSION\s"; then
  exit 0
fi
command -v go >/dev/null 2>&1 || {
  echo "error: kubeconform.sh needs Go (go install github.com/yannh/kubeconform) and go is not on PATH" >&2
  exit 1
}
mkdir -p "$bin"
echo "installing kubeconform $KUBECONFORM_VERSION into $bin" >&2
if ! GOBIN="$bin" go install "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION"; then
  echo "error: go install github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION failed" >&2
  exit 1
fi
