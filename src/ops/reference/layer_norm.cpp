#include <cmath>

#include "npukit/ops/layer_norm.hpp"

namespace npukit::ref {

void layer_norm_f32(const float* x, const float* scale, const float* bias, float* y, float* mean,
                    float* inv_std_dev, int64_t rows, int64_t n, float epsilon) {
  const auto nf = static_cast<float>(n);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    // Two passes (mean, then the mean of squared deviations): ONNX Runtime
    // 1.30 keeps a finite variance where one pass would cancel or overflow.
    float m = 0.0f;
    for (int64_t h = 0; h < n; ++h) m += xr[h];
    m = m / nf;
    float sq = 0.0f;
    for (int64_t h = 0; h < n; ++h) {
      const float t = xr[h] - m;
      sq += t * t;
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
