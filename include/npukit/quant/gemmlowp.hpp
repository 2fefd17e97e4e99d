// gemmlowp's fixed-point primitives (fixedpoint/fixedpoint.h), restated as
// exact rounding rules and checked against Debian's libgemmlowp-dev header
// bit for bit. A Q31 value v represents v / 2^31.
#pragma once

#include <cstdint>
#include <limits>

#include "npukit/quant/rounding.hpp"

namespace npukit {

// gemmlowp SaturatingRoundingDoublingHighMul: round(a*b / 2^31) with ties
// toward +inf (gemmlowp's nudge 1 - 2^30 for negative products makes a
// negative tie round up, e.g. a*b = -2^30 gives 0), and the single overflow
// case INT32_MIN * INT32_MIN saturated to INT32_MAX.
inline int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == std::numeric_limits<int32_t>::min() && b == a)
    return std::numeric_limits<int32_t>::max();
  const int64_t product = static_cast<int64_t>(a) * b;  // |a*b| <= 2^62: exact
  return static_cast<int32_t>(shift_round(product, 31, Rounding::half_up));
}

namespace detail {
[[noreturn]] void rounding_divide_by_pot_error(int exponent);
}

// gemmlowp RoundingDivideByPOT: round(x / 2^exponent), ties away from zero;
// exponent in [0, 31] (gemmlowp asserts the same range), else npukit::Error.
inline int32_t rounding_divide_by_pot(int32_t x, int exponent) {
  if (exponent < 0 || exponent > 31) detail::rounding_divide_by_pot_error(exponent);
  return static_cast<int32_t>(shift_round(x, exponent, Rounding::half_away_from_zero));
}

}  // namespace npukit
