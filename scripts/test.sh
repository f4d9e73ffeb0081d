#!/usr/bin/env bash
# Quick start, command 2: every check the project has (see README). CI runs exactly this.
#
# 1. scripts/setup.sh makes every environment a test needs (npm packages, the native module,
#    checking tools, the source photographs, the Python venv) and starts the local node, before
#    any test runs; its steps run side by side (see there).
# 2. The checks that need no database, two at a time (this project's machine has 2 cores):
#    types, build and the TypeScript unit tests beside format, lint, import cycles, proto lint
#    and the Python client's mypy and unit tests.
# 3. The integration tests: the Python client's beside the TypeScript files that check
#    correctness only (two of those at a time), then the TypeScript fault files alone, one at
#    a time (they bound stalls and memory growth, which work beside them would stretch).
# One suite alone: npm run typecheck | lint | test:unit | test:integration, or
# scripts/python-tests.sh (mypy and all of pytest; arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
scripts/setup.sh
echo "test: set-up done in $((SECONDS - started)) s"
# The tools scripts/tools/*.sh installed (kubeconform, hadolint, ...) come first on PATH.
export PATH="${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/tools/bin:$PATH"
venv=$(scripts/python-env.sh)

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
names=()
pids=()
# Starts a step in the background, its output kept for when it ends.
step() {
  local name=$1
  shift
  ("$@") >"$logs/$name.log" 2>&1 &
  names+=("$name")
  pids+=($!)
}
# Waits for the started steps in order, printing each one's output and time; fails if any did.
finish() {
  local failed=() i
  for i in "${!pids[@]}"; do
    local status=0
    wait "${pids[$i]}" || status=$?
    echo "----- ${names[$i]}: $([ "$status" -eq 0 ] && echo passed || echo "FAILED (exit $status)")"
    cat "$logs/${names[$i]}.log"
    [ "$status" -eq 0 ] || failed+=("${names[$i]}")
  done
  names=()
  pids=()
  if [ ${#failed[@]} -gt 0 ]; then
    echo "test: failed: ${failed[*]}" >&2
    exit 1
  fi
}
timed() {
  local name=$1 t=$SECONDS
  shift
  "$@"
  echo "test: $name passed in $((SECONDS - t)) s"
}

# Generated sources are current (setup.sh made them), so the steps below read them and none
# writes them while another reads.
checks=$SECONDS
step types-unit timed "types, build and TypeScript unit tests" \
  bash -c 'npm run -s typecheck:tsc && npm run -s build:tsc && npm run -s test:unit'
step lint-python timed "format, lint, import cycles, proto lint; Python mypy and unit tests" \
  bash -c 'npm run -s lint && cd clients/python && "$1/bin/mypy" &&
    "$1/bin/pytest" -q -p no:cacheprovider --durations=10 tests/unit' _ "$venv"
finish
echo "test: checks without a database done in $((SECONDS - checks)) s"

# The integration tests start the CLI from the build the checks above just made (about a CPU
# second less per start than through tsx; test/support/scripts.ts).
export SCYLLA_LOADER_TEST_CLI=build

# Integration tests, against the local node (or SCYLLA_LOADER_CONTACT_POINTS). The Python
# client's run beside the TypeScript files that assert correctness only; the fault files, whose
# tests bound stalls and memory growth in time, then run with nothing beside them.
t=$SECONDS
# Each Python test is bounded by pytest-timeout (pyproject.toml); the whole suite, which takes
# about 540 s on a fresh machine, by 1,800 s: past that it is interrupted (SIGINT, so pytest
# prints where it stood and what passed) and the step fails instead of taking CI's 90 minutes.
step python-integration timed "Python integration tests" \
  bash -c 'cd clients/python && timeout -s INT -k 60 1800 \
    "$1/bin/pytest" -q -p no:cacheprovider --durations=10 tests/integration' _ "$venv"
status=0
# Two files at a time: most of their time is spent waiting on a JVM, a child process or the
# database, so the second worker fills it (measured here: 430 s against 512 s one at a time).
npm run -s test:integration -- --exclude 'test/integration/faults*.test.ts' \
  --fileParallelism --maxWorkers=2 || status=$?
echo "test: TypeScript integration tests (but the fault files) ended in $((SECONDS - t)) s (exit $status)"
finish
[ "$status" -eq 0 ] || exit "$status"
timed "TypeScript fault tests" npm run -s test:integration -- test/integration/faults
echo "test: everything passed in $((SECONDS - started)) s"
