// fp32 special functions as an NPU's BDC computes them: exp by an integer
// lookup table times a truncated Taylor series, sigmoid and tanh built on it,
// the floor cast fp32 -> int32 and the 8-bit lookup cast int32 -> fp32, and
// the compare-and-select family. Every step is one fp32 rounding (no fused
// multiply-add); flushing of denormals is a parameter.
#pragma once

#include <cstdint>
#include <span>

#include "npukit/ops/fp32_semantics.hpp"
#include "npukit/profile.hpp"

namespace npukit {

// ---- scalar specification --------------------------------------------------

// 1/k! in fp32 as the vendor's table: c[0] = 1, c[k] = c[k-1] / k rounded
// (denormals flushed), k in [0, 64].
float taylor_exp_coefficient(int k);
// sum_{k <= num_series} x^k / k! (num_series + 1 terms, as the vendor's
// C-model computes okk_bdc_taylor_exp; probed bit for bit), by Horner's rule
// from the highest term: r = c[N]; r = r*x + c[k] for k = N-1 .. 0 (product
// and sum each rounded).
float taylor_exp_f32(float x, int num_series, const Fp32Arith& f);
// e^n rounded to fp32 (a table of n in [-103, 88]; entries below -87 are
// denormal and vanish when a flushing unit reads them).
float lookup_exp_f32(int32_t n);
// floor(x) as int32; +-inf and out-of-range values saturate, NaN gives 0.
int32_t floor_to_int32(float x);
// The signed low byte of x as fp32: a 256-entry table indexed by x & 0xff.
float lookup_int8_to_f32(int32_t x);
// e^x with n = trunc(x), f = x - n (in (-1, 1)), e = lookup_exp(n) and
// r = c[N]; r = r*f + c[k] for k = N-1 .. 1: e*(r*f) + e, each step rounded
// (the vendor's okk_bdc_exp_tunable bit for bit, probed); x in [-103, 88].
float exp_series_f32(float x, int num_series, const Fp32Arith& f);
// e / (1 + e) with e = exp_series(x).
float sigmoid_series_f32(float x, int num_series, const Fp32Arith& f);
// 1 - 2 / (e + 1) with e = exp_series(clamp(2x, -103, 88)).
float tanh_series_f32(float x, int num_series, const Fp32Arith& f);

// ---- arrays ------------------------------------------------------------------

enum class Fp32SeriesOp : uint8_t { taylor_exp, exp, sigmoid, tanh };

struct Fp32SeriesParams {
  int num_series = 32;           // [1, 64]: Taylor terms c[0] .. c[num_series]
  bool flush_denormals = false;  // FTZ/DAZ on every operand and result
};
// bm1684: flush_denormals; other profiles are rejected (the series are OKKernel's).
void apply_profile(Fp32SeriesParams& p, Profile profile);

// y[i] = op(x[i]); x and y have one length (y may alias x).
void fp32_series(Fp32SeriesOp op, std::span<const float> x, std::span<float> y,
                 const Fp32SeriesParams& p = {});
void fp32_floor_to_int32(std::span<const float> x, std::span<int32_t> y, bool flush_denormals);
void lookup_int8_to_f32(std::span<const int32_t> x, std::span<float> y);

enum class Fp32Compare : uint8_t {
  greater,  // a > b as fp32 (false when either is NaN)
  // a and b are the same 32-bit word (the unit compares bits, not numbers:
  // +0 != -0, a NaN equals the same NaN, a denormal is not flushed).
  equal,
};
// y[i] = compare(a[i], b[i]) ? s0[i] : s1[i]; the selected values are raw
// 32-bit words. With flush_denormals, greater flushes a and b first.
void fp32_compare_select(Fp32Compare cmp, std::span<const float> a, std::span<const float> b,
                         std::span<const uint32_t> s0, std::span<const uint32_t> s1,
                         std::span<uint32_t> y, bool flush_denormals);

}  // namespace npukit
