#!/usr/bin/env bash
# Follows docs/npu-simulator.md "Building and running an existing kernel, step
# by step" against an installed npukit: the depthwise kernel of this directory
# through find_package + npukit_add_okkernel, a rule-violating kernel through
# pkg-config (default mode: the message on stderr and exit status 255).
set -euo pipefail
build=$1 src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/npukit
cmake --install "$build" --prefix "$prefix" >/dev/null

# CMake: the CMakeLists.txt of the docs.
mkdir "$work/kernel"
cp "$src/depthwise_device.c" "$src/depthwise_host.cpp" "$src/contest_check.hpp" "$work/kernel/"
cat >"$work/kernel/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(my_okkernel C CXX)
find_package(npukit REQUIRED)
npukit_add_okkernel(depthwise DEVICE depthwise_device.c HOST depthwise_host.cpp)
CM
cmake -S "$work/kernel" -B "$work/kernel/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/kernel/build" >/dev/null
"$work/kernel/build/depthwise" | tail -1

# pkg-config: the commands of the docs.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cd "$work"
cp "$src/depthwise_device.c" "$src/depthwise_host.cpp" "$src/contest_check.hpp" .
cc -c depthwise_device.c $(pkg-config --cflags npukit-okk)
c++ depthwise_host.cpp depthwise_device.o -o depthwise $(pkg-config --cflags --libs npukit-okk) -Wl,-rpath,"$prefix/lib"
test -x depthwise  # the same program already ran above, built through CMake
cp "$src/violation/bad_device.c" "$src/violation/bad_host.cpp" .
cc -c bad_device.c $(pkg-config --cflags npukit-okk)
c++ bad_host.cpp bad_device.o -o bad $(pkg-config --cflags --libs npukit-okk) -Wl,-rpath,"$prefix/lib"
set +e
./bad 2>"$work/stderr.txt"
status=$?
set -e
cat "$work/stderr.txt"
expected="npukit NPU rule violated: kernel 'bad_kernel': okk_bdc_avg_pool2d: parameter 'output_addr' = 100 (0x64) is not allowed (allowed: divisible by 128)"
if [ "$status" -ne 255 ] || ! grep -qF "$expected" "$work/stderr.txt"; then
  echo "FAIL: expected exit status 255 and: $expected (got status $status)"
  exit 1
fi
echo "install check (okk): find_package and pkg-config kernels passed, violation exit status 255"
