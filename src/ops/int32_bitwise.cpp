#include "npukit/ops/int32_bitwise.hpp"

#include <algorithm>
#include <string>

#include "npukit/error.hpp"
#include "npukit/parallel.hpp"

namespace npukit {

const char* int32_op_name(Int32Op op) {
  switch (op) {
    case Int32Op::bit_and:
      return "and";
    case Int32Op::bit_or:
      return "or";
    case Int32Op::bit_xor:
      return "xor";
    case Int32Op::arithmetic_shift:
      return "arithmetic_shift";
    case Int32Op::logical_shift:
      return "logical_shift";
  }
  return "invalid";
}

uint32_t int32_op(Int32Op op, uint32_t a, uint32_t b) {
  switch (op) {
    case Int32Op::bit_and:
      return a & b;
    case Int32Op::bit_or:
      return a | b;
    case Int32Op::bit_xor:
      return a ^ b;
    default:
      break;
  }
  const int32_t count = static_cast<int32_t>(b);
  check_range("npukit::int32_op", "shift", count, -32, 32);
  if (count > 0) return count == 32 ? 0u : a << count;
  const int right = -count;
  if (op == Int32Op::logical_shift) return right == 32 ? 0u : a >> right;
  // Arithmetic right shift of the int32 (C++20: >> of a negative is floor).
  const int32_t s = static_cast<int32_t>(a);
  return static_cast<uint32_t>(right == 32 ? (s < 0 ? -1 : 0) : s >> right);
}

void int32_binary(Int32Op op, std::span<const uint32_t> a, std::span<const uint32_t> b,
                  std::span<uint32_t> y) {
  constexpr const char* fn = "npukit::int32_binary";
  check(b.size() == a.size(), fn, "b", std::to_string(b.size()) + " elements",
        std::to_string(a.size()) + " (a's)");
  check(y.size() == a.size(), fn, "y", std::to_string(y.size()) + " elements",
        std::to_string(a.size()) + " (a's)");
  constexpr size_t kBlock = 8192;
  parallel_for(static_cast<int64_t>((a.size() + kBlock - 1) / kBlock), [&](int64_t blk) {
    const size_t lo = static_cast<size_t>(blk) * kBlock;
    const size_t hi = std::min(a.size(), lo + kBlock);
    for (size_t i = lo; i < hi; ++i) y[i] = int32_op(op, a[i], b[i]);
  });
}

}  // namespace npukit
