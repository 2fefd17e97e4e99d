// Group kernel of f32-dwconv-nchwc-avx2 (dwconv.hpp, DwGroup): 8 channels in
// the lanes, 8 x 8 in-register transposes, over f32-dwconv-nchwc-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "dwconv.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu::dwconv_nchwc_avx2 {

using Vec = __m256;
using Mask = __m256i;
constexpr int64_t kLanes = 8;
constexpr int kGroup = 4;  // chains at once
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
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline Vec load_masked(const float* p, Mask m) {
  return _mm256_maskload_ps(p, m);  // masked-off lanes are not read (no fault)
}
inline void store_masked(float* p, Mask m, Vec v) {
  _mm256_maskstore_ps(p, m, v);
}
// 8 x 8: rows interleaved (32-bit, then 64-bit pairs), then 128-bit halves swapped in.
inline void transpose(Vec (&r)[kLanes]) {
  Vec t[kLanes], u[kLanes];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
    r[4 + i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
  }
}

}  // namespace npukit::cpu::dwconv_nchwc_avx2

#define NPUKIT_DWC_NS dwconv_nchwc_avx2
#define NPUKIT_DWC_FN f32_dwconv_group_avx2
#include "ops/cpu/f32-dwconv-nchwc-body.inc"
#undef NPUKIT_DWC_NS
#undef NPUKIT_DWC_FN

#include "ops/cpu/isa-end.inc"
