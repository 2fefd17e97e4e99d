// Group kernel of f32-dwconv-nchwc-avx2 (dwconv.hpp, DwGroup): 8 channels in
// the lanes, 8 x 8 in-register transposes, over f32-dwconv-nchwc-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "dwconv.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu::dwconv_nchwc_avx2 {
#include "ops/cpu/f32-lanes-avx2.inc"
constexpr int kGroup = 4;                            // chains at once
constexpr int kNhwcPositions = 4, kNhwcVectors = 2;  // the channels-last row walk's block
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
#define NPUKIT_DWC_ROWS_FN f32_dwconv_nhwc_rows_avx2
#include "ops/cpu/f32-dwconv-nchwc-body.inc"
#include "ops/cpu/f32-dwconv-nhwc-body.inc"
#undef NPUKIT_DWC_NS
#undef NPUKIT_DWC_FN
#undef NPUKIT_DWC_ROWS_FN

#include "ops/cpu/isa-end.inc"
