#include "npukit/quant/tflite_multiplier.hpp"

#include <cmath>

#include "real_text.hpp"

namespace npukit {

namespace {

using detail::real_text;

constexpr int kMinShift = -31, kMaxShift = 30;

// frexp-based decomposition before TFLite's flush / saturation rules.
QuantizedMultiplier decompose(double M, const char* fn) {
  check(std::isfinite(M) && M >= 0.0, fn, "multiplier", real_text(M), "a finite value >= 0");
  if (M == 0.0) return {};
  int shift = 0;
  const double q = std::frexp(M, &shift);  // M = q * 2^shift, q in [0.5, 1)
  // q * 2^31 is exact (a power-of-two scaling); TFLite rounds it with std::round.
  int64_t m = round_to_int(std::ldexp(q, 31), Rounding::half_away_from_zero);
  if (m == (int64_t{1} << 31)) {  // q rounded up to 1.0
    m /= 2;
    ++shift;
  }
  return {static_cast<int32_t>(m), shift};
}

}  // namespace

const char* tflite_rounding_name(TfliteRounding r) {
  return r == TfliteRounding::single_rounding ? "single_rounding" : "double_rounding";
}

TfliteRounding tflite_rounding_from_name(const std::string& name) {
  if (name == "double_rounding") return TfliteRounding::double_rounding;
  if (name == "single_rounding") return TfliteRounding::single_rounding;
  fail("npukit::tflite_rounding_from_name", "name", "'" + name + "'",
       "double_rounding, single_rounding");
}

QuantizedMultiplier quantize_multiplier(double M, TfliteRounding r) {
  QuantizedMultiplier q = decompose(M, "npukit::quantize_multiplier");
  if (q.shift < kMinShift) return {};  // TFLite flushes M < ~2^-32 to zero
  if (r == TfliteRounding::single_rounding && q.shift > kMaxShift)
    return {static_cast<int32_t>((int64_t{1} << 31) - 1), kMaxShift};  // TFLite saturates
  return q;
}

QuantizedMultiplier quantize_multiplier_checked(double M) {
  constexpr const char* fn = "npukit::quantize_multiplier_checked";
  const QuantizedMultiplier q = decompose(M, fn);
  if (M > 0.0 && (q.shift < kMinShift || q.shift > kMaxShift))
    fail(fn, "multiplier", real_text(M) + " (shift " + std::to_string(q.shift) + ")",
         "a multiplier whose shift is in [-31, 30], i.e. M in about [2^-32, 2^30) = [" +
             real_text(std::ldexp(1.0, -32)) + ", " + real_text(std::ldexp(1.0, 30)) + ")");
  return q;
}

namespace detail {

void tflite_shift_error(const char* function, int shift) {
  fail(function, "shift", std::to_string(shift), range_text(kMinShift, kMaxShift));
}

void tflite_overflow_error(const char* function, int32_t x, QuantizedMultiplier q) {
  fail(function, "x",
       std::to_string(x) + " (multiplier " + std::to_string(q.multiplier) + ", shift " +
           std::to_string(q.shift) + ")",
       "a value whose scaled result fits int32 (TFLite overflows here)");
}

void tflite_negative_multiplier_error(const char* function, int32_t m) {
  fail(function, "multiplier", std::to_string(m), range_text(0, 2147483647));
}

}  // namespace detail

}  // namespace npukit
