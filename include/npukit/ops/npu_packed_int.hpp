// Packed fixed-point arithmetic of an NPU's BDC (8-bit and 16-bit lanes):
// add, sub, mul, mac, max, min with signedness per operand, a rounding right
// shift and saturation to the result type. Values are carried as int32
// (each already sign- or zero-extended from its type).
#pragma once

#include <cstdint>
#include <span>

namespace npukit {

enum class FixedType : uint8_t { s8, u8, s16, u16 };

const char* fixed_type_name(FixedType t);
int fixed_bits(FixedType t);  // 8 or 16
bool fixed_signed(FixedType t);
int64_t fixed_min(FixedType t);
int64_t fixed_max(FixedType t);

enum class FixedOp : uint8_t {
  add,  // a + b
  sub,  // a - b
  mul,  // a * b
  mac,  // old * 2^lshift + a * b (old: the destination's previous value)
  max,  // max(a, b)
  min,  // min(a, b)
};

const char* fixed_op_name(FixedOp op);

struct FixedPointParams {
  FixedType a = FixedType::s8, b = FixedType::s8, y = FixedType::s8;
  FixedType old = FixedType::s16;  // mac: the type of the previous destination
  // The exact result r (int64) becomes (r + 2^(rshift-1)) >> rshift, an
  // arithmetic shift: round half up (toward +inf). rshift in [0, 31].
  int rshift = 0;
  int lshift = 0;  // mac only, [0, 14]
  // true: clamp to y's range; false: keep y's low bits (wrap).
  bool saturate = true;
};

// One element. a, b and old must lie in their types' ranges (npukit::Error otherwise).
int32_t fixed_point_op(FixedOp op, int32_t a, int32_t b, int32_t old, const FixedPointParams& p);

// y[i] = op(a[i], b[i], old[i]); old is read only for mac (may be empty otherwise).
void fixed_point_binary(FixedOp op, std::span<const int32_t> a, std::span<const int32_t> b,
                        std::span<const int32_t> old, std::span<int32_t> y,
                        const FixedPointParams& p);

// Shift of a packed value of type t (s8/s16: arithmetic, u8/u16: logical) by
// a signed count in [-bits, bits]: a positive count shifts left keeping the
// type's low bits (read back as t), a negative one right (sign or zero fill);
// a count of +-bits shifts every bit out.
int32_t fixed_shift(FixedType t, int32_t a, int32_t count);

// y[i] = x[i] as fp32 (exact for 8- and 16-bit values).
void fixed_to_f32(std::span<const int32_t> x, std::span<float> y);

}  // namespace npukit
