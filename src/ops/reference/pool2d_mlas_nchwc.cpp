// Reference of PoolLoop::mlas_nchwc: MLAS's NCHWc pooling kernel, which ONNX
// Runtime's graph optimizer substitutes for MaxPool / AveragePool when the
// channel count fills its blocks (docs/semantics.md). Per output it reduces
// the taps that land on the input, row-major, into one register lane that
// starts at +0 (avg) or -FLT_MAX (max), then divides once.
#include <cfloat>

#include "npukit/ops/pool2d.hpp"
#include "npukit/parallel.hpp"
#include "ops/reference/x86_float.hpp"

namespace npukit::ref {

void pool2d_f32_mlas_nchwc(const TensorView& x, const TensorView& y, const Pool2dParams& p) {
  const Window2d& w = p.window;
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3), OH = y.dim(2), OW = y.dim(3);
  const bool is_max = p.mode == PoolMode::max;
  parallel_for(x.dim(0) * C, [&](int64_t nc) {
    const int64_t n = nc / C, c = nc % C;
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        float acc = is_max ? -FLT_MAX : 0.0f;
        int64_t taps = 0;
        for (int64_t kh = 0; kh < w.kernel_h; ++kh) {
          const int64_t ih = oh * w.stride_h - w.pad_top + kh * w.dilation_h;
          if (ih < 0 || ih >= H) continue;
          for (int64_t kw = 0; kw < w.kernel_w; ++kw) {
            const int64_t iw = ow * w.stride_w - w.pad_left + kw * w.dilation_w;
            if (iw < 0 || iw >= W) continue;
            const float v = x.at<float>(n, c, ih, iw);
            acc = is_max ? x86_simd_max(acc, v) : x86_add(acc, v);  // vmaxps / vaddps
            ++taps;
          }
        }
        if (p.mode == PoolMode::avg) {
          // One vdivps: a NaN sum stays, 0 taps give 0/0 (the default NaN).
          // The kernel counts no clipped window: clipped_window divides by
          // the area, as kernel_area does (PoolLoop::mlas_nchwc).
          const int64_t area = w.kernel_h * w.kernel_w;
          const int64_t div = avg_divisor(p.divisor, area, taps, area);
          acc = div == 0 ? x86_default_nan() : acc / static_cast<float>(div);
        } else if (p.mode == PoolMode::sum) {
          acc = x86_mul(acc, p.coeff);  // the sum first when both are NaN
        }
        y.at<float>(n, c, oh, ow) = acc;
      }
    }
  });
}

}  // namespace npukit::ref
