#!/usr/bin/env bash
# Builds the native transform addon: native/scylla_loader_native.node.
# Needs Rust (cargo), a C compiler, cmake and nasm (libjpeg-turbo is built from the source
# vendored in turbojpeg-sys, with its SIMD code, which needs nasm).
# Debian/Ubuntu: apt-get install -y build-essential cmake nasm
set -euo pipefail
cd "$(dirname "$0")"

missing=()
command -v cargo >/dev/null || missing+=("cargo (Rust toolchain: https://rustup.rs)")
command -v cmake >/dev/null || missing+=("cmake (apt-get install -y cmake)")
command -v nasm >/dev/null || command -v yasm >/dev/null || missing+=("nasm (apt-get install -y nasm)")
command -v cc >/dev/null || missing+=("a C compiler (apt-get install -y build-essential)")
if ((${#missing[@]})); then
  echo "build.sh: cannot build the native addon, missing:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 1
fi

# CARGO_BUILD_JOBS (e.g. 1) limits the build's parallelism on a shared machine.
cargo build --release --locked
cp target/release/libscylla_loader_native.so scylla_loader_native.node
echo "built $(pwd)/scylla_loader_native.node"
