// Reference convolution, straight from the definition of seed 001 (with the
// kernel sums running 0..K-1) plus zero insertion and asymmetric pads.
#include "npukit/ops/conv2d.hpp"
#include "npukit/parallel.hpp"

namespace npukit::ref {

void conv2d_f32(const TensorView& x, const TensorView& w, const TensorView& bias,
                const TensorView& y, const Conv2dParams& p) {
  const AxisTaps th = axis_taps(axis_h(p.window, x.dim(2)), y.dim(2));
  const AxisTaps tw = axis_taps(axis_w(p.window, x.dim(3)), y.dim(3));
  const int64_t OC = y.dim(1), OH = y.dim(2), OW = y.dim(3);
  const int64_t ICG = w.dim(1), OCG = OC / p.groups;
  const int64_t KH = w.dim(2), KW = w.dim(3);
  const float* b = p.has_bias ? static_cast<const float*>(bias.raw()) : nullptr;
  const int64_t bias_step = p.has_bias ? bias.stride(bias.rank() == 1 ? 0 : 1) : 0;
  parallel_for(y.dim(0) * OC, [&](int64_t noc) {
    const int64_t n = noc / OC, oc = noc % OC;
    const int64_t ic0 = (oc / OCG) * ICG;
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        float acc = 0.0f;
        for (int64_t ic = 0; ic < ICG; ++ic) {
          for (int64_t kh = 0; kh < KH; ++kh) {
            if (th.kind_at(oh, kh) != Tap::input) continue;  // zeros add nothing
            const int64_t ih = th.index_at(oh, kh);
            for (int64_t kw = 0; kw < KW; ++kw) {
              if (tw.kind_at(ow, kw) != Tap::input) continue;
              acc +=
                  x.at<float>(n, ic0 + ic, ih, tw.index_at(ow, kw)) * w.at<float>(oc, ic, kh, kw);
            }
          }
        }
        if (b) acc += b[oc * bias_step];
        float& out = y.at<float>(n, oc, oh, ow);
        out = p.result_add ? out + acc : acc;
      }
    }
  });
}

}  // namespace npukit::ref
