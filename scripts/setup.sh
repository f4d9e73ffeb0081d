#!/usr/bin/env bash
# Shared set-up for the two Quick start commands: checks the tools the project needs and
# installs npm dependencies when node_modules is missing or older than package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "error: $1 is required ($2)" >&2; exit 1; }
}
need node "Node.js 20.19 or newer"
need npm "comes with Node.js"
need java "Java 17 runs the local Cassandra node"
need mvn "Maven fetches Cassandra's jars from Maven Central"

node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error(`error: Node.js ${process.versions.node} is too old; 20.19+ is required`); process.exit(1) }'

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # Install scripts stay off (package.json "allowScripts"): sharp, esbuild and protobufjs ship
  # what they need prebuilt, so nothing has to be approved.
  npm ci --no-audit --no-fund
fi
