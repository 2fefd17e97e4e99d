// Unary kernels for AVX2 + FMA: 8 lanes over f32-unary-body.inc. Max/min are
// compare + blend so that NaN takes the reference's branch.
#include <immintrin.h>

#include <cstdint>

#include "ops/cpu/unary_kernels.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu::unary_avx2 {

using Vec = __m256;
constexpr int64_t kLanes = 8;
inline Vec set1(float v) {
  return _mm256_set1_ps(v);
}
inline Vec zero() {
  return _mm256_setzero_ps();
}
inline Vec load(const float* p) {
  return _mm256_loadu_ps(p);
}
inline void store(float* p, Vec v) {
  _mm256_storeu_ps(p, v);
}
inline Vec add(Vec a, Vec b) {
  return _mm256_add_ps(a, b);
}
inline Vec mul(Vec a, Vec b) {
  return _mm256_mul_ps(a, b);
}
inline Vec div(Vec a, Vec b) {
  return _mm256_div_ps(a, b);
}
inline Vec fmadd(Vec a, Vec b, Vec c) {
  return _mm256_fmadd_ps(a, b, c);
}
inline Vec vmax(Vec a, Vec b) {
  return _mm256_blendv_ps(b, a, _mm256_cmp_ps(a, b, _CMP_GT_OQ));
}
inline Vec vmin(Vec a, Vec b) {
  return _mm256_blendv_ps(b, a, _mm256_cmp_ps(a, b, _CMP_LT_OQ));
}

}  // namespace npukit::cpu::unary_avx2

#define NPUKIT_UNARY_NS unary_avx2
#define NPUKIT_UNARY_FN f32_unary_avx2
#include "ops/cpu/f32-unary-body.inc"
#undef NPUKIT_UNARY_NS
#undef NPUKIT_UNARY_FN

#include "ops/cpu/isa-end.inc"
