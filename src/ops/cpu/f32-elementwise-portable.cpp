// Element-wise kernels in plain C++ on contiguous arrays: the reference's
// per-element operations without its 4-D index arithmetic.
#include "elementwise_fast.hpp"

namespace npukit::cpu {

void f32_elementwise_portable(const EwProblem& p, const EwArrays& r) {
  const float* a = r.a;
  float* y = r.y;
  switch (p.op) {
    case EwOp::relu: {
      const bool nan_zero = p.relu.relu_nan == ReluNaN::zero;
      for (int64_t i = 0; i < r.n; ++i) {
        const float v = a[i];
        const float q = nan_zero ? (v > 0.0f ? v : 0.0f) : (v < 0.0f ? 0.0f : v);
        y[i] = p.relu.result_add ? y[i] + q : q;
      }
      return;
    }
    case EwOp::clip:
      for (int64_t i = 0; i < r.n; ++i) {
        float v = a[i];
        if (v < p.clip.min) v = p.clip.min;
        if (v > p.clip.max) v = p.clip.max;
        y[i] = v;
      }
      return;
    case EwOp::add:
      for (int64_t i = 0; i < r.n; ++i) y[i] = a[i] + r.b[i];
      return;
    case EwOp::mul:
      for (int64_t i = 0; i < r.n; ++i) y[i] = a[i] * r.b[i];
      return;
  }
}

}  // namespace npukit::cpu
