#!/usr/bin/env bash
# Runs clang-tidy (the checks of .clang-tidy) on npukit's C++ sources, using
# the compile commands of a configured build (build/ or $NPUKIT_BUILD_DIR).
# Exits non-zero on any warning.
#   scripts/lint.sh                 every source file (~300 files, in ~70 clang-tidy runs;
#                                   scripts/test.sh runs it)
#   scripts/lint.sh --changed [REF] the sources changed since the merge base of HEAD
#                                   and REF (default main), plus uncommitted ones
#   scripts/lint.sh FILE...         those files
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NPUKIT_BUILD_DIR:-$root/build}
[[ -f "$build/compile_commands.json" ]] || { echo "lint: configure a build first (scripts/setup.sh)" >&2; exit 1; }
command -v clang-tidy >/dev/null || { echo "lint: clang-tidy is not installed (scripts/debian-packages.txt)" >&2; exit 1; }
cd "$root"
sources=('src/*.cpp' 'tools/*.cpp' 'python/*.cpp')
if [[ ${1:-} == --changed ]]; then
  ref=${2:-main}
  base=$(git merge-base HEAD "$ref" 2>/dev/null) || {
    echo "lint: no merge base of HEAD and '$ref': nothing checked (name a ref: --changed REF)" >&2
    exit 1
  }
  # Committed since the base, staged, unstaged; deleted files dropped.
  mapfile -t files < <(git diff --name-only --diff-filter=d "$base" -- "${sources[@]}")
  if ((${#files[@]} == 0)); then
    echo "lint: no source changed since $(git rev-parse --short "$base") ($ref)"
    exit 0
  fi
elif (($#)); then
  files=("$@")
else
  mapfile -t files < <(git ls-files "${sources[@]}")
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Files of one directory and one compile command are checked several to a
# clang-tidy process (scripts/lint_units.py says how and what it costs);
# NPUKIT_LINT_GROUP=1 checks each file in a process of its own.
rc=0
python3 "$root/scripts/lint_units.py" "$build" "$(nproc)" "${NPUKIT_LINT_GROUP:-8}" "${files[@]}" >"$log" || rc=$?
if grep -E ': (warning|error):' "$log"; then
  echo "lint: clang-tidy found the problems above" >&2
  exit 1
fi
if ((rc != 0)); then
  echo "lint: clang-tidy exited with status $rc and no warning in its output" >&2
  exit 1
fi
echo "lint: ${#files[@]} files clean"
