// TFLite's fixed-point requantization multiplier (kernels/internal:
// QuantizeMultiplier and MultiplyByQuantizedMultiplier), in its two builds:
//
//   double rounding (the default, gemmlowp based):
//     left = max(shift, 0), right = max(-shift, 0)
//     y = RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x * 2^left, m), right)
//   single rounding (built with TFLITE_SINGLE_ROUNDING):
//     y = floor((x*m + 2^(30 - shift)) / 2^(31 - shift))     (one rounding, ties toward +inf)
//     with 0 <= m and -31 <= shift <= 30; TFLite only debug-checks that y fits int32.
//
// In both, the real multiplier is M = m * 2^(shift - 31), m in [2^30, 2^31).
#pragma once

#include <cstdint>

#include "npukit/quant/gemmlowp.hpp"
#include "npukit/quant/rounding.hpp"

namespace npukit {

struct QuantizedMultiplier {
  int32_t multiplier = 0;  // Q31 mantissa in [2^30, 2^31), or 0 for M = 0
  int shift = 0;           // M = multiplier * 2^(shift - 31); > 0 is a left shift
};

enum class TfliteRounding : uint8_t { double_rounding, single_rounding };
const char* tflite_rounding_name(TfliteRounding r);  // "double_rounding", "single_rounding"
TfliteRounding tflite_rounding_from_name(const std::string& name);

// TFLite QuantizeMultiplier, bit for bit: q = frexp(M) in [0.5, 1),
// m = round_half_away(q * 2^31); m = 2^31 becomes 2^30 with shift + 1; a shift
// below -31 flushes to {0, 0} (M < ~2^-32); with single rounding a shift above
// 30 saturates to {2^31 - 1, 30}. Errors: M negative, NaN or infinite.
QuantizedMultiplier quantize_multiplier(double M,
                                        TfliteRounding r = TfliteRounding::double_rounding);

// The same decomposition, but a multiplier TFLite would flush to zero or
// saturate is an npukit::Error naming M and the representable range
// (shift in [-31, 30], i.e. M in about [2^-32, 2^30)).
QuantizedMultiplier quantize_multiplier_checked(double M);

namespace detail {
[[noreturn]] void tflite_shift_error(const char* function, int shift);
[[noreturn]] void tflite_overflow_error(const char* function, int32_t x, QuantizedMultiplier q);
[[noreturn]] void tflite_negative_multiplier_error(const char* function, int32_t m);
}  // namespace detail

// TFLite MultiplyByQuantizedMultiplier (default double-rounding build). Errors
// where TFLite has undefined behaviour: shift outside [-31, 30] and x * 2^shift
// (for shift > 0) outside int32.
inline int32_t multiply_by_quantized_multiplier(int32_t x, QuantizedMultiplier q) {
  constexpr const char* fn = "npukit::multiply_by_quantized_multiplier";
  if (q.shift < -31 || q.shift > 30) detail::tflite_shift_error(fn, q.shift);
  const int left = q.shift > 0 ? q.shift : 0, right = q.shift > 0 ? 0 : -q.shift;
  const int64_t shifted = static_cast<int64_t>(x) * (int64_t{1} << left);
  if (shifted != static_cast<int32_t>(shifted)) detail::tflite_overflow_error(fn, x, q);
  return rounding_divide_by_pot(
      saturating_rounding_doubling_high_mul(static_cast<int32_t>(shifted), q.multiplier), right);
}

// TFLite MultiplyByQuantizedMultiplier built with TFLITE_SINGLE_ROUNDING (see
// the formula above). Errors: multiplier < 0, shift outside [-31, 30], and a
// result outside int32 (TFLite's debug check).
inline int32_t multiply_by_quantized_multiplier_single_rounding(int32_t x, QuantizedMultiplier q) {
  constexpr const char* fn = "npukit::multiply_by_quantized_multiplier_single_rounding";
  if (q.multiplier < 0) detail::tflite_negative_multiplier_error(fn, q.multiplier);
  if (q.shift < -31 || q.shift > 30) detail::tflite_shift_error(fn, q.shift);
  // |x * m| <= 2^31 * (2^31 - 1) < 2^62: exact in int64.
  const int64_t y =
      shift_round(static_cast<int64_t>(x) * q.multiplier, 31 - q.shift, Rounding::half_up);
  if (y != static_cast<int32_t>(y)) detail::tflite_overflow_error(fn, x, q);
  return static_cast<int32_t>(y);
}

// Dispatch on the build variant (a data field of a requantization scheme).
inline int32_t multiply_by_quantized_multiplier(int32_t x, QuantizedMultiplier q,
                                                TfliteRounding r) {
  return r == TfliteRounding::single_rounding
             ? multiply_by_quantized_multiplier_single_rounding(x, q)
             : multiply_by_quantized_multiplier(x, q);
}

}  // namespace npukit
