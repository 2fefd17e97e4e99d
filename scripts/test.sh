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

# Scratch space and background jobs are cleaned up however the script ends.
scratch=$(mktemp -d)
san_build=
tidy=
cleanup() {
  [[ -n "$san_build" ]] && kill -- "-$san_build" 2>/dev/null  # its process group: ninja and compilers
  [[ -n "$tidy" ]] && kill -- "-$tidy" 2>/dev/null            # its process group: clang-tidy
  rm -rf "$scratch"
}
trap cleanup EXIT
finish_background() {  # pid, log, what: waits, prints the log, stops the run on failure
  local rc=0
  wait "$1" || rc=$?
  cat "$2"
  ((rc == 0)) || { echo "test.sh: $3 failed (exit $rc)" >&2; exit 1; }
}

# CI builds treat warnings as errors (NPUKIT_WERROR).
"$root/scripts/setup.sh" -DNPUKIT_WERROR=ON
echo "== Format check (.clang-format; clang-format from scripts/debian-packages.txt)"
"$root/scripts/check-format.sh"

# clang-tidy (.clang-tidy's checks, scripts/lint.sh) on every source, at the
# lowest priority beside the tests and the sanitizer build below, like that
# build: ~3.5 CPU minutes (up to 8 files per clang-tidy process) that the
# tests leave mostly idle; its result is
# read after the sanitizer tests (docs/ci.md has the measured cost).
echo "== clang-tidy on every source (scripts/lint.sh), in the background at nice 19"
NPUKIT_BUILD_DIR="$build" setsid -w nice -n 19 "$root/scripts/lint.sh" >"$scratch/tidy.log" 2>&1 &
tidy=$!

# The sanitizer build (below) starts now at the lowest priority, beside the
# Release tests: it takes only the CPU time they leave (a core waiting on the
# last long test, process start-ups, I/O), and the tests keep their priority.
# One sanitizer build serves both jobs: clang instruments everything for
# ASan + UBSan and the code the fuzz targets run for libFuzzer's coverage
# (-fsanitize=fuzzer-no-link), the test programs run on it, and the fuzz
# targets link libFuzzer's main. -O1 with line tables only keeps the build
# short; sanitizer reports still name lines.
echo "== Configuring the ASan + UBSan build (clang), built in the background at nice 19"
san="$build-san"
CC=clang CXX=clang++ cmake -S "$root" -B "$san" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
  -DNPUKIT_SANITIZE=ON -DNPUKIT_FUZZ=ON -DNPUKIT_BUILD_PYTHON=OFF -DNPUKIT_BUILD_BENCH=OFF \
  -DNPUKIT_WERROR=ON
setsid -w nice -n 19 cmake --build "$san" --parallel "$jobs" >"$scratch/san-build.log" 2>&1 &
san_build=$!

echo "== Release test suite"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
echo "== Release unit and CLI suites again with the reference kernels forced (NPUKIT_IMPL=reference)"
# The *Fast suites, which run the fast kernels against the reference and check
# that they ran, report themselves skipped under this setting (with the reason;
# tests/unit/test_reference_switch.cpp).
NPUKIT_IMPL=reference ctest --test-dir "$build" --output-on-failure -j "$jobs" -L "unit|cli"

# Nothing runs in the foreground any more: the background jobs go back to
# normal priority. At nice 19 they get a few percent of a core beside each
# process of anyone else on a shared CI machine, and the run waits on them
# (docs/ci.md, session 16). Raising a priority needs root (as CI runs);
# elsewhere they stay at nice 19. A job that has already finished has no
# process group left to renice.
if ((EUID == 0)); then
  for job in "$san_build" "$tidy"; do renice -n 0 -g "$job" >/dev/null 2>&1 || true; done
else
  echo "test.sh: not root: the sanitizer build and clang-tidy stay at nice 19"
fi

echo "== ASan + UBSan build (the rest of it)"
finish_background "$san_build" "$scratch/san-build.log" "the sanitizer build"
san_build=
echo "== ASan + UBSan test suite (clang; the same build holds the libFuzzer targets)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$san" --output-on-failure -j "$jobs"

echo "== clang-tidy (started after the Release build)"
finish_background "$tidy" "$scratch/tidy.log" "clang-tidy (problems above)"
tidy=

echo "== libFuzzer: 4 targets, 60 seconds each (seed ${NPUKIT_FUZZ_SEED:=1}), $jobs at a time"
# Each target runs single-threaded for a fixed wall time, so on a 2-core
# machine two run side by side (same seconds and seed per target; 4 -> 2 min).
fuzz="$san"
# Seeds of the ONNX loader: the bundled and conformance models plus
# tests/fuzz/corpus (a minimized corpus from longer local runs). The other
# targets are seeded from their committed corpus (tests/fuzz/corpus_<name>).
# New inputs go to a scratch corpus per target.
mkdir -p "$scratch/seeds"
i=0
for m in "$root"/models/*.onnx "$root"/../shared/conformance/onnx-node/*/*/model.onnx; do
  [[ -f "$m" ]] && cp "$m" "$scratch/seeds/seed_$((i++)).onnx"
done
run_fuzzer() {  # target, then seed corpora; output to $scratch/<target>.log
  local target=$1
  shift
  mkdir -p "$scratch/new_$target"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$fuzz/tests/fuzz/npukit_fuzz_$target" -max_total_time=60 -seed="$NPUKIT_FUZZ_SEED" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 "$scratch/new_$target" "$@" >"$scratch/$target.log" 2>&1
}
fuzz_jobs=()
fuzz_failed=0
wait_fuzzer() {  # waits for the oldest running target and prints its log
  local entry=${fuzz_jobs[0]}
  fuzz_jobs=("${fuzz_jobs[@]:1}")
  local rc=0
  wait "${entry%%:*}" || rc=$?
  echo "-- npukit_fuzz_${entry#*:} (exit $rc)"
  cat "$scratch/${entry#*:}.log"
  ((rc == 0)) || fuzz_failed=1
}
for spec in onnx_loader:seeds npy_reader:npy ghp_isa:ghp yaml_golden:yaml; do
  target=${spec%%:*}
  if [[ $target == onnx_loader ]]; then
    run_fuzzer "$target" "$scratch/seeds" "$root/tests/fuzz/corpus" &
  else
    run_fuzzer "$target" "$root/tests/fuzz/corpus_${spec#*:}" &
  fi
  fuzz_jobs+=("$!:$target")
  ((${#fuzz_jobs[@]} < jobs)) || wait_fuzzer
done
while ((${#fuzz_jobs[@]})); do wait_fuzzer; done
((fuzz_failed == 0)) || { echo "test.sh: a fuzz target failed (see its log above)" >&2; exit 1; }
