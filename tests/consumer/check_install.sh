#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds and runs a consumer
# twice: through find_package(npukit) and through pkg-config.
set -euo pipefail
build=$1 src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src" -B "$work/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/consumer"
"$work/cmake/consumer_static"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
flags=$(pkg-config --cflags --libs npukit)
c++ -std=c++20 "$src/main.cpp" -o "$work/pc_consumer" $flags -Wl,-rpath,"$work/prefix/lib"
"$work/pc_consumer"
echo "install check: find_package and pkg-config consumers passed"
