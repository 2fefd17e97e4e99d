// MRT / CVM-runtime integer requantization (seed 001; docs/semantics.md, "Rounding and
// requantization").
//
//   cvm_float(r, bits): r >= 0 as frac * 2^exp with frac < 2^(bits-1) (MRT's
//     sim_quant_helper.cvm_float): scale r into [1, 2) tracking exp, then keep
//     doubling while it is not an integer, at most bits - 2 times; frac =
//     round_half_to_even(r') (Python 3's round) clipped to max(2^(bits-1) - 1, 1).
//   cvm_right_shift(x, shift, prec) = clip(((x >> (shift-1)) + 1) >> 1), i.e.
//     round(x / 2^shift) with ties toward +inf, then the symmetric clip
//     cvm_clip(v, prec) = clamp(v, -(2^(prec-1) - 1), 2^(prec-1) - 1): int8 is [-127, 127].
//   cvm_left_shift(x, shift, prec) = cvm_clip(x * 2^shift, prec).
//   cvm_requantize(x, {frac, exp}, prec) = cvm_shift(frac * x, exp): MRT's
//     Xqn = cvm_shift(frac * Xq, sb), a right shift for exp < 0, a left one for exp > 0.
//
// CVM's ranges: precision and shift_bit in [1, 32]; its tensors are int32.
// npukit computes in 64-bit, so it is exact where CVM's int32 arithmetic is:
// the one input where CVM's `x + 1` can wrap (x = INT32_MAX, shift 1) gives
// 2^30 here.
#pragma once

#include <cstdint>

#include "npukit/quant/rounding.hpp"

namespace npukit {

struct CvmFloat {
  int64_t frac = 0;  // [0, max(2^(bits-1) - 1, 1)]
  int exp = 0;       // r ~= frac * 2^exp
  double value() const;
};

// Errors: r negative, NaN or infinite; bits outside [1, 32].
CvmFloat cvm_float(double r, int bits = 24);

namespace detail {
[[noreturn]] void cvm_range_error(const char* function, const char* parameter, int64_t value);
}

// Largest magnitude of the symmetric clip: 2^(prec-1) - 1.
inline int64_t cvm_clip_bound(int precision) {
  if (precision < 1 || precision > 32)
    detail::cvm_range_error("npukit::cvm_clip", "precision", precision);
  return (int64_t{1} << (precision - 1)) - 1;
}

inline int64_t cvm_clip(int64_t x, int precision) {
  const int64_t a = cvm_clip_bound(precision);
  return x < -a ? -a : x > a ? a : x;
}

inline int64_t cvm_right_shift(int64_t x, int shift, int precision) {
  if (shift < 1 || shift > 32) detail::cvm_range_error("npukit::cvm_right_shift", "shift", shift);
  return cvm_clip(shift_round(x, shift, Rounding::half_up), precision);
}

inline int64_t cvm_left_shift(int64_t x, int shift, int precision) {
  if (shift < 1 || shift > 32) detail::cvm_range_error("npukit::cvm_left_shift", "shift", shift);
  const int64_t a = cvm_clip_bound(precision);
  const __int128 v = static_cast<__int128>(x) * (int64_t{1} << shift);  // exact
  return v < -a ? -a : v > a ? a : static_cast<int64_t>(v);
}

// CVM's x is int32 and frac < 2^31, but the product is formed in 128 bits so
// that any int64 x and frac saturate instead of wrapping (|frac * x| < 2^126).
// Same result as cvm_right_shift / cvm_left_shift / cvm_clip of the product.
inline int64_t cvm_requantize(int64_t x, CvmFloat f, int precision) {
  const __int128 product = static_cast<__int128>(f.frac) * x;
  __int128 t = product;
  if (f.exp < 0) {
    if (f.exp < -32) detail::cvm_range_error("npukit::cvm_right_shift", "shift", -f.exp);
    t = (product + (static_cast<__int128>(1) << (-f.exp - 1))) >> (-f.exp);  // ties toward +inf
  } else if (f.exp > 0) {
    if (f.exp > 32) detail::cvm_range_error("npukit::cvm_left_shift", "shift", f.exp);
    // Beyond 2^32 the product is past every clip bound already; below it the shift is exact.
    if (product < (int64_t{1} << 32) && product > -(int64_t{1} << 32))
      t = product * (int64_t{1} << f.exp);
  }
  const int64_t a = cvm_clip_bound(precision);
  return t < -a ? -a : t > a ? a : static_cast<int64_t>(t);
}

// MRT's requantization of a centred integer v = Xq - zp_x (or a conv sum S) to an
// affine target: round(frac * 2^exp * v) with CVM's shift rounding (ties toward
// +inf), + zero_point, clipped to [lo, hi]. With zero_point 0 and the symmetric range
// of `precision` it is cvm_requantize. MRT writes the zero-point form as
// cvm_shift(frac1 * Xq, sb1) + cvm_shift(frac2, sb2); subtracting the integer zp_x
// first keeps the constant exact (zp_xn is an integer by MRT's ceil).
inline int64_t cvm_requantize_affine(int64_t v, CvmFloat f, int64_t zero_point, int64_t lo,
                                     int64_t hi) {
  const __int128 product = static_cast<__int128>(f.frac) * v;  // |v| < 2^33, frac < 2^31
  __int128 t = product;
  if (f.exp < 0) {
    if (f.exp < -32) detail::cvm_range_error("npukit::cvm_requantize_affine", "shift", -f.exp);
    const __int128 half = static_cast<__int128>(1) << (-f.exp - 1);
    t = (product + half) >> (-f.exp);  // arithmetic: floor((p + 2^(s-1)) / 2^s)
  } else if (f.exp > 0) {
    if (f.exp > 32) detail::cvm_range_error("npukit::cvm_requantize_affine", "shift", f.exp);
    t = product * (static_cast<__int128>(1) << f.exp);
  }
  t += zero_point;
  return t < lo ? lo : t > hi ? hi : static_cast<int64_t>(t);
}

}  // namespace npukit
