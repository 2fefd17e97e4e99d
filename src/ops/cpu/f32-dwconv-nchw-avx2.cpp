// Plane kernel of the fp32 depthwise family for AVX2: 8 consecutive outputs
// per vector, up to 4 vectors' chains at once (independent chains hide the
// add latency), over f32-dwconv-plane-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "dwconv.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu::dwconv_avx2 {
#include "ops/cpu/f32-lanes-avx2.inc"
constexpr int kGroup = 4;
// The lines walk's block: 8 accumulators, the 9 weights read from memory
// (16 registers). Stride 1 in blocks of 4 rows, not 2: fewer edge blocks and
// mask set-ups per row (the bundled fp32 model's 1 -> 8 conv at the AVX2
// cap 3.36 -> 2.83 ms; mobilenet_v2's stride-1 layers 10-20% faster).
constexpr int kLineRows = 4, kLineVectors = 2, kLineRows2 = 2, kLineRows2Edge = 2;
// even / odd: per 128-bit half a[4k] a[4k+2] b[4k] b[4k+2] (odd: + 1),
// in-lane shuffles; unpermute regroups the halves' pairs into order.
inline Vec even(Vec a, Vec b) {
  return _mm256_shuffle_ps(a, b, 0x88);
}
inline Vec odd(Vec a, Vec b) {
  return _mm256_shuffle_ps(a, b, 0xdd);
}
inline Vec unpermute(Vec v) {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xd8));
}
// even_in_order / odd_in_order: even / odd, then unpermuted; shift_in:
// lanes 1 .. 7 of v, then lane 0 of next; hold: nothing (masks are vectors).
inline Vec even_in_order(Vec a, Vec b) {
  return unpermute(even(a, b));
}
inline Vec odd_in_order(Vec a, Vec b) {
  return unpermute(odd(a, b));
}
inline Vec shift_in(Vec v, Vec next) {
  const __m256i down = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0);
  return _mm256_blend_ps(_mm256_permutevar8x32_ps(v, down),
                         _mm256_permutevar8x32_ps(next, _mm256_setzero_si256()), 0x80);
}
inline void hold(Mask&) {}
inline Mask lane_range(int64_t lo, int64_t hi) {
  lo = lo < -1 ? -1 : lo > kLanes ? kLanes : lo;
  hi = hi < 0 ? 0 : hi > kLanes ? kLanes : hi;
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), lane),
                          _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(static_cast<int>(lo) - 1)));
}

}  // namespace npukit::cpu::dwconv_avx2

#define NPUKIT_DWCONV_NS dwconv_avx2
#define NPUKIT_DWCONV_FN f32_dwconv_plane_avx2
#include "ops/cpu/f32-dwconv-plane-body.inc"
#undef NPUKIT_DWCONV_NS
#undef NPUKIT_DWCONV_FN

#include "ops/cpu/isa-end.inc"
