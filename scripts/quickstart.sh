#!/usr/bin/env bash
# README command 1: set up, build in Release, run the main job on its bundled default.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"${NPUKIT_BUILD_DIR:-$root/build}/bin/npukit" run
