// Group kernel of f32-dwconv-nchwc-avx512 (dwconv.hpp, DwGroup): 16 channels
// in the lanes, 16 x 16 in-register transposes, over f32-dwconv-nchwc-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "dwconv.hpp"

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu::dwconv_nchwc_avx512 {
#include "ops/cpu/f32-lanes-avx512.inc"
constexpr int kGroup = 8;  // chains at once
inline __m512 lo64(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
inline __m512 hi64(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
// 16 x 16: pairs of rows interleaved (32-bit, then 64-bit), then the
// 128-bit blocks regrouped in two rounds of shuffles.
inline void transpose(Vec (&r)[kLanes]) {
  Vec t[kLanes];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = lo64(t[i], t[i + 2]);
    r[i + 1] = hi64(t[i], t[i + 2]);
    r[i + 2] = lo64(t[i + 1], t[i + 3]);
    r[i + 3] = hi64(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0x88);
    t[4 + i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0xdd);
    t[8 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0x88);
    t[12 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0xdd);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
    r[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xdd);
    r[4 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0x88);
    r[12 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0xdd);
  }
}

}  // namespace npukit::cpu::dwconv_nchwc_avx512

#define NPUKIT_DWC_NS dwconv_nchwc_avx512
#define NPUKIT_DWC_FN f32_dwconv_group_avx512
#include "ops/cpu/f32-dwconv-nchwc-body.inc"
#undef NPUKIT_DWC_NS
#undef NPUKIT_DWC_FN

#include "ops/cpu/isa-end.inc"
