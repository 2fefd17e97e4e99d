// Gemm column block for AVX2: 8 columns in lanes.
#include <immintrin.h>

#include "gemm_fast.hpp"

#define NPUKIT_AVX2 __attribute__((target("avx2")))

namespace npukit::cpu {

NPUKIT_AVX2 void f32_gemm_block_avx2(const GemmProblem& p, const float* packed, int64_t n0,
                                     int64_t cols) {
  const int64_t M = p.a.dim(0), K = p.a.dim(1);
  const __m256 alpha = _mm256_set1_ps(p.alpha), beta = _mm256_set1_ps(p.beta);
  const bool has_c = !p.c.empty();
  const auto* a = static_cast<const float*>(p.a.raw());
  const int64_t as0 = p.a.stride(0), as1 = p.a.stride(1);
  for (int64_t r = 0; r < M; ++r) {
    const float* ar = a + r * as0;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t k = 0; k < K; ++k)
      acc = _mm256_add_ps(
          acc, _mm256_mul_ps(_mm256_set1_ps(ar[k * as1]), _mm256_loadu_ps(packed + k * 8)));
    __m256 out = _mm256_mul_ps(alpha, acc);
    if (has_c) {
      alignas(32) float cv[8] = {};
      for (int64_t l = 0; l < cols; ++l) cv[l] = p.c.at2<float>(r, n0 + l);
      out = _mm256_add_ps(out, _mm256_mul_ps(beta, _mm256_load_ps(cv)));
    }
    alignas(32) float o[8];
    _mm256_store_ps(o, out);
    for (int64_t l = 0; l < cols; ++l) p.y.at2<float>(r, n0 + l) = o[l];
  }
}

}  // namespace npukit::cpu
