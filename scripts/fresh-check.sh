#!/usr/bin/env bash
# The fresh-machine check: clones the current commit into a temporary folder and runs both Quick
# start commands there as a new user would, with every cache empty (HOME and XDG_CACHE_HOME
# point at a new folder, so npm's, pip's, Maven's, Go's and cargo's caches, the project's own
# cache and the local node all start from nothing), and prints the time of each.
#
#   scripts/fresh-check.sh [--warm] [--no-nasm] [--keep] [--dir <folder>]
#
#   --warm    then run both commands once more in the same clone (the warm times)
#   --no-nasm as on a machine without nasm (a fresh Debian has none): the commands see no nasm
#             (nor yasm) until the set-up has installed it with apt-get, which then really
#             downloads and unpacks it again (see no_nasm_shim below)
#   --keep    keep the folder afterwards (it is kept anyway when a command failed)
#   --dir     where to make the folder (default: a new one under ${TMPDIR:-/tmp})
#
# It is not part of the test command: it downloads gigabytes (torch for the Python client's
# tests, Cassandra's jars, the checking tools' sources) and takes as long as the two commands.
# Only committed work is checked: uncommitted changes are not in the clone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
warm=false
no_nasm=false
keep=false
base="${TMPDIR:-/tmp}"
while [ $# -gt 0 ]; do
  case "$1" in
    --warm) warm=true ;;
    --no-nasm) no_nasm=true ;;
    --keep) keep=true ;;
    --dir)
      base="${2:?--dir needs a folder}"
      shift
      ;;
    *)
      echo "usage: scripts/fresh-check.sh [--warm] [--no-nasm] [--keep] [--dir <folder>]" >&2
      exit 2
      ;;
  esac
  shift
done

commit=$(git -C "$root" rev-parse HEAD)
if [ -n "$(git -C "$root" status --porcelain)" ]; then
  echo "fresh-check: note: uncommitted changes are not checked (the clone is of $commit)" >&2
fi
# The clone's local node binds the default CQL and storage ports; a node of this checkout (or
# any other) on them would make its start fail for a reason a fresh machine does not have.
for port in 9042 7000; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "fresh-check: 127.0.0.1:$port is in use (a local node? stop it with" \
      "\`npx tsx src/cli/main.ts db stop\`); the clone's node needs it" >&2
    exit 1
  fi
done

mkdir -p "$base"
work=$(mktemp -d "$base/scylla-loader-fresh-XXXXXX")
repo="$work/repo"
fresh_home="$work/home"
mkdir -p "$fresh_home"
git clone --quiet --no-hardlinks "$root" "$repo"
git -C "$repo" checkout --quiet "$commit"

# Configuration a machine's user has (not caches) comes along: npm's and git's settings.
for f in .npmrc .gitconfig; do
  [ -f "$HOME/$f" ] && cp "$HOME/$f" "$fresh_home/$f"
done
# Toolchains installed per user stay where they are (they are the machine, not a cache):
# rustup's toolchains and pyenv's Pythons are found through these, whatever HOME is.
toolchains=(RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}")
if [ -d "${PYENV_ROOT:-$HOME/.pyenv}" ]; then
  toolchains+=(PYENV_ROOT="${PYENV_ROOT:-$HOME/.pyenv}")
fi

# --no-nasm: a folder put first on PATH whose nasm and yasm fail as a missing command would
# (the set-up and native/build.sh run `nasm -v` to find one, and cmake runs what it finds), and
# whose apt-get is the real one, except that installing nasm reinstalls it (the download and
# unpacking a fresh machine pays; apt-get update runs as it would) and then lets the folder's
# nasm run the real one. nasm cannot simply be left off PATH: it is in /usr/bin.
no_nasm_shim() {
  local shim=$1 real_nasm real_apt tool
  real_nasm=$(command -v nasm || true)
  real_apt=$(command -v apt-get || true)
  mkdir -p "$shim"
  for tool in nasm yasm; do
    cat >"$shim/$tool" <<EOF
#!/bin/sh
# fresh-check --no-nasm: $tool is missing until apt-get has installed nasm.
if [ "$tool" = nasm ] && [ -f "$shim/.installed" ] && [ -n "$real_nasm" ]; then
  exec "$real_nasm" "\$@"
fi
echo "$tool: command not found (fresh-check --no-nasm)" >&2
exit 127
EOF
  done
  cat >"$shim/apt-get" <<EOF
#!/usr/bin/env bash
# fresh-check --no-nasm: the real apt-get; installing nasm reinstalls it, then makes it visible.
args=("\$@")
case " \$* " in
  *" install "*" nasm "*) nasm=true args=(--reinstall "\${args[@]}") ;;
  *) nasm=false ;;
esac
"$real_apt" "\${args[@]}" || exit
if \$nasm; then touch "$shim/.installed"; fi
EOF
  chmod +x "$shim/nasm" "$shim/yasm" "$shim/apt-get"
}
path="$PATH"
if $no_nasm; then
  [ "$(id -u)" -eq 0 ] || { echo "fresh-check: --no-nasm needs root (its apt-get is real)" >&2; exit 2; }
  no_nasm_shim "$work/no-nasm"
  path="$work/no-nasm:$PATH"
fi

fresh() {
  env -u SCYLLA_LOADER_CACHE_DIR -u SCYLLA_LOADER_PYTHON -u SCYLLA_LOADER_BENCH_PYTHON \
    -u SCYLLA_LOADER_CONTACT_POINTS -u PIP_CACHE_DIR -u GOPATH -u GOMODCACHE -u GOCACHE \
    -u CARGO_HOME -u MAVEN_OPTS \
    HOME="$fresh_home" XDG_CACHE_HOME="$fresh_home/.cache" npm_config_cache="$fresh_home/.npm" \
    PATH="$path" \
    "${toolchains[@]}" "$@"
}

results=()
failed=false
run() {
  local label=$1 command=$2 log="$work/$1.log"
  echo "fresh-check: $label: $command (log $log)"
  local started=$SECONDS status
  set +e
  (cd "$repo" && fresh "$command") 2>&1 | tee "$log" | sed -u "s/^/[$label] /"
  status=${PIPESTATUS[0]}
  set -e
  local took=$((SECONDS - started))
  local verdict=passed
  if [ "$status" -ne 0 ]; then
    verdict="FAILED (exit $status)"
    failed=true
  fi
  results+=("$(printf '%-10s %-17s %s in %dm%02ds' "$label" "$command" "$verdict" $((took / 60)) $((took % 60)))")
  echo "fresh-check: $label: $verdict in $((took / 60))m$((took % 60))s"
}

started_all=$SECONDS
run demo-cold scripts/demo.sh
run test-cold scripts/test.sh
if $warm; then
  run demo-warm scripts/demo.sh
  run test-warm scripts/test.sh
fi
downloaded=$(du -sh "$fresh_home" 2>/dev/null | cut -f1)

# The node the commands started outlives them by design; this clone's must not.
(cd "$repo" && fresh npx tsx src/cli/main.ts db stop) >/dev/null 2>&1 || true

echo
echo "fresh-check of $commit ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores$($no_nasm && echo ', nasm absent until the set-up installed it')):"
printf '  %s\n' "${results[@]}"
echo "  caches made from nothing: $downloaded in $fresh_home; all in $(((SECONDS - started_all) / 60))m$(((SECONDS - started_all) % 60))s"
if $failed || $keep; then
  echo "  kept $work (logs: $work/*.log)"
else
  rm -rf "$work"
fi
! $failed
