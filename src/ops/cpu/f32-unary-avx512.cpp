// Unary kernels for AVX-512F: 16 lanes over f32-unary-body.inc. Max/min are
// compare + masked blend so that NaN takes the reference's branch.
#include <immintrin.h>

#include <cstdint>

#include "ops/cpu/unary_kernels.hpp"

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu::unary_avx512 {

using Vec = __m512;
constexpr int64_t kLanes = 16;
inline Vec set1(float v) {
  return _mm512_set1_ps(v);
}
inline Vec zero() {
  return _mm512_setzero_ps();
}
inline Vec load(const float* p) {
  return _mm512_loadu_ps(p);
}
inline void store(float* p, Vec v) {
  _mm512_storeu_ps(p, v);
}
inline Vec add(Vec a, Vec b) {
  return _mm512_add_ps(a, b);
}
inline Vec mul(Vec a, Vec b) {
  return _mm512_mul_ps(a, b);
}
inline Vec div(Vec a, Vec b) {
  return _mm512_div_ps(a, b);
}
inline Vec fmadd(Vec a, Vec b, Vec c) {
  return _mm512_fmadd_ps(a, b, c);
}
inline Vec vmax(Vec a, Vec b) {
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ), b, a);
}
inline Vec vmin(Vec a, Vec b) {
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), b, a);
}

}  // namespace npukit::cpu::unary_avx512

#define NPUKIT_UNARY_NS unary_avx512
#define NPUKIT_UNARY_FN f32_unary_avx512
#include "ops/cpu/f32-unary-body.inc"
#undef NPUKIT_UNARY_NS
#undef NPUKIT_UNARY_FN

#include "ops/cpu/isa-end.inc"
