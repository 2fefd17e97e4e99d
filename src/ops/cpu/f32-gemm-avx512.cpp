// Gemm column block for AVX-512: 16 columns in lanes, 4 rows at once.
#include <immintrin.h>

#include "gemm_fast.hpp"

#define NPUKIT_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

namespace npukit::cpu {

NPUKIT_AVX512 void f32_gemm_block_avx512(const GemmProblem& p, const float* packed, int64_t n0,
                                         int64_t cols) {
  const int64_t M = p.a.dim(0), K = p.a.dim(1);
  const __mmask16 m = static_cast<__mmask16>((1u << cols) - 1u);
  const __m512 alpha = _mm512_set1_ps(p.alpha), beta = _mm512_set1_ps(p.beta);
  const bool has_c = !p.c.empty();
  const auto* a = static_cast<const float*>(p.a.raw());
  const int64_t as0 = p.a.stride(0), as1 = p.a.stride(1);
  for (int64_t r = 0; r < M; ++r) {
    const float* ar = a + r * as0;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t k = 0; k < K; ++k)
      acc = _mm512_add_ps(
          acc, _mm512_mul_ps(_mm512_set1_ps(ar[k * as1]), _mm512_loadu_ps(packed + k * 16)));
    __m512 out = _mm512_mul_ps(alpha, acc);
    float* yr = &p.y.at2<float>(r, n0);
    if (has_c) {
      // c may be broadcast (stride 0): gathered by scalar loads.
      alignas(64) float cv[16] = {};
      for (int64_t l = 0; l < cols; ++l) cv[l] = p.c.at2<float>(r, n0 + l);
      out = _mm512_add_ps(out, _mm512_mul_ps(beta, _mm512_load_ps(cv)));
    }
    _mm512_mask_storeu_ps(yr, m, out);
  }
}

}  // namespace npukit::cpu
