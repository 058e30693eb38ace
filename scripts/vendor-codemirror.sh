#!/usr/bin/env bash
# Vendors the page's code editor: CodeMirror 6 (with Python highlighting and lint marks),
# bundled once by esbuild from scripts/codemirror/entry.mjs into one minified ES module,
# www/js/vendor/codemirror.esm.js, and its packages' licences into codemirror.LICENSE.txt.
# scripts/codemirror/package-lock.json pins every package (esbuild too), so a re-run gives
# the same bytes. Run it to move to other versions (edit package.json, refresh the lock with
# `npm install --package-lock-only` there, commit the results); the page build itself never
# downloads anything.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp scripts/codemirror/package.json scripts/codemirror/package-lock.json scripts/codemirror/entry.mjs "$work/"
(cd "$work" && npm ci --silent --no-audit --no-fund > /dev/null)
versions=$(cd "$work" && node -e '
  const lock = require("./package-lock.json").packages;
  const top = Object.keys(require("./package.json").dependencies).filter((name) => name !== "esbuild");
  console.log(top.map((name) => `${name} ${lock["node_modules/" + name].version}`).join(", "));')
esbuild_version=$("$work/node_modules/.bin/esbuild" --version)
mkdir -p www/js/vendor
"$work/node_modules/.bin/esbuild" "$work/entry.mjs" --bundle --format=esm --minify \
  --target=es2020 --legal-comments=none --log-level=warning \
  --banner:js="/*! CodeMirror 6 for Tailor's page: $versions (MIT; licences in codemirror.LICENSE.txt); bundled by esbuild $esbuild_version in scripts/vendor-codemirror.sh */" \
  --metafile="$work/meta.json" --outfile=www/js/vendor/codemirror.esm.js
node scripts/codemirror/licenses.mjs "$work/meta.json" "$work/node_modules" > www/js/vendor/codemirror.LICENSE.txt
echo "vendored CodeMirror ($versions) into www/js/vendor/"
