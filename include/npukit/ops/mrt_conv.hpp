// MRT's integer-only convolution chain and its average pooling (cvm-runtime
// docs/mrt/form.md, docs/semantics.md, "Rounding and requantization"), end to end:
//
//   Xq = mrt_quantize(X, xp)   layer-wise, symmetric or zero point
//   Wq = mrt_quantize(W, wp)   layer-wise or channel-wise along axis 0 (output channel)
//   S  = conv(Xq, Wq) - zp_x * sum(Wq[oc]) - zp_w[oc] * sum_window(Xq) + T * zp_x * zp_w[oc]
//        (zero_point_conv2d_expanded: four int32 terms, padded taps hold zp_x)
//      = sum (Xq - zp_x)(Wq - zp_w[oc]),  so the real output is Y = S / (sc_x * sc_w[oc])
//   Yq = clip(round(frac[oc] * 2^exp[oc] * S) + zp_y, yp.q_min(), yp.q_max())
//        with (frac, exp) = cvm_float(sc_y / (sc_x * sc_w[oc]), bits): cvm_requantize_affine
//   Y ~= mrt_dequantize(Yq, yp)
//
// yp (layer-wise) gives the output's own scale, zero point and precision; a
// symmetric yp makes the last step MRT's cvm_right_shift with its symmetric clip.
// x must be layer-wise: MRT runs channel-wise inputs as separate per-channel
// convolutions (its "channel lazy split"), which callers do with groups.
#pragma once

#include <cstdint>

#include "npukit/quant/cvm.hpp"
#include "npukit/quant/mrt_quant.hpp"
#include "npukit/tensor.hpp"
#include "npukit/window.hpp"

namespace npukit {

// The multiplier of output channel oc: cvm_float(sc_y / (sc_x * sc_w[oc]), bits).
CvmFloat mrt_conv_requant_factor(const MrtQuantParams& xp, const MrtQuantParams& wp,
                                 const MrtQuantParams& yp, int64_t oc, int bits = 24);

// xq (N, C, H, W) and wq (OC, C/groups, KH, KW): integer codes (s8/u8/s16/s32, e.g.
// mrt_quantize's s32) within their params' ranges. Returns Yq, s32 (N, OC, OH, OW).
// Errors: a scheme other than symmetric / zero_point, x channel-wise, w channel-wise
// on an axis other than 0, a code outside its params' range, an int32 overflow risk.
Tensor mrt_quantized_conv2d(const TensorView& xq, const MrtQuantParams& xp, const TensorView& wq,
                            const MrtQuantParams& wp, const MrtQuantParams& yp,
                            const Window2d& window, int64_t groups = 1, int bits = 24);

// MRT's average pooling: rewritten as a depthwise convolution (groups = C) whose
// KH x KW weights are all 1/(KH*KW) (float32), quantized by mrt_calibrate +
// mrt_quantize (symmetric, weight_precision bits: sc = (2^(P-1) - 1) / w, codes
// floor(sc * w) = 2^(P-1) - 1 unless the double product lands just below); padded
// taps hold zp_x, the real zero, so the divisor is always KH*KW (count_include_pad = 1).
// No dilation, zero insertion or ceil_mode.
Tensor mrt_avg_pool2d(const TensorView& xq, const MrtQuantParams& xp, const MrtQuantParams& yp,
                      const Window2d& window, int weight_precision = 8, int bits = 24);

}  // namespace npukit
