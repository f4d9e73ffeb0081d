#!/usr/bin/env bash
# Installs grpcurl into $SCYLLA_LOADER_TOOLS/bin (go install, pinned). The reflection test runs it
# with no .proto files at all, so it proves that server reflection alone is enough for a foreign
# client to list, describe and call every method.
set -euo pipefail
GRPCURL_VERSION=v1.9.3
: "${SCYLLA_LOADER_TOOLS:=${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/tools}"
bin="$SCYLLA_LOADER_TOOLS/bin"
stamp="$bin/.grpcurl.version"

if [ -x "$bin/grpcurl" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$GRPCURL_VERSION" ]; then
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "error: grpcurl is installed with Go (go install github.com/fullstorydev/grpcurl)," \
    "which is not on PATH; install Go and rerun scripts/setup.sh" >&2
  exit 1
fi
mkdir -p "$bin"
echo "installing grpcurl $GRPCURL_VERSION into $bin" >&2
if ! CGO_ENABLED=0 GOBIN="$bin" go install -trimpath -ldflags='-s -w' \
  "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION"; then
  echo "error: go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION failed" \
    "(see above); the reflection test needs grpcurl" >&2
  exit 1
fi
echo "$GRPCURL_VERSION" >"$stamp"
