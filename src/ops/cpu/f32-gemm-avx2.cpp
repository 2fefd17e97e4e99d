// Gemm column block for AVX2: 8 columns in lanes, 4 rows at once, over
// f32-gemm-block-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "gemm_fast.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu::gemm_avx2 {

using Vec = __m256;
constexpr int64_t kLanes = 8;
inline Vec zero() {
  return _mm256_setzero_ps();
}
inline Vec set1(float v) {
  return _mm256_set1_ps(v);
}
inline Vec loadu(const float* p) {
  return _mm256_loadu_ps(p);
}
inline Vec load(const float* p) {
  return _mm256_load_ps(p);
}
inline Vec add(Vec a, Vec b) {
  return _mm256_add_ps(a, b);
}
inline Vec mul(Vec a, Vec b) {
  return _mm256_mul_ps(a, b);
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
