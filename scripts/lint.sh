#!/usr/bin/env bash
# Runs clang-tidy (the checks of .clang-tidy) on npukit's C++ sources, using
# the compile commands of a configured build (build/ or $NPUKIT_BUILD_DIR).
# Exits non-zero on any warning.
#   scripts/lint.sh                 every source file (~2.2 CPU seconds a file, ~290 files:
#                                   ~5.5 minutes on 2 idle cores; scripts/test.sh runs it)
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
db=$(mktemp -d)
trap 'rm -rf "$log" "$db"' EXIT
# A unity-built target (the Python module always; the unit tests in builds
# without a compiler launcher) has only its unity files in the compile
# database: give each source such a file includes its own entry with the
# unity file's command, so that clang-tidy sees the target's flags.
# Precompiled headers (builds without a launcher) are dropped from the
# commands: clang cannot read g++'s, and each file is checked as written.
python3 - "$build/compile_commands.json" "$db/compile_commands.json" <<'PY'
import json, re, sys
entries = json.load(open(sys.argv[1]))
pch = re.compile(r" -Winvalid-pch| -fpch-instantiate-templates| (-Xclang )?-include(-pch)? (-Xclang )?\S*/cmake_pch\.[\w.]+")
out = []
for e in entries:
    if "command" in e:  # CMake's compile databases have commands, not argument lists
        e["command"] = pch.sub("", e["command"])
    out.append(e)
    if "/Unity/unity_" not in e["file"]:
        continue
    for line in open(e["file"]):
        m = re.match(r'#include "(.+)"', line.strip())
        if m:
            source = dict(e)
            for key in ("command", "arguments"):
                if key in source:
                    text = json.dumps(source[key]).replace(e["file"], m.group(1))
                    source[key] = json.loads(text)
            source["file"] = m.group(1)
            out.append(source)
json.dump(out, open(sys.argv[2], "w"))
PY
# clang-tidy's exit status also reports compile errors, which the log shows
# as errors; a file it could not read at all fails xargs (123/127): say so.
rc=0
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p "$db" --quiet >"$log" 2>/dev/null || rc=$?
if grep -E ': (warning|error):' "$log"; then
  echo "lint: clang-tidy found the problems above" >&2
  exit 1
fi
if ((rc != 0)); then
  echo "lint: clang-tidy exited with status $rc and no warning in its output" >&2
  exit 1
fi
echo "lint: ${#files[@]} files clean"
