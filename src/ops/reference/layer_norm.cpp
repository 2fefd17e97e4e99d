#include <cmath>

#include "npukit/ops/layer_norm.hpp"

namespace npukit::ref {

void layer_norm_f32(const float* x, const float* scale, const float* bias, float* y, float* mean,
                    float* inv_std_dev, int64_t rows, int64_t n, float epsilon) {
  const auto nf = static_cast<float>(n);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    float m = 0.0f, sq = 0.0f;
    if (n < 8) {
      // Rows shorter than 8: Welford's running mean and sum of squared
      // deviations, one element at a time, which gives ONNX Runtime 1.30's
      // bits on every such row measured (mean, inv_std_dev and y).
      for (int64_t h = 0; h < n; ++h) {
        const float dv = xr[h] - m;
        m += dv / static_cast<float>(h + 1);
        sq += dv * (xr[h] - m);
      }
    } else {
      // Longer rows: ORT 1.30 vectorizes the statistics in an order not
      // identified yet (docs/semantics.md); two passes (mean, then the mean
      // of squared deviations) stay within the stated tolerance.
      for (int64_t h = 0; h < n; ++h) m += xr[h];
      m = m / nf;
      for (int64_t h = 0; h < n; ++h) {
        const float t = xr[h] - m;
        sq += t * t;
      }
    }
    const float d = std::sqrt(sq / nf + epsilon);
    for (int64_t h = 0; h < n; ++h) {
      const float v = (xr[h] - m) / d * (scale ? scale[h] : 1.0f);
      yr[h] = bias ? v + bias[h] : v;
    }
    if (mean) mean[r] = m;
    if (inv_std_dev) inv_std_dev[r] = 1.0f / d;
  }
}

}  // namespace npukit::ref
