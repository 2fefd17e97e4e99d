// Plane kernel of the fp32 depthwise family for AVX-512: 16 consecutive
// outputs per vector, up to 8 vectors' chains at once (independent chains
// hide the add latency), over f32-dwconv-plane-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "dwconv.hpp"

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu::dwconv_avx512 {
#include "ops/cpu/f32-lanes-avx512.inc"
constexpr int kGroup = 8;
// The lines walk's block: accumulators and the 9 weights in registers
// (stride 2 reads more lines per row: fewer rows at once).
constexpr int kLineRows = 4, kLineVectors = 4, kLineRows2 = 2;
// shifted_rows (stride 2, rows of two edge vectors, 144@56): 12 registers per row.
constexpr int kLineRows2Edge = 4;
// even / odd: per 128-bit block k, a[4k] a[4k+2] b[4k] b[4k+2] (odd: + 1),
// in-lane shuffles; unpermute puts the 16 even (odd) values back in order.
inline Vec even(Vec a, Vec b) {
  return _mm512_shuffle_ps(a, b, 0x88);
}
inline Vec odd(Vec a, Vec b) {
  return _mm512_shuffle_ps(a, b, 0xdd);
}
inline Vec unpermute(Vec v) {
  const __m512i i = _mm512_setr_epi32(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
  return _mm512_permutexvar_ps(i, v);
}
// even_in_order / odd_in_order: the even (odd) lanes of a then b, in order
// (vpermt2ps); shift_in: lanes 1 .. 15 of v, then lane 0 of next (valignd,
// the masked form with every lane: the plain one's undefined pass-through
// operand trips GCC 12's -Wuninitialized); hold: a mask in a mask register.
inline Vec even_in_order(Vec a, Vec b) {
  const __m512i i = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_ps(a, i, b);
}
inline Vec odd_in_order(Vec a, Vec b) {
  const __m512i i = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  return _mm512_permutex2var_ps(a, i, b);
}
inline Vec shift_in(Vec v, Vec next) {
  const __m512i a = _mm512_castps_si512(v);
  return _mm512_castsi512_ps(_mm512_mask_alignr_epi32(a, 0xffff, _mm512_castps_si512(next), a, 1));
}
inline void hold(Mask& m) {
  asm("" : "+k"(m));
}
inline Mask lane_range(int64_t lo, int64_t hi) {
  lo = lo < 0 ? 0 : lo;
  hi = hi > kLanes ? kLanes : hi;
  return hi <= lo ? Mask(0) : static_cast<Mask>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

}  // namespace npukit::cpu::dwconv_avx512

#define NPUKIT_DWCONV_NS dwconv_avx512
#define NPUKIT_DWCONV_FN f32_dwconv_plane_avx512
#include "ops/cpu/f32-dwconv-plane-body.inc"
#undef NPUKIT_DWCONV_NS
#undef NPUKIT_DWCONV_FN

#include "ops/cpu/isa-end.inc"
