// Reference convolution under Fp32Accumulation::mlas_nchwc16/8 (ONNX Runtime
// 1.30's MLAS on x86): the chains of detail::mlas_conv_order, each an FMA
// chain from +0, added to the output one by one, then + bias, then + old y
// (with residual_first, old y is where the total starts instead).
#include <cmath>

#include "npukit/ops/conv2d.hpp"
#include "npukit/parallel.hpp"
#include "ops/conv_mlas_order.hpp"

namespace npukit::ref {

void conv2d_f32_mlas(const TensorView& x, const TensorView& w, const TensorView& bias,
                     const TensorView& y, const Conv2dParams& p) {
  const AxisTaps th = axis_taps(axis_h(p.window, x.dim(2)), y.dim(2));
  const AxisTaps tw = axis_taps(axis_w(p.window, x.dim(3)), y.dim(3));
  const int64_t OC = y.dim(1), OH = y.dim(2), OW = y.dim(3);
  const int64_t ICG = w.dim(1), OCG = OC / p.groups;
  const int64_t KH = w.dim(2), KW = w.dim(3), K = KH * KW;
  const float* b = p.has_bias ? static_cast<const float*>(bias.raw()) : nullptr;
  const int64_t bias_step = p.has_bias ? bias.stride(bias.rank() == 1 ? 0 : 1) : 0;
  const detail::MlasConvOrder order =
      detail::mlas_conv_order(ICG, OCG, K, p.groups, mlas_nchwc_block(p.accumulation));
  const bool first = p.result_add && p.residual_first;
  parallel_for(y.dim(0) * OC, [&](int64_t noc) {
    const int64_t n = noc / OC, oc = noc % OC;
    const int64_t ic0 = (oc / OCG) * ICG;
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        float& out = y.at<float>(n, oc, oh, ow);
        float sum = first ? out : 0.0f;
        size_t s = 0;
        for (size_t c = 0; c < order.chain_end.size(); ++c) {
          float acc = 0.0f;
          for (; s < static_cast<size_t>(order.chain_end[c]); ++s) {
            const int64_t ic = order.step[s] / K, kh = order.step[s] % K / KW,
                          kw = order.step[s] % KW;
            const float wv = w.at<float>(oc, ic, kh, kw);
            if (th.kind_at(oh, kh) == Tap::input && tw.kind_at(ow, kw) == Tap::input)
              acc = std::fma(x.at<float>(n, ic0 + ic, th.index_at(oh, kh), tw.index_at(ow, kw)), wv,
                             acc);
            else if (std::isfinite(wv))  // a padded or inserted zero
              acc = std::fma(0.0f, wv, acc);
          }
          sum = c == 0 && !first ? acc : acc + sum;
        }
        if (b) sum += b[oc * bias_step];
        out = p.result_add && !first ? out + sum : sum;
      }
    }
  });
}

}  // namespace npukit::ref
