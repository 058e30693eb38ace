#!/usr/bin/env bash
# Installs what building and testing Tailor needs, skipping whatever is already present.
# Used by both README commands (serve and test) and by CI; safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."

# The wasm-bindgen CLI must match the wasm-bindgen crate in Cargo.lock exactly.
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/[^0-9.]/, ""); print; exit}' Cargo.lock)
TRUNK_VERSION=0.21.14

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need_apt+=(chromium-driver)
[ -e /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || [ -e /usr/share/vulkan/icd.d/lvp_icd.json ] || need_apt+=(mesa-vulkan-drivers)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
# A small CJK font, so that screenshots of the (Chinese) page are legible in headless Chromium.
fc-list :lang=zh 2>/dev/null | grep -q . || need_apt+=(fonts-wqy-microhei)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "install-tools: apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

if ! rustup target list --installed | grep -q '^wasm32-unknown-unknown$'; then
  rustup target add wasm32-unknown-unknown
fi
rustup component list --installed | grep -q '^clippy' || rustup component add clippy
rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt

if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  echo "install-tools: cargo install wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  # The CLI's own Cargo.lock can pin a dependency version that the registry does not offer
  # (0.2.130 pins webpki-roots 1.0.11); then resolve its dependencies afresh.
  cargo install --locked wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" \
    || { echo "install-tools: locked install failed; retrying without --locked"
         cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"; }
fi

if [ "$(trunk --version 2>/dev/null | awk '{print $2}')" != "$TRUNK_VERSION" ]; then
  echo "install-tools: cargo install trunk $TRUNK_VERSION (unoptimised)"
  # Trunk only runs the build hooks, copies www/ and hashes the files: unoptimised it builds
  # the page as fast (2.3 s against 2.0 s with the wasm built) and installs in 163 s instead
  # of 410 s on a 2-core machine.
  cargo install --debug --locked "trunk@$TRUNK_VERSION"
fi

# The npm packages, all exact-pinned in package.json: the page's libraries (bundled into
# www/js/vendor/ during the page build) and playwright-core, which drives the system Chromium
# and never downloads a browser. `npm ci` whenever one is missing or at another version, so a
# checkout whose package.json moved on gets the new set.
npm_installed() {
  node -e '
    const { readFileSync } = require("node:fs");
    const { devDependencies } = JSON.parse(readFileSync("package.json", "utf8"));
    const installed = (name) => {
      try {
        return JSON.parse(readFileSync(`node_modules/${name}/package.json`, "utf8")).version;
      } catch {
        return null;
      }
    };
    const stale = Object.entries(devDependencies).filter(([name, version]) => installed(name) !== version);
    process.exit(stale.length === 0 ? 0 : 1);'
}
if ! npm_installed; then
  echo "install-tools: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
