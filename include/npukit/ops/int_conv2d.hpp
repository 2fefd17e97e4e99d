// Integer 2-D convolutions of seed 001 and MRT (cvm-runtime docs/mrt/form.md).
//
// Seed 001 (with groups and dilation; pad() reads 0 outside the input):
//   Y[n,oc,p,q] = sum_{ic<IC} sum_{ki<KH} sum_{kj<KW}
//                 pad(n, (oc / OPG) * IC + ic, p*SH - PH + ki*DH, q*SW - PW + kj*DW) *
//                 W[oc,ic,ki,kj]
//   with C = IC * groups, OC = OPG * groups. The seed's sums run "ki = 0..KH" and
//   "kj = 0..KW": a typo, a KH x KW kernel has taps 0..KH-1 (as MRT's later text has).
//
// MRT's integer-only convolution with zero points. With MRT's later convention
// X = (Xq - zp_x) / sc_x and W = (Wq - zp_w) / sc_w, the real product sum is
// proportional to S = sum (Xq - zp_x)(Wq - zp_w) over the T = IC*KH*KW taps, and
//   S = conv(Xq, Wq) - zp_x * sum(Wq[oc]) - zp_w * sum_window(Xq) + T * zp_x * zp_w.
// (MRT's form.md writes the two middle terms with "+": that is the seed's
// convention X = (Xq + zp) / sc; pass -zp to use it.) A padded tap holds
// Xq = zp_x, the quantized real zero, so the identity holds for every window.
// The result is then requantized with MRT's cvm_requantize (multiply by frac,
// cvm_right_shift, symmetric clip).
//
// Accumulators are int32. Before running, the worst case over the dtype ranges
// is checked: T * (mx*mw + |zp_x|*mw + |zp_w|*mx + |zp_x*zp_w|) <= INT32_MAX,
// mx / mw = largest |value| of the x / w dtype (zero points 0 for seed 001).
// Every partial sum is bounded by it, so no int32 operation can overflow; a
// configuration beyond it is an npukit::Error naming T and its limit. E.g.
// s8 x s8: T <= 131071; u8 x u8 with zero points 255: T <= 8256.
#pragma once

#include <cstdint>
#include <vector>

#include "npukit/quant/cvm.hpp"
#include "npukit/tensor.hpp"
#include "npukit/window.hpp"

namespace npukit {

struct IntConv2dParams {
  Window2d window;  // kernel_h/w must match w; ins_h/ins_w = 0 and ceil_mode = false
  int64_t groups = 1;
  int32_t x_zero_point = 0;  // used by the zero-point functions only
  int32_t w_zero_point = 0;
  // MRT channel-wise weights: one zero point per output channel (overrides w_zero_point).
  std::vector<int32_t> w_zero_points;
  // Bounds on |x| and |w| for the int32 proof when the dtype is wider than the values
  // (MRT's quantized tensors are s32 holding P-bit codes); 0 = the dtype's range. Every
  // element is checked against a given bound.
  int64_t x_max_abs = 0, w_max_abs = 0;

  int32_t w_zero_point_at(int64_t oc) const {
    return w_zero_points.empty() ? w_zero_point : w_zero_points[static_cast<size_t>(oc)];
  }
};

// x (N, C, H, W), w (OC, C/groups, KH, KW) -> (N, OC, OH, OW).
Shape int_conv2d_output_shape(const Shape& x, const Shape& w, const IntConv2dParams& p);

// Largest tap count T = (C/groups)*KH*KW whose int32 accumulation is proven safe.
int64_t int_conv2d_max_taps(DType x, DType w, int32_t x_zero_point, int32_t w_zero_point);
// The same from bounds on |x| and |w|.
int64_t int_conv2d_max_taps(int64_t x_max_abs, int64_t w_max_abs, int32_t x_zero_point,
                            int32_t w_zero_point);

// Seed 001's formula. x, w: s8 / u8 / s16 / s32; y: s32 of the output shape.
void seed_conv2d(const TensorView& x, const TensorView& w, const TensorView& y,
                 const IntConv2dParams& p);

// MRT's expansion (four int32 terms), and the direct sum of (Xq - zp_x)(Wq - zp_w)
// it must equal (the reference for the tests).
void zero_point_conv2d_expanded(const TensorView& x, const TensorView& w, const TensorView& y,
                                const IntConv2dParams& p);
void zero_point_conv2d_direct(const TensorView& x, const TensorView& w, const TensorView& y,
                              const IntConv2dParams& p);

// zero_point_conv2d_expanded, then y = cvm_requantize(S, requant, out_precision).
Tensor mrt_conv2d(const TensorView& x, const TensorView& w, const IntConv2dParams& p,
                  CvmFloat requant, int out_precision);

}  // namespace npukit
