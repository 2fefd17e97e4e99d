#include <cmath>
#include <limits>

#include "npukit/ops/log_softmax.hpp"

namespace npukit::ref {

void log_softmax_f32(const TensorView& x, const TensorView& y, int axis) {
  // The other axes padded to 4-D; the softmax axis walked inside.
  const int pad = 4 - x.rank();
  int64_t d[4], xs[4], ys[4];
  for (int i = 0; i < 4; ++i) {
    const bool real = i >= pad && i - pad != axis;
    d[i] = real ? x.dim(i - pad) : 1;
    xs[i] = real ? x.stride(i - pad) : 0;
    ys[i] = real ? y.stride(i - pad) : 0;
  }
  const int64_t n = x.dim(axis), xa = x.stride(axis), ya = y.stride(axis);
  const float* xp = static_cast<const float*>(x.raw());
  float* yp = static_cast<float*>(y.raw());
  for (int64_t a = 0; a < d[0]; ++a)
    for (int64_t b = 0; b < d[1]; ++b)
      for (int64_t c = 0; c < d[2]; ++c)
        for (int64_t e = 0; e < d[3]; ++e) {
          const float* xr = xp + a * xs[0] + b * xs[1] + c * xs[2] + e * xs[3];
          float* yr = yp + a * ys[0] + b * ys[1] + c * ys[2] + e * ys[3];
          float m = -std::numeric_limits<float>::infinity();
          for (int64_t k = 0; k < n; ++k)
            if (std::isnan(xr[k * xa]) || xr[k * xa] > m) m = xr[k * xa];
          float s = 0.0f;
          for (int64_t k = 0; k < n; ++k) s += std::exp(xr[k * xa] - m);
          const float ls = std::log(s);
          for (int64_t k = 0; k < n; ++k) yr[k * ya] = (xr[k * xa] - m) - ls;
        }
}

}  // namespace npukit::ref
