// Reference kernels of Fp32Accumulation::interleaved for convolution and
// depthwise convolution: the accumulator patterns of docs/npu-simulator.md, "Same numbers as the
// vendor's C-model", one rounded operation per line.
#include "npukit/ops/conv2d.hpp"
#include "npukit/parallel.hpp"

namespace npukit::ref {

namespace {
const float* bias_data(const TensorView& bias, bool has_bias, int64_t& step) {
  step = has_bias ? bias.stride(bias.rank() == 1 ? 0 : 1) : 0;
  return has_bias ? static_cast<const float*>(bias.raw()) : nullptr;
}
}  // namespace

void conv2d_f32_interleaved(const TensorView& x, const TensorView& w, const TensorView& bias,
                            const TensorView& y, const Conv2dParams& p) {
  const AxisTaps th = axis_taps(axis_h(p.window, x.dim(2)), y.dim(2));
  const AxisTaps tw = axis_taps(axis_w(p.window, x.dim(3)), y.dim(3));
  const int64_t OC = y.dim(1), OH = y.dim(2), OW = y.dim(3);
  const int64_t IC = x.dim(1), ICn = (IC + 1) / 2;
  const int64_t KH = w.dim(2), KW = w.dim(3);
  int64_t bias_step = 0;
  const float* b = bias_data(bias, p.has_bias, bias_step);
  const Fp32Arith f{p.flush_denormals};
  parallel_for(y.dim(0) * OC, [&](int64_t noc) {
    const int64_t n = noc / OC, oc = noc % OC;
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        float L[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int64_t kh = 0; kh < KH; ++kh) {
          for (int64_t kw = 0; kw < KW; ++kw) {
            const int64_t k = kh * KW + kw;
            const bool real = combine(th.kind_at(oh, kh), tw.kind_at(ow, kw)) == Tap::input;
            for (int64_t j = 0; j < ICn; ++j) {
              const int64_t s = k * ICn + j;
              // Both channels of pair j; an odd IC's missing partner adds nothing.
              for (int64_t ic = 2 * j; ic < 2 * j + 2 && ic < IC; ++ic) {
                const float xv =
                    real ? x.at<float>(n, ic, th.index_at(oh, kh), tw.index_at(ow, kw)) : 0.0f;
                float& acc = L[(s % 2) * 2 + ic % 2];
                acc = f.add(acc, f.mul(xv, w.at<float>(oc, ic, kh, kw)));
              }
            }
          }
        }
        float r = f.add(f.add(L[0], L[2]), f.add(L[1], L[3]));
        if (b) r = f.add(r, b[oc * bias_step]);
        float& out = y.at<float>(n, oc, oh, ow);
        out = p.result_add ? f.add(r, out) : r;
      }
    }
  });
}

void depthwise2d_f32_interleaved(const TensorView& x, const TensorView& w, const TensorView& bias,
                                 const TensorView& y, const Depthwise2dParams& p) {
  const AxisTaps th = axis_taps(axis_h(p.window, x.dim(2)), y.dim(2));
  const AxisTaps tw = axis_taps(axis_w(p.window, x.dim(3)), y.dim(3));
  const int64_t C = y.dim(1), OH = y.dim(2), OW = y.dim(3);
  const int64_t KH = w.dim(2), KW = w.dim(3);
  int64_t bias_step = 0;
  const float* b = bias_data(bias, p.has_bias, bias_step);
  const Fp32Arith f{p.flush_denormals};
  parallel_for(y.dim(0) * C, [&](int64_t nc) {
    const int64_t n = nc / C, c = nc % C, ic = c / p.multiplier;
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        float A[2] = {0.0f, 0.0f};
        for (int64_t kh = 0; kh < KH; ++kh) {
          for (int64_t kw = 0; kw < KW; ++kw) {
            const bool real = combine(th.kind_at(oh, kh), tw.kind_at(ow, kw)) == Tap::input;
            const float xv =
                real ? x.at<float>(n, ic, th.index_at(oh, kh), tw.index_at(ow, kw)) : 0.0f;
            float& acc = A[(kh * KW + kw) % 2];
            acc = f.add(acc, f.mul(xv, w.at<float>(c, 0, kh, kw)));
          }
        }
        float r = f.add(A[0], A[1]);
        if (b) r = f.add(r, b[c * bias_step]);
        float& out = y.at<float>(n, c, oh, ow);
        out = p.result_add ? f.add(r, out) : r;
      }
    }
  });
}

}  // namespace npukit::ref
