#!/usr/bin/env bash
# Vendors the graph layout library the page draws graphs with: @dagrejs/dagre's ES module
# build (graphlib included, no dependencies) into www/js/vendor/, so the page stays a static
# site without a bundler. Run it to move to another version (and commit the result); the page
# build itself never downloads anything.
set -euo pipefail
cd "$(dirname "$0")/.."
version=3.1.3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "@dagrejs/dagre@$version" > /dev/null && tar xzf dagrejs-dagre-$version.tgz)
mkdir -p www/js/vendor
sed -e '/^\/\/# sourceMappingURL/d' \
  -e "s|/\*! For license information please see dagre.esm.js.LEGAL.txt \*/|/*! @dagrejs/dagre $version (MIT): license in dagre.LICENSE.txt; vendored by scripts/vendor-dagre.sh */|" \
  "$work/package/dist/dagre.esm.js" > www/js/vendor/dagre.esm.js
cp "$work/package/dist/dagre.esm.js.LEGAL.txt" www/js/vendor/dagre.LICENSE.txt
echo "vendored @dagrejs/dagre $version into www/js/vendor/"
