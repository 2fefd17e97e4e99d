// Reference integer convolution: acc = sum over (ic, kh, kw) of
// (x - x_zp)(w - w_zp[oc]); a tap in the padding is x = x_zp, i.e. contributes 0.
#include "npukit/ops/quantized.hpp"
#include "npukit/parallel.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::ref {

void conv_accumulate(const TensorView& x, const TensorView& w, const TensorView& acc,
                     const Window2d& window, int64_t groups, int32_t x_zp, const QuantParams& w_q) {
  const int64_t OC = w.dim(0), ICg = w.dim(1), KH = w.dim(2), KW = w.dim(3);
  const int64_t OH = acc.dim(2), OW = acc.dim(3), OCg = OC / groups;
  const AxisTaps th = axis_taps(axis_h(window, x.dim(2)), OH);
  const AxisTaps tw = axis_taps(axis_w(window, x.dim(3)), OW);
  parallel_for(x.dim(0) * OC, [&](int64_t no) {
    const int64_t n = no / OC, o = no % OC, g = o / OCg;
    const int32_t wz = w_q.zero_point_at(o);
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int32_t s = 0;  // bounded by K*255*255 <= INT32_MAX (checked by the caller)
        for (int64_t ic = 0; ic < ICg; ++ic)
          for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw) {
              if (combine(th.kind_at(oh, kh), tw.kind_at(ow, kw)) != Tap::input) continue;
              const int32_t xv = detail::code_at(x.raw(), x.dtype(),
                                                 n * x.stride(0) + (g * ICg + ic) * x.stride(1) +
                                                     th.index_at(oh, kh) * x.stride(2) +
                                                     tw.index_at(ow, kw) * x.stride(3));
              const int32_t wv = detail::code_at(
                  w.raw(), w.dtype(),
                  o * w.stride(0) + ic * w.stride(1) + kh * w.stride(2) + kw * w.stride(3));
              s += (xv - x_zp) * (wv - wz);
            }
        acc.at<int32_t>(n, o, oh, ow) = s;
      }
  });
}

}  // namespace npukit::ref
