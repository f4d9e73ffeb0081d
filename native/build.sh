#!/usr/bin/env bash
# Builds the native transform addon: native/scylla_loader_native.node.
# Needs Rust (cargo), a C compiler and cmake, and nasm for speed: libjpeg-turbo is built from
# the source vendored in turbojpeg-sys, with its SIMD code, which nasm assembles. Without nasm
# (or yasm) it is built without that code, with a warning: JPEG decoding is then slower (see
# README.md), the pixels the same.
# Debian/Ubuntu: apt-get install -y build-essential cmake nasm
set -euo pipefail
cd "$(dirname "$0")"

missing=()
command -v cargo >/dev/null || missing+=("cargo (Rust toolchain: https://rustup.rs)")
command -v cmake >/dev/null || missing+=("cmake (apt-get install -y cmake)")
command -v cc >/dev/null || missing+=("a C compiler (apt-get install -y build-essential)")
if ((${#missing[@]})); then
  echo "build.sh: cannot build the native addon, missing:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 1
fi

# A nasm (or yasm) that runs: one that is on PATH but fails is as good as none.
features=()
if ! nasm -v >/dev/null 2>&1 && ! yasm --version >/dev/null 2>&1; then
  echo "build.sh: warning: nasm not found: libjpeg-turbo is built without its SIMD code, so" \
    "JPEG decoding is slower; apt-get install -y nasm, then build again" >&2
  features=(--no-default-features)
fi

# CARGO_BUILD_JOBS (e.g. 1) limits the build's parallelism on a shared machine.
cargo build --release --locked "${features[@]}"
cp target/release/libscylla_loader_native.so scylla_loader_native.node
echo "built $(pwd)/scylla_loader_native.node"
