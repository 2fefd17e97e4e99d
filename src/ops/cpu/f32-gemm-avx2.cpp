// Gemm column block for AVX2: 8 columns in lanes, 4 rows at once, over
// f32-gemm-block-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "gemm_fast.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu::gemm_avx2 {

#include "ops/cpu/f32-lanes-avx2.inc"
inline Vec load(const float* p) {
  return _mm256_load_ps(p);
}
inline void store_cols(const GemmProblem& p, int64_t r, int64_t n0, int64_t cols, Vec v) {
  alignas(32) float o[kLanes];
  _mm256_store_ps(o, v);
  for (int64_t l = 0; l < cols; ++l) p.y.at2<float>(r, n0 + l) = o[l];
}

}  // namespace npukit::cpu::gemm_avx2

#define NPUKIT_GEMM_NS gemm_avx2
#define NPUKIT_GEMM_FN f32_gemm_block_avx2
#include "ops/cpu/f32-gemm-block-body.inc"
#undef NPUKIT_GEMM_NS
#undef NPUKIT_GEMM_FN

#include "ops/cpu/isa-end.inc"
