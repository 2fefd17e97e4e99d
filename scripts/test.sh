#!/usr/bin/env bash
# README command 2: set up, build, and run the whole test suite twice: a
# Release build (unit, CLI and the Python differential suites against PyTorch
# and friends) and an AddressSanitizer + UndefinedBehaviorSanitizer build with
# clang (unit and CLI suites; the Python module cannot load an ASan runtime
# into Debian's interpreter), then the libFuzzer targets of that same build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NPUKIT_BUILD_DIR:-$root/build}
jobs=$(nproc)

# CI builds treat warnings as errors (NPUKIT_WERROR).
"$root/scripts/setup.sh" -DNPUKIT_WERROR=ON
echo "== Format check (.clang-format; clang-format from scripts/debian-packages.txt)"
"$root/scripts/check-format.sh"
echo "== Release test suite"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
echo "== Release unit and CLI suites again with the reference kernels forced (NPUKIT_IMPL=reference)"
# The *Fast suites are left out: they exist to run the fast kernels against
# the reference and check that the fast ones ran, which this setting forbids.
NPUKIT_IMPL=reference ctest --test-dir "$build" --output-on-failure -j "$jobs" -L "unit|cli" \
  -E 'Fast\.'

echo "== ASan + UBSan test suite (clang; the same build holds the libFuzzer targets)"
# One sanitizer build serves both jobs: clang instruments the library for
# ASan + UBSan and for libFuzzer's coverage (-fsanitize=fuzzer-no-link), the
# test programs run on it, and the fuzz targets link libFuzzer's main. -O1 with
# line tables only keeps the build short; sanitizer reports still name lines.
san="$build-san"
CC=clang CXX=clang++ cmake -S "$root" -B "$san" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
  -DNPUKIT_SANITIZE=ON -DNPUKIT_FUZZ=ON -DNPUKIT_BUILD_PYTHON=OFF -DNPUKIT_BUILD_BENCH=OFF \
  -DNPUKIT_WERROR=ON
cmake --build "$san" --parallel "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$san" --output-on-failure -j "$jobs"

echo "== libFuzzer: the ONNX loader for 60 seconds (seed ${NPUKIT_FUZZ_SEED:=1})"
fuzz="$san"
# Seeds: the bundled and conformance models plus tests/fuzz/corpus (a minimized
# corpus from longer local runs); new inputs go to a scratch corpus.
corpus=$(mktemp -d)
seeds=$(mktemp -d)
trap 'rm -rf "$corpus" "$seeds"' EXIT
i=0
for m in "$root"/models/*.onnx "$root"/../shared/conformance/onnx-node/*/*/model.onnx; do
  [[ -f "$m" ]] && cp "$m" "$seeds/seed_$((i++)).onnx"
done
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$fuzz/tests/fuzz/npukit_fuzz_onnx_loader" -max_total_time=60 -seed="$NPUKIT_FUZZ_SEED" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus" "$seeds" "$root/tests/fuzz/corpus"

echo "== libFuzzer: the npy reader, GHP instruction readers and YAML golden reader, 60 seconds each"
# Each seeded from its committed corpus (tests/fuzz/corpus_<name>); new inputs go to scratch.
for target in npy:npy_reader ghp:ghp_isa yaml:yaml_golden; do
  scratch=$(mktemp -d)
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$fuzz/tests/fuzz/npukit_fuzz_${target#*:}" -max_total_time=60 -seed="$NPUKIT_FUZZ_SEED" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 "$scratch" "$root/tests/fuzz/corpus_${target%%:*}"
  rm -rf "$scratch"
done
