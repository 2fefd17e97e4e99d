#!/usr/bin/env bash
# README command 2: set up, build, and run the whole test suite twice: a
# Release build (unit, CLI and the Python differential suites against PyTorch
# and friends) and an AddressSanitizer + UndefinedBehaviorSanitizer build
# (unit and CLI suites; the Python module cannot load an ASan runtime into
# Debian's interpreter).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NPUKIT_BUILD_DIR:-$root/build}
jobs=$(nproc)

"$root/scripts/setup.sh"
echo "== Release test suite"
ctest --test-dir "$build" --output-on-failure -j "$jobs"

echo "== ASan + UBSan test suite"
asan="$build-asan"
cmake -S "$root" -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPUKIT_SANITIZE=ON \
  -DNPUKIT_BUILD_PYTHON=OFF -DNPUKIT_BUILD_BENCH=OFF
cmake --build "$asan" --parallel "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$asan" --output-on-failure -j "$jobs"
