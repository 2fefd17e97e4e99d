#!/usr/bin/env bash
# Installs ONNX Runtime 1.30 for Node.js (npm onnxruntime-node, CPU library
# included) into <repo>/.cache/onnxruntime (git-ignored), or $NPUKIT_ORT_DIR.
# The package's install script only tries to download optional GPU binaries
# (which fails offline), so it is skipped with --ignore-scripts.
# Idempotent: does nothing when the right version is already there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${NPUKIT_ORT_DIR:-$root/.cache/onnxruntime}
version=1.30.0
pkg="$dir/node_modules/onnxruntime-node/package.json"
if [[ -f "$pkg" ]] && grep -q "\"version\": \"$version\"" "$pkg"; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "install-onnxruntime: npm not found (install the Debian package npm)" >&2
  exit 1
fi
mkdir -p "$dir"
echo "install-onnxruntime: installing onnxruntime-node@$version into $dir"
(cd "$dir" && [[ -f package.json ]] || echo '{"private": true}' > "$dir/package.json")
npm install --prefix "$dir" --ignore-scripts --no-audit --no-fund "onnxruntime-node@$version"
