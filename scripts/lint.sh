#!/usr/bin/env bash
# Runs clang-tidy (the checks of .clang-tidy) on npukit's C++ sources, using
# the compile commands of a configured build (build/ or $NPUKIT_BUILD_DIR).
# Extra arguments: files to check instead of all of them. Exits non-zero on any
# warning.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NPUKIT_BUILD_DIR:-$root/build}
[[ -f "$build/compile_commands.json" ]] || { echo "lint: configure a build first (scripts/setup.sh)" >&2; exit 1; }
cd "$root"
if (($#)); then files=("$@"); else mapfile -t files < <(git ls-files 'src/*.cpp' 'tools/*.cpp' 'python/*.cpp'); fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet >"$log" 2>/dev/null || true
if grep -E ': (warning|error):' "$log"; then
  echo "lint: clang-tidy found the problems above" >&2
  exit 1
fi
echo "lint: ${#files[@]} files clean"
