#!/usr/bin/env bash
# Trunk build hook (see Trunk.toml): compiles the library, never the CLI binary, to wasm32 and
# writes wasm-bindgen's ES module (tailor.js + tailor_bg.wasm) into Trunk's staging directory.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${TRUNK_PROFILE:-release}
staging_dir=${TRUNK_STAGING_DIR:?run through trunk (trunk build / trunk serve)}

expected=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/[^0-9.]/, ""); print; exit}' Cargo.lock)
actual=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')
if [ "$actual" != "$expected" ]; then
  echo "build-wasm: wasm-bindgen CLI ${actual:-missing}, Cargo.lock needs $expected; run bash scripts/install-tools.sh" >&2
  exit 1
fi

# --ignore-rust-version: see scripts/test.sh (RustPython's parser crates).
cargo_args=(build --ignore-rust-version --lib --target wasm32-unknown-unknown)
# A release page builds with Cargo.toml's `wasm-release` profile (dependencies optimised for
# size) and without the wasm name section (1.8 MB of function names, only for debuggers).
cargo_profile=debug
bindgen_args=()
if [ "$profile" = release ]; then
  cargo_profile=wasm-release
  cargo_args+=(--profile wasm-release)
  bindgen_args+=(--remove-name-section)
fi
# The CPU backend's matrix products (matrixmultiply) pick their wasm SIMD micro-kernel at
# compile time, and the block loops vectorise only with simd128 enabled; every browser
# with WebGPU runs wasm SIMD. `.cargo/config.toml` sets it for every wasm32 build, so the
# browser tests build with the page's flags and reuse its dependencies.
cargo "${cargo_args[@]}"

target_dir=$(cargo metadata --format-version 1 --no-deps | sed 's/.*"target_directory":"\([^"]*\)".*/\1/')
wasm-bindgen --target web --no-typescript "${bindgen_args[@]}" --out-name tailor \
  --out-dir "$staging_dir" "$target_dir/wasm32-unknown-unknown/$cargo_profile/tailor.wasm"
