// Gemm column block for AVX2: 8 columns in lanes, 4 rows at once.
#include <immintrin.h>

#include "gemm_fast.hpp"

#define NPUKIT_AVX2 __attribute__((target("avx2")))

namespace npukit::cpu {

namespace {

// alpha * acc, + beta * c, stored to row r's columns [n0, n0 + cols).
NPUKIT_AVX2 void store_row(const GemmProblem& p, int64_t r, __m256 acc, int64_t n0, int64_t cols) {
  __m256 out = _mm256_mul_ps(_mm256_set1_ps(p.alpha), acc);
  if (!p.c.empty()) {
    alignas(32) float cv[8] = {};
    for (int64_t l = 0; l < cols; ++l) cv[l] = p.c.at2<float>(r, n0 + l);
    out = _mm256_add_ps(out, _mm256_mul_ps(_mm256_set1_ps(p.beta), _mm256_load_ps(cv)));
  }
  alignas(32) float o[8];
  _mm256_store_ps(o, out);
  for (int64_t l = 0; l < cols; ++l) p.y.at2<float>(r, n0 + l) = o[l];
}

}  // namespace

// Four rows at once: each row's sum is one chain of dependent additions, so
// four independent chains keep the adder busy (each row's order unchanged).
NPUKIT_AVX2 void f32_gemm_block_avx2(const GemmProblem& p, const float* packed, int64_t pitch,
                                     int64_t n0, int64_t cols) {
  const int64_t M = p.a.dim(0), K = p.a.dim(1);
  const auto* a = static_cast<const float*>(p.a.raw());
  const int64_t as0 = p.a.stride(0), as1 = p.a.stride(1);
  int64_t r = 0;
  for (; r + 4 <= M; r += 4) {
    const float *a0 = a + r * as0, *a1 = a0 + as0, *a2 = a1 + as0, *a3 = a2 + as0;
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    for (int64_t k = 0; k < K; ++k) {
      const __m256 b = _mm256_loadu_ps(packed + k * pitch);
      c0 = _mm256_add_ps(c0, _mm256_mul_ps(_mm256_set1_ps(a0[k * as1]), b));
      c1 = _mm256_add_ps(c1, _mm256_mul_ps(_mm256_set1_ps(a1[k * as1]), b));
      c2 = _mm256_add_ps(c2, _mm256_mul_ps(_mm256_set1_ps(a2[k * as1]), b));
      c3 = _mm256_add_ps(c3, _mm256_mul_ps(_mm256_set1_ps(a3[k * as1]), b));
    }
    store_row(p, r, c0, n0, cols);
    store_row(p, r + 1, c1, n0, cols);
    store_row(p, r + 2, c2, n0, cols);
    store_row(p, r + 3, c3, n0, cols);
  }
  for (; r < M; ++r) {
    const float* ar = a + r * as0;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t k = 0; k < K; ++k)
      acc = _mm256_add_ps(
          acc, _mm256_mul_ps(_mm256_set1_ps(ar[k * as1]), _mm256_loadu_ps(packed + k * pitch)));
    store_row(p, r, acc, n0, cols);
  }
}

}  // namespace npukit::cpu
