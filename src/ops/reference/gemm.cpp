#include "npukit/ops/gemm.hpp"
#include "npukit/parallel.hpp"

namespace npukit::ref {

void gemm_f32(const TensorView& a, const TensorView& b, const TensorView& c, const TensorView& y,
              float alpha, float beta) {
  const int64_t M = a.dim(0), K = a.dim(1), N = b.dim(1);
  parallel_for(M, [&](int64_t m) {
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) acc += a.at2<float>(m, k) * b.at2<float>(k, n);
      float out = alpha * acc;
      if (!c.empty()) out += beta * c.at2<float>(m, n);
      y.at2<float>(m, n) = out;
    }
  });
}

}  // namespace npukit::ref
