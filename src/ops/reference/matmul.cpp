#include "npukit/ops/matmul.hpp"
#include "npukit/parallel.hpp"

namespace npukit::ref {

void matmul_f32(const TensorView& a, const TensorView& b, const float* bias, int64_t bias_stride,
                const TensorView& y, bool result_add) {
  const int64_t M = a.dim(0), K = a.dim(1), N = b.dim(1);
  parallel_for(M, [&](int64_t m) {
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) acc += a.at2<float>(m, k) * b.at2<float>(k, n);
      if (bias) acc += bias[n * bias_stride];
      float& out = y.at2<float>(m, n);
      out = result_add ? out + acc : acc;
    }
  });
}

void matmul_f32(const TensorView& a, const TensorView& b, const float* bias, int64_t bias_stride,
                const TensorView& y, const MatmulParams& p) {
  if (p.accumulation == Fp32Accumulation::sequential && !p.flush_denormals)
    return matmul_f32(a, b, bias, bias_stride, y, p.result_add);
  const int64_t M = a.dim(0), K = a.dim(1), N = b.dim(1);
  const bool two = p.accumulation == Fp32Accumulation::interleaved;
  const Fp32Arith f{p.flush_denormals};
  parallel_for(M, [&](int64_t m) {
    for (int64_t n = 0; n < N; ++n) {
      float acc[2] = {0.0f, 0.0f};
      for (int64_t k = 0; k < K; ++k) {
        float& A = acc[two ? k % 2 : 0];
        A = f.add(A, f.mul(a.at2<float>(m, k), b.at2<float>(k, n)));
      }
      float r = two ? f.add(acc[0], acc[1]) : acc[0];
      if (bias) r = f.add(r, bias[n * bias_stride]);
      float& out = y.at2<float>(m, n);
      out = p.result_add ? f.add(r, out) : r;
    }
  });
}

}  // namespace npukit::ref
