#include "npukit/quant/xnnpack_requantization.hpp"

#include <bit>
#include <cmath>

#include "real_text.hpp"

namespace npukit {

namespace {

// 2^-32 <= scale < upper, else an error naming the value and the range.
void check_scale(const char* function, float scale, float upper, const char* upper_text) {
  const float lower = std::ldexp(1.0f, -32);
  if (!(scale >= lower && scale < upper))
    fail(function, "scale", detail::real_text(scale),
         std::string("[2^-32, ") + upper_text + ") = [" + detail::real_text(lower) + ", " +
             detail::real_text(upper) + ")");
}

int biased_exponent(float scale) {
  return static_cast<int>(std::bit_cast<uint32_t>(scale) >> 23);
}
int32_t significand24(float scale) {
  return static_cast<int32_t>((std::bit_cast<uint32_t>(scale) & 0x007FFFFFu) | 0x00800000u);
}

}  // namespace

XnnpackMantissaMultiplier xnnpack_mantissa_multiplier(float scale) {
  check_scale("npukit::xnnpack_mantissa_multiplier", scale, 1.0f, "1");
  // A normal float is significand * 2^(biased exponent - 127 - 23).
  return {significand24(scale), 127 + 23 - biased_exponent(scale)};
}

XnnpackQ31Multiplier xnnpack_q31_multiplier(float scale) {
  check_scale("npukit::xnnpack_q31_multiplier", scale, 1.0f, "1");
  // significand << 7 is a Q31 value in [0.5, 1): scale = (m31 / 2^31) * 2^-(126 - exponent).
  return {significand24(scale) << 7, 126 - biased_exponent(scale)};
}

void xnnpack_check_fp32_scale(float scale) {
  check_scale("npukit::xnnpack_requantize_fp32", scale, 256.0f, "256");
}

}  // namespace npukit
