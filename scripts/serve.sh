#!/usr/bin/env bash
# The README's serve command: installs what is missing, then builds the page and serves it at
# http://127.0.0.1:8080, rebuilding when src/, www/ or models/ change (see Trunk.toml).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-tools.sh
echo "serve: http://127.0.0.1:8080 (Ctrl+C to stop)"
exec trunk serve --release --address 127.0.0.1 --port 8080
