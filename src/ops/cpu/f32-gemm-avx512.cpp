// Gemm column blocks for AVX-512: 16 columns in lanes, 4 rows at once; and
// 128 columns (8 vectors) of one row at a time read in place from a b whose
// rows are contiguous.
#include <immintrin.h>

#include "gemm_fast.hpp"

#define NPUKIT_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

namespace npukit::cpu {

namespace {

// alpha * acc, + beta * c, stored to row r's columns [n0, n0 + cols).
NPUKIT_AVX512 void store_row(const GemmProblem& p, int64_t r, __m512 acc, int64_t n0,
                             int64_t cols) {
  const __mmask16 m = static_cast<__mmask16>((1u << cols) - 1u);
  __m512 out = _mm512_mul_ps(_mm512_set1_ps(p.alpha), acc);
  if (!p.c.empty()) {
    // c may be broadcast (stride 0): gathered by scalar loads.
    alignas(64) float cv[16] = {};
    for (int64_t l = 0; l < cols; ++l) cv[l] = p.c.at2<float>(r, n0 + l);
    out = _mm512_add_ps(out, _mm512_mul_ps(_mm512_set1_ps(p.beta), _mm512_load_ps(cv)));
  }
  _mm512_mask_storeu_ps(&p.y.at2<float>(r, n0), m, out);
}

}  // namespace

// Four rows at once: each row's sum is one chain of dependent additions, so
// four independent chains keep the adder busy (each row's order unchanged).
NPUKIT_AVX512 void f32_gemm_block_avx512(const GemmProblem& p, const float* packed, int64_t pitch,
                                         int64_t n0, int64_t cols) {
  const int64_t M = p.a.dim(0), K = p.a.dim(1);
  const auto* a = static_cast<const float*>(p.a.raw());
  const int64_t as0 = p.a.stride(0), as1 = p.a.stride(1);
  int64_t r = 0;
  for (; r + 4 <= M; r += 4) {
    const float *a0 = a + r * as0, *a1 = a0 + as0, *a2 = a1 + as0, *a3 = a2 + as0;
    __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    for (int64_t k = 0; k < K; ++k) {
      const __m512 b = _mm512_loadu_ps(packed + k * pitch);
      c0 = _mm512_add_ps(c0, _mm512_mul_ps(_mm512_set1_ps(a0[k * as1]), b));
      c1 = _mm512_add_ps(c1, _mm512_mul_ps(_mm512_set1_ps(a1[k * as1]), b));
      c2 = _mm512_add_ps(c2, _mm512_mul_ps(_mm512_set1_ps(a2[k * as1]), b));
      c3 = _mm512_add_ps(c3, _mm512_mul_ps(_mm512_set1_ps(a3[k * as1]), b));
    }
    store_row(p, r, c0, n0, cols);
    store_row(p, r + 1, c1, n0, cols);
    store_row(p, r + 2, c2, n0, cols);
    store_row(p, r + 3, c3, n0, cols);
  }
  for (; r < M; ++r) {
    const float* ar = a + r * as0;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t k = 0; k < K; ++k)
      acc = _mm512_add_ps(
          acc, _mm512_mul_ps(_mm512_set1_ps(ar[k * as1]), _mm512_loadu_ps(packed + k * pitch)));
    store_row(p, r, acc, n0, cols);
  }
}

// One row at a time, 8 vectors of columns: 512 contiguous bytes of each row
// of b per step k (a column strip streams through the cache instead of one
// line per row) and 8 independent chains per row (each output's order
// unchanged: its products added in k order).
NPUKIT_AVX512 void f32_gemm_wide_avx512(const GemmProblem& p, int64_t n0) {
  constexpr int kV = kGemmWideColumns / 16;
  const int64_t M = p.a.dim(0), K = p.a.dim(1);
  const auto* a = static_cast<const float*>(p.a.raw());
  const auto* b = static_cast<const float*>(p.b.raw()) + n0;
  const int64_t as0 = p.a.stride(0), as1 = p.a.stride(1), bs0 = p.b.stride(0);
  for (int64_t r = 0; r < M; ++r) {
    const float* ar = a + r * as0;
    __m512 acc[kV];
    for (int v = 0; v < kV; ++v) acc[v] = _mm512_setzero_ps();
    for (int64_t k = 0; k < K; ++k) {
      const __m512 av = _mm512_set1_ps(ar[k * as1]);
      const float* bk = b + k * bs0;
      for (int v = 0; v < kV; ++v)
        acc[v] = _mm512_add_ps(acc[v], _mm512_mul_ps(av, _mm512_loadu_ps(bk + v * 16)));
    }
    for (int v = 0; v < kV; ++v) store_row(p, r, acc[v], n0 + v * 16, 16);
  }
}

}  // namespace npukit::cpu
