// Reference integer convolution under IntAccumulation::mlas_u8s8_int16_pairs
// (ONNX Runtime's MLAS u8 x s8 GEMM without VNNI): raw codes multiplied in the
// NHWC im2col order (kh, kw, ic) of one group, a padding tap reading x_zp,
// adjacent products summed with int16 saturation, zero points removed after.
#include "npukit/ops/quantized.hpp"
#include "npukit/parallel.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::ref {

void conv_accumulate_mlas_pairs(const TensorView& x, const TensorView& w, const TensorView& acc,
                                const Window2d& window, int64_t groups, int32_t x_zp,
                                const QuantParams& w_q) {
  const int64_t OC = w.dim(0), ICg = w.dim(1), KH = w.dim(2), KW = w.dim(3);
  const int64_t OH = acc.dim(2), OW = acc.dim(3), OCg = OC / groups, K = ICg * KH * KW;
  const AxisTaps th = axis_taps(axis_h(window, x.dim(2)), OH);
  const AxisTaps tw = axis_taps(axis_w(window, x.dim(3)), OW);
  parallel_for(x.dim(0) * OC, [&](int64_t no) {
    const int64_t n = no / OC, o = no % OC, g = o / OCg;
    const int64_t wz = w_q.zero_point_at(o);
    auto w_at = [&](int64_t ic, int64_t kh, int64_t kw) {
      return detail::code_at(
          w.raw(), w.dtype(),
          o * w.stride(0) + ic * w.stride(1) + kh * w.stride(2) + kw * w.stride(3));
    };
    int64_t w_sum = 0;  // MLAS's column sum of the packed weights
    for (int64_t ic = 0; ic < ICg; ++ic)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) w_sum += w_at(ic, kh, kw);
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        detail::Int16PairSum s;
        int64_t x_sum = 0;  // MLAS's row sum of the im2col row
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            const bool inside = combine(th.kind_at(oh, kh), tw.kind_at(ow, kw)) == Tap::input;
            for (int64_t ic = 0; ic < ICg; ++ic) {
              const int32_t xv =
                  inside ? detail::code_at(x.raw(), x.dtype(),
                                           n * x.stride(0) + (g * ICg + ic) * x.stride(1) +
                                               th.index_at(oh, kh) * x.stride(2) +
                                               tw.index_at(ow, kw) * x.stride(3))
                         : x_zp;             // ORT's im2col fills padding with the zero point
              s.add(xv * w_at(ic, kh, kw));  // |u8 * s8| <= 32640: exact in int32
              x_sum += xv;
            }
          }
        acc.at<int32_t>(n, o, oh, ow) =
            detail::wrap_int32(s.total() - x_zp * w_sum - wz * x_sum + K * x_zp * wz);
      }
  });
}

}  // namespace npukit::ref
