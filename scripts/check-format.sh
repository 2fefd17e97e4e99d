#!/usr/bin/env bash
# Checks that every C/C++ file in the repository is formatted with the
# repository's .clang-format (clang-format 14, Debian's clang-format package).
# With --fix, formats them in place instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' ':!:tests/fuzz/corpus/*')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/npukit-format.$$; then
  grep -E '^[^ ].*: (warning|error):' /tmp/npukit-format.$$ | cut -d: -f1 | sort -u |
    sed 's/^/check-format: not formatted: /' >&2
  rm -f /tmp/npukit-format.$$
  echo "check-format: run scripts/check-format.sh --fix" >&2
  exit 1
fi
rm -f /tmp/npukit-format.$$
echo "check-format: ${#files[@]} files formatted"
