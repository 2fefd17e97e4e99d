#include <algorithm>
#include <cmath>

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

void gemm_f32_mlas(const TensorView& a, const TensorView& b, const TensorView& c,
                   const TensorView& y, float beta, int64_t k_block) {
  const int64_t M = a.dim(0), K = a.dim(1), N = b.dim(1);
  parallel_for(M, [&](int64_t m) {
    for (int64_t n = 0; n < N; ++n) {
      bool started = !c.empty();
      float out = started ? beta * c.at2<float>(m, n) : 0.0f;
      for (int64_t k0 = 0; k0 < K; k0 += k_block) {
        float chain = 0.0f;
        for (int64_t k = k0; k < std::min(K, k0 + k_block); ++k)
          chain = std::fma(a.at2<float>(m, k), b.at2<float>(k, n), chain);
        out = started ? chain + out : chain;
        started = true;
      }
      y.at2<float>(m, n) = out;
    }
  });
}

}  // namespace npukit::ref
