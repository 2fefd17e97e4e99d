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
# No -Wl,-rpath here: the .pc file's Libs must carry it (no LD_LIBRARY_PATH either).
c++ -std=c++20 "$src/main.cpp" -o "$work/pc_consumer" $flags
env -u LD_LIBRARY_PATH "$work/pc_consumer"
# The README's C++ example, as written, inside a main().
readme="$src/../../README.md"
{
  awk '/^```cpp$/{f=1; next} /^```$/{f=0} f && /^#include/' "$readme"
  echo "int main() {"
  awk '/^```cpp$/{f=1; next} /^```$/{f=0} f && !/^#include/' "$readme"
  echo "  return 0;"
  echo "}"
} >"$work/readme_example.cpp"
grep -q "npukit::" "$work/readme_example.cpp" || { echo "install check: no C++ example in README.md" >&2; exit 1; }
c++ -std=c++20 "$work/readme_example.cpp" -o "$work/readme_example" $flags
# From the repository root: the examples read models/ as a user in a clone would.
(cd "$src/../.." && env -u LD_LIBRARY_PATH "$work/readme_example")
echo "install check: find_package and pkg-config consumers and the README's C++ example passed"
