// Gemm column blocks for AVX-512: 16 columns in lanes, 4 rows at once (over
// f32-gemm-block-body.inc); and 128 columns (8 vectors) of one row at a time
// read in place from a b whose rows are contiguous.
#include <immintrin.h>

#include <cstdint>

#include "gemm_fast.hpp"

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu::gemm_avx512 {

#include "ops/cpu/f32-lanes-avx512.inc"
inline Vec load(const float* p) {
  return _mm512_load_ps(p);
}
inline void store_cols(const GemmProblem& p, int64_t r, int64_t n0, int64_t cols, Vec v) {
  _mm512_mask_storeu_ps(&p.y.at2<float>(r, n0), static_cast<__mmask16>((1u << cols) - 1u), v);
}

}  // namespace npukit::cpu::gemm_avx512

#define NPUKIT_GEMM_NS gemm_avx512
#define NPUKIT_GEMM_FN f32_gemm_block_avx512
#include "ops/cpu/f32-gemm-block-body.inc"
#undef NPUKIT_GEMM_NS
#undef NPUKIT_GEMM_FN

namespace npukit::cpu {

// One row at a time, 8 vectors of columns: 512 contiguous bytes of each row
// of b per step k (a column strip streams through the cache instead of one
// line per row) and 8 independent chains per row (each output's order
// unchanged: its products added in k order).
void f32_gemm_wide_avx512(const GemmProblem& p, int64_t n0) {
  constexpr int kV = kGemmWideColumns / 16;
  const int64_t M = p.a.dim(0), K = p.a.dim(1);
  const auto* a = static_cast<const float*>(p.a.raw());
  const auto* b = static_cast<const float*>(p.b.raw()) + n0;
  const int64_t as0 = p.a.stride(0), as1 = p.a.stride(1), bs0 = p.b.stride(0);
  using namespace gemm_avx512;
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

#include "ops/cpu/isa-end.inc"
