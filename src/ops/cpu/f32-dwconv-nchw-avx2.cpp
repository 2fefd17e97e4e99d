// Plane kernel of the fp32 depthwise family for AVX2: 8 consecutive outputs
// per vector, up to 4 vectors' chains at once (independent chains hide the
// add latency), over f32-dwconv-plane-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "dwconv.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu::dwconv_avx2 {

using Vec = __m256;
using Mask = __m256i;
constexpr int64_t kLanes = 8;
constexpr int kGroup = 4;
inline Vec zero() {
  return _mm256_setzero_ps();
}
inline Vec set1(float v) {
  return _mm256_set1_ps(v);
}
inline Vec loadu(const float* p) {
  return _mm256_loadu_ps(p);
}
inline void storeu(float* p, Vec v) {
  _mm256_storeu_ps(p, v);
}
inline Vec add(Vec a, Vec b) {
  return _mm256_add_ps(a, b);
}
inline Vec mul(Vec a, Vec b) {
  return _mm256_mul_ps(a, b);
}
inline Vec fmadd(Vec a, Vec b, Vec c) {
  return _mm256_fmadd_ps(a, b, c);
}
inline Vec vmax(Vec a, Vec b) {
  return _mm256_max_ps(a, b);  // a > b ? a : b, as maxps
}
inline Vec vmin(Vec a, Vec b) {
  return _mm256_min_ps(a, b);  // a < b ? a : b, as minps
}
inline Mask first_lanes(int64_t n) {
  const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), index);
}
inline Vec load_masked(const float* p, Mask m) {
  return _mm256_maskload_ps(p, m);
}
inline void store_masked(float* p, Mask m, Vec v) {
  _mm256_maskstore_ps(p, m, v);
}

}  // namespace npukit::cpu::dwconv_avx2

#define NPUKIT_DWCONV_NS dwconv_avx2
#define NPUKIT_DWCONV_FN f32_dwconv_plane_avx2
#include "ops/cpu/f32-dwconv-plane-body.inc"
#undef NPUKIT_DWCONV_NS
#undef NPUKIT_DWCONV_FN

#include "ops/cpu/isa-end.inc"
