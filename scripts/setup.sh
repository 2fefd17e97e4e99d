#!/usr/bin/env bash
# Installs the Debian packages of scripts/debian-packages.txt that are missing
# (needs root, as on CI), then configures and builds npukit in Release into
# build/ (or $NPUKIT_BUILD_DIR). Extra arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NPUKIT_BUILD_DIR:-$root/build}

missing=()
while read -r pkg; do
  [[ -z "$pkg" || "$pkg" == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done < "$root/scripts/debian-packages.txt"
# Node.js and npm (for ONNX Runtime) often come from another source (the
# machine's nodejs already bundles npm, and Debian's npm conflicts with it):
# only ask Debian when the commands are absent.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime for Node.js: the real system of the ONNX differential tests.
# Its download waits on the network, so it runs beside the build.
"$root/scripts/install-onnxruntime.sh" &
ort_install=$!

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build" --parallel "$(nproc)"
wait "$ort_install" || { echo "setup: installing ONNX Runtime failed" >&2; exit 1; }
