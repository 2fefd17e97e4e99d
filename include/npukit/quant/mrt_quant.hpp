// MRT quantization parameters and the quantize / dequantize / requantize
// functions of seed 001, plus MRT's later zero-point definitions
// (cvm-runtime docs/mrt/form.md). P is the precision in bits, 2..16.
//
//   symmetric   (seed "Symmetric Layer-wise"):   sc = (2^(P-1) - 1) / max|x|
//               Xq = floor(sc * X)                X = Xq / sc
//               Xq is clipped to the CVM range [-(2^(P-1) - 1), 2^(P-1) - 1].
//   seed_affine (seed "Symmetric Channel-wise", exactly as written there):
//               sc = (2^P - 1) / (max - min)      zp = min * (2^P - 1) / (max - min)  (a real
//               number) Xq = floor(sc * X - zp)           X = (Xq + zp) / sc Xq is clipped to [0,
//               2^P - 1].
//   zero_point  (MRT's later "Zero Point Layer-/Channel-wise"; fills the seed's empty sections):
//               sc = (2^P - 1) / (max - min)      zp = ceil(-sc * min)   (an integer)
//               Xq = floor(sc * X + zp)           X = (Xq - zp) / sc
//               Xq is clipped to [0, 2^P - 1].
//
// "Layer-wise" is axis = -1 (one sc/zp for the tensor); "channel-wise" gives
// one sc/zp per index along `axis`. All arithmetic is in double on the float32
// inputs (MRT computes in numpy float64); the clip only matters for values
// outside the calibrated range (or when floor(sc * max) lands one past it by
// a rounding of sc * max).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npukit/quant/cvm.hpp"
#include "npukit/tensor.hpp"

namespace npukit {

enum class MrtScheme : uint8_t { symmetric, seed_affine, zero_point };
const char* mrt_scheme_name(MrtScheme s);  // "symmetric", "seed_affine", "zero_point"
MrtScheme mrt_scheme_from_name(const std::string& name);

struct MrtQuantParams {
  MrtScheme scheme = MrtScheme::symmetric;
  int precision = 8;       // P, 2..16
  int axis = -1;           // -1: layer-wise; else channel-wise along this axis
  std::vector<double> sc;  // one per channel (or one)
  std::vector<double> zp;  // same length; 0 for symmetric

  int64_t q_min() const;  // smallest Xq: -(2^(P-1) - 1) or 0
  int64_t q_max() const;  // largest Xq: 2^(P-1) - 1 or 2^P - 1
};

// Scalar formulas (precision errors outside [2, 16]; a zero range is an error).
double mrt_symmetric_scale(double max_abs, int precision);
double mrt_affine_scale(double min, double max, int precision);  // (2^P - 1) / (max - min)
double mrt_seed_affine_zero_point(double min, double max, int precision);
double mrt_zero_point(double sc, double min);  // ceil(-sc * min)
int64_t mrt_quantize_value(double x, double sc, double zp, MrtScheme s, int precision);
double mrt_dequantize_value(int64_t q, double sc, double zp, MrtScheme s);

// Calibrates on x (f32, rank 0..4) with min / max / max|x| over the whole
// tensor or per index of `axis`.
MrtQuantParams mrt_calibrate(const TensorView& x, MrtScheme scheme, int precision, int axis = -1);

// f32 -> s32 tensor of the same shape, and back.
Tensor mrt_quantize(const TensorView& x, const MrtQuantParams& p);
Tensor mrt_dequantize(const TensorView& q, const MrtQuantParams& p);

// Integer requantization from `from` to `to` (same axis and channel count; symmetric
// or zero_point): Xqn = cvm_requantize_affine(Xq - zp, cvm_float(to.sc / from.sc, bits),
// to.zp, to.q_min(), to.q_max()): MRT's "Xqn ~= cvm_shift(frac * Xq, sb)" (symmetric,
// exactly cvm_requantize) and its zero-point int-propagation
// "Xqn ~= cvm_shift(frac1 * Xq, sb1) + cvm_shift(frac2, sb2)" with the constant exact.
Tensor mrt_requantize(const TensorView& q, const MrtQuantParams& from, const MrtQuantParams& to,
                      int bits = 24);

}  // namespace npukit
