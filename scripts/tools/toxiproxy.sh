#!/usr/bin/env bash
# Installs toxiproxy-server (Shopify/toxiproxy) into $SCYLLA_LOADER_TOOLS/bin: `bench latency`
# puts it between the loader and the database to inject round-trip latency, jitter and limited
# bandwidth, because `tc netem` is not available in this kernel (issue 5).
set -euo pipefail
: "${SCYLLA_LOADER_TOOLS:=${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/tools}"
TOXIPROXY_VERSION=v2.12.0
bin="$SCYLLA_LOADER_TOOLS/bin"
if [ -x "$bin/toxiproxy-server" ]; then
  exit 0
fi
command -v go >/dev/null 2>&1 || {
  echo "error: toxiproxy.sh needs Go to install toxiproxy-server (go install github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION); go is not on PATH" >&2
  exit 1
}
mkdir -p "$bin"
echo "installing toxiproxy-server $TOXIPROXY_VERSION into $bin" >&2
# The package is cmd/server, so go install names the binary `server`: build it into a scratch
# folder and move it under its own name, so no generic `server` lands on the tools' PATH.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
if ! GOBIN="$scratch" go install "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION"; then
  echo "error: go install github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION failed" >&2
  exit 1
fi
mv "$scratch/server" "$bin/toxiproxy-server"
