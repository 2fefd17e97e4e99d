// Exact integer rounding: of a quotient, of an arithmetic right shift and of a
// float, for every rule real systems use (docs/semantics.md, "Rounding and requantization").
// Everything here is exact: no intermediate is rounded and no intermediate can overflow; a result
// that does not fit int64 is an npukit::Error.
//
// All three functions first find the floor of the exact value and classify the
// remaining fraction (zero, below one half, exactly one half, above one half);
// one shared rule table then picks the result, so the tie rules are written
// once.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "npukit/error.hpp"

namespace npukit {

enum class Rounding : uint8_t {
  half_to_even,         // nearest, ties to the even neighbour (IEEE default, ONNX, nearbyint)
  half_up,              // nearest, ties toward +inf: floor(v + 1/2) (GHP RTL, BM168x, CVM)
  half_down,            // nearest, ties toward -inf: ceil(v - 1/2)
  half_away_from_zero,  // nearest, ties away from zero (std::round, gemmlowp, GHP golden)
  half_toward_zero,     // nearest, ties toward zero
  toward_zero,          // truncate (C integer division, MiCo)
  floor,                // toward -inf (arithmetic right shift, MRT quantize)
  ceil,                 // toward +inf
};

const char* rounding_name(Rounding r);  // "half_to_even", ...
// Accepts the names of rounding_name (and "truncate" for toward_zero); throws
// npukit::Error listing the choices otherwise.
Rounding rounding_from_name(const std::string& name);
const std::vector<Rounding>& all_roundings();
std::string rounding_names();  // "half_to_even, half_up, ..."

namespace detail {

// Where the exact value v lies relative to q = floor(v).
enum class Fraction : uint8_t { zero, below_half, half, above_half };

// The rounded value of v from q = floor(v) and the class of v - q. The caller
// guarantees that q + 1 does not overflow when the fraction is non-zero.
constexpr int64_t round_from_floor(int64_t q, Fraction f, Rounding r) {
  if (f == Fraction::zero) return q;
  const int64_t up = q + 1;
  switch (r) {
    case Rounding::floor:
      return q;
    case Rounding::ceil:
      return up;
    case Rounding::toward_zero:
      return q < 0 ? up : q;  // v is negative exactly when q < 0
    default:
      break;
  }
  if (f == Fraction::below_half) return q;
  if (f == Fraction::above_half) return up;
  switch (r) {  // an exact tie v = q + 1/2
    case Rounding::half_to_even:
      return (q & 1) == 0 ? q : up;
    case Rounding::half_up:
      return up;
    case Rounding::half_down:
      return q;
    case Rounding::half_away_from_zero:
      return q < 0 ? q : up;
    case Rounding::half_toward_zero:
      return q < 0 ? up : q;
    default:
      return q;  // unreachable: the directed rules returned above
  }
}

// Classifies rem / den for 0 <= rem < den without forming 2 * rem (which could overflow).
constexpr Fraction classify(uint64_t rem, uint64_t den) {
  if (rem == 0) return Fraction::zero;
  const uint64_t rest = den - rem;
  return rem < rest ? Fraction::below_half : rem == rest ? Fraction::half : Fraction::above_half;
}

[[noreturn]] void div_round_error(int64_t num, int64_t den);
[[noreturn]] void shift_round_error(int shift);
[[noreturn]] void round_to_int_error(double x);
[[noreturn]] void saturate_error(int64_t lo, int64_t hi);

}  // namespace detail

// round(num / den) under rule r. Errors: den == 0, and num = INT64_MIN with
// den = -1 (the quotient 2^63 does not fit).
inline int64_t div_round(int64_t num, int64_t den, Rounding r) {
  if (den == 0 || (den == -1 && num == std::numeric_limits<int64_t>::min()))
    detail::div_round_error(num, den);
  int64_t q = num / den;  // truncated
  int64_t rem = num % den;
  // Move to the floor quotient: then rem has the sign of den and v - q = rem / den in [0, 1).
  if (rem != 0 && ((rem < 0) != (den < 0))) {
    q -= 1;  // |den| >= 2 here, so |q| <= 2^62 and this cannot overflow
    rem += den;
  }
  // |rem| < |den| <= 2^63 fits uint64 whatever the signs.
  const uint64_t abs_rem = rem < 0 ? 0 - static_cast<uint64_t>(rem) : static_cast<uint64_t>(rem);
  const uint64_t abs_den = den < 0 ? 0 - static_cast<uint64_t>(den) : static_cast<uint64_t>(den);
  return detail::round_from_floor(q, detail::classify(abs_rem, abs_den), r);
}

// round(x / 2^shift) under rule r, for shift in [0, 63] (else npukit::Error).
// Rounding::floor is the plain arithmetic shift x >> shift.
inline int64_t shift_round(int64_t x, int shift, Rounding r) {
  if (shift < 0 || shift > 63) detail::shift_round_error(shift);
  if (shift == 0) return x;
  const int64_t q = x >> shift;  // floor (arithmetic shift; defined in C++20)
  const uint64_t mask = (uint64_t{1} << shift) - 1;
  const uint64_t rem = static_cast<uint64_t>(x) & mask;  // x - q * 2^shift, in [0, 2^shift)
  const uint64_t half = uint64_t{1} << (shift - 1);
  const detail::Fraction f = rem == 0      ? detail::Fraction::zero
                             : rem < half  ? detail::Fraction::below_half
                             : rem == half ? detail::Fraction::half
                                           : detail::Fraction::above_half;
  return detail::round_from_floor(q, f, r);  // |q| <= 2^62: q + 1 cannot overflow
}

// round(x) under rule r, exactly (no x + 0.5 tricks). NaN, infinities and
// values whose rounded result would not fit int64 are npukit::Error.
inline int64_t round_to_int(double x, Rounding r) {
  constexpr double two52 = 4503599627370496.0;     // 2^52: from here on every double is an integer
  constexpr double two63 = 9223372036854775808.0;  // 2^63
  if (!(x >= -two63 && x < two63)) detail::round_to_int_error(x);  // also catches NaN
  if (x >= two52 || x <= -two52) return static_cast<int64_t>(x);   // already integral, exact
  const double fl = std::floor(x);                                 // exact
  // Compare 2x with 2*floor(x) + 1: all three are exact doubles below 2^54, so the
  // fraction x - floor(x) is classified without rounding error.
  const double twice = 2.0 * x, mid = 2.0 * fl + 1.0;
  const detail::Fraction f = x == fl        ? detail::Fraction::zero
                             : twice < mid  ? detail::Fraction::below_half
                             : twice == mid ? detail::Fraction::half
                                            : detail::Fraction::above_half;
  return detail::round_from_floor(static_cast<int64_t>(fl), f, r);
}
inline int64_t round_to_int(float x, Rounding r) {
  return round_to_int(static_cast<double>(x), r);
}

// Clamp to the range of integer type T (no error: saturation is the semantics).
template <class T>
constexpr T saturate(int64_t v) {
  static_assert(std::is_integral_v<T> && sizeof(T) <= sizeof(int64_t));
  if constexpr (std::is_signed_v<T> || sizeof(T) < sizeof(int64_t)) {
    constexpr int64_t lo = static_cast<int64_t>(std::numeric_limits<T>::min());
    constexpr int64_t hi = static_cast<int64_t>(std::numeric_limits<T>::max());
    return static_cast<T>(v < lo ? lo : v > hi ? hi : v);
  } else {  // uint64_t: every non-negative int64 fits
    return static_cast<T>(v < 0 ? 0 : v);
  }
}

// Clamp to [lo, hi]; lo > hi is an npukit::Error.
inline int64_t saturate(int64_t v, int64_t lo, int64_t hi) {
  if (lo > hi) detail::saturate_error(lo, hi);
  return v < lo ? lo : v > hi ? hi : v;
}

}  // namespace npukit
