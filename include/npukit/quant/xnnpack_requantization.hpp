// XNNPACK's requantization schemes for an int32 accumulator (facts from
// XNNPACK's src/qs8-requantization/*-scalar.c and params-init.c; this code is
// written from the formulas, not copied). The float scale is used as stored:
// its own 24-bit significand (hidden bit included) is the fixed-point
// multiplier, so no extra rounding happens when the multiplier is made.
//
//   fp32 (XNNPACK's default on x86, "lrintf" / "magic" variants agree):
//     y = lrintf(clamp(float(acc) * scale, qmin - zp, qmax - zp)) + zp
//     float(acc) and the product are fp32-rounded; lrintf rounds ties to even.
//   rndnu ("round to nearest, ties up"):
//     scale = m * 2^-s exactly, m in [2^23, 2^24), s = 150 - biased exponent in [24, 55]
//     y = clamp((acc*m + 2^(s-1)) >> s, qmin - zp, qmax - zp) + zp      (one exact rounding)
//   gemmlowp (XNNPACK's Q31 form):
//     m31 = m << 7 in [2^30, 2^31 - 128], r = 126 - biased exponent in [0, 31]
//     y = clamp(RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(acc, m31), r), ...) + zp
//
// rndnu and gemmlowp need 2^-32 <= scale < 1 (XNNPACK asserts it); fp32 takes
// scale in [2^-32, 256) (XNNPACK's conv parameter limit). Outside, npukit::Error.
#pragma once

#include <cstdint>

#include "npukit/quant/gemmlowp.hpp"
#include "npukit/quant/rounding.hpp"

namespace npukit {

// scale == mantissa * 2^-shift exactly.
struct XnnpackMantissaMultiplier {
  int32_t mantissa = 1 << 23;  // [2^23, 2^24)
  int shift = 24;              // [24, 55]
};
XnnpackMantissaMultiplier xnnpack_mantissa_multiplier(float scale);

// scale == multiplier * 2^-(31 + right_shift) exactly.
struct XnnpackQ31Multiplier {
  int32_t multiplier = 1 << 30;  // [2^30, 2^31 - 128], low 7 bits zero
  int right_shift = 0;           // [0, 31]
};
XnnpackQ31Multiplier xnnpack_q31_multiplier(float scale);

// Checks scale against the fp32 scheme's range [2^-32, 256).
void xnnpack_check_fp32_scale(float scale);

// The three schemes; the output is already clamped to [qmin, qmax].
inline int32_t xnnpack_requantize_rndnu(int32_t acc, XnnpackMantissaMultiplier m,
                                        int32_t zero_point, int32_t qmin, int32_t qmax) {
  // |acc * m| < 2^31 * 2^24: exact in int64.
  const int64_t scaled =
      shift_round(static_cast<int64_t>(acc) * m.mantissa, m.shift, Rounding::half_up);
  return static_cast<int32_t>(
      saturate(scaled, int64_t{qmin} - zero_point, int64_t{qmax} - zero_point) + zero_point);
}

inline int32_t xnnpack_requantize_gemmlowp(int32_t acc, XnnpackQ31Multiplier m, int32_t zero_point,
                                           int32_t qmin, int32_t qmax) {
  const int64_t scaled = rounding_divide_by_pot(
      saturating_rounding_doubling_high_mul(acc, m.multiplier), m.right_shift);
  return static_cast<int32_t>(
      saturate(scaled, int64_t{qmin} - zero_point, int64_t{qmax} - zero_point) + zero_point);
}

// Needs -ffp-contract=off (set for npukit) and the default rounding mode.
inline int32_t xnnpack_requantize_fp32(int32_t acc, float scale, int32_t zero_point, int32_t qmin,
                                       int32_t qmax) {
  const float scaled = static_cast<float>(acc) * scale;
  // Clamping before or after rounding is the same: both bounds are integers.
  const int64_t rounded = round_to_int(scaled, Rounding::half_to_even);
  return static_cast<int32_t>(
      saturate(rounded, int64_t{qmin} - zero_point, int64_t{qmax} - zero_point) + zero_point);
}

}  // namespace npukit
