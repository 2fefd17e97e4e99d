// 32-bit bitwise operations and shifts of an NPU's BDC: AND, OR, XOR and the
// signed-count shifts (a positive count shifts left, a negative one right).
#pragma once

#include <cstdint>
#include <span>

namespace npukit {

enum class Int32Op : uint8_t {
  bit_and,
  bit_or,
  bit_xor,
  // a as int32: b > 0 shifts left by b; else right by -b filling with the
  // sign bit. A count of 32 shifts every bit out: left gives 0, right gives
  // 0 (a >= 0) or -1 (a < 0).
  arithmetic_shift,
  // a as uint32: b > 0 shifts left by b, else right by -b filling with 0;
  // a count of 32 gives 0 either way.
  logical_shift,
};

const char* int32_op_name(Int32Op op);

// One element; a and the result are raw 32-bit words. For the shifts b is the
// signed count, in [-32, 32] (npukit::Error otherwise).
uint32_t int32_op(Int32Op op, uint32_t a, uint32_t b);

// y[i] = op(a[i], b[i]); all of one length (y may alias a or b).
void int32_binary(Int32Op op, std::span<const uint32_t> a, std::span<const uint32_t> b,
                  std::span<uint32_t> y);

}  // namespace npukit
