// AVX-512 VNNI micro-kernel of the channels-last integer convolution
// (qconv_nhwc.hpp): per channel quad, 4 vectors of 16 output channels'
// weights and one broadcast u32 (4 channels) per pixel; vpdpbusd sums the 4
// u8 x s8 products per lane exactly in int32, onto the lane's offset. The
// requantization is store_avx512's, clamped by the
// saturating packs (one float min instead of a min and a max, y_zp added
// to int16 pairs).
#include "ops/cpu/qconv_nhwc.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "ops/cpu/isa-avx512vnni-begin.inc"

namespace npukit::qconv {

namespace {

inline __m512i bcast(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

// float(acc) * m rounded to nearest even, clamped above to the code range
// minus y_zp only: past it the conversion would give INT_MIN. Below it the
// saturating packs of pack64 clamp: for an integer bound, clamping before or
// after rounding gives the same integer, and INT_MIN (v < -2^31) is below too.
inline __m512i rounded(__m512i a, const float* m, __m512 fhi) {
  const __m512 v = _mm512_min_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(a), _mm512_loadu_ps(m)), fhi);
  return _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// The 64 codes of four vectors of rounded values: int32 -> int16 with
// saturation, + y_zp with int16 saturation (a saturated value stays past the
// code range on its side: |y_zp| <= 255), -> u8/s8 with saturation (the
// reference's clamp), and one dword permutation that undoes the packs'
// per-128-bit-lane interleaving.
inline __m512i pack64(__m512i a, __m512i b, __m512i c, __m512i d, __m512i yzp16, bool s8) {
  const __m512i ab = _mm512_adds_epi16(_mm512_packs_epi32(a, b), yzp16);
  const __m512i cd = _mm512_adds_epi16(_mm512_packs_epi32(c, d), yzp16);
  const __m512i bytes = s8 ? _mm512_packs_epi16(ab, cd) : _mm512_packus_epi16(ab, cd);
  // Dword 4k + j holds 4 codes of vector j, lane k; they go to 4j + k.
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_epi32(order, bytes);
}

// R pixels x V vectors of 16 channels (V < 4: a channels-last y's last
// block, whose lanes past OC are not computed).
template <int R, int V>
void block(const NhwcBlock& b) {
  __m512i acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_loadu_si512(b.offset + 16 * v);
  const int8_t* w = b.w;
  for (int64_t t = 0; t < b.taps; ++t) {
    const uint8_t* x[R];
    for (int r = 0; r < R; ++r) x[r] = b.px[r] + b.tap_off[t];
    for (int64_t q = 0; q < b.C4; ++q, w += kNhwcOcBlock * 4) {
      __m512i wv[V];
      for (int v = 0; v < V; ++v) wv[v] = _mm512_loadu_si512(w + 64 * v);
      for (int r = 0; r < R; ++r) {
        const __m512i xv = bcast(x[r] + q * 4);
        for (int v = 0; v < V; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], xv, wv[v]);
      }
    }
  }
  const __m512 fhi = _mm512_set1_ps(static_cast<float>((b.y_s8 ? 127 : 255) - b.y_zp));
  const __m512i yzp16 = _mm512_set1_epi16(static_cast<int16_t>(b.y_zp));
  // V < 4 packs copies of the first vector in place of the missing ones; a
  // channels-last y's last block stores only its own channels (the next
  // pixel follows).
  const __mmask64 keep = b.lanes >= 64 ? ~__mmask64{0} : (__mmask64{1} << b.lanes) - 1;
  // Unrolled: with a loop over r, GCC kept all accumulators in memory (24
  // stores and loads per block, as costly as a short reduction's products).
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    __m512i q[4];
    for (int v = 0; v < 4; ++v)
      q[v] = v < V ? rounded(acc[r][v % V], b.multiplier + 16 * v, fhi) : q[0];
    const __m512i codes = pack64(q[0], q[1], q[2], q[3], yzp16, b.y_s8);
    if (V == 4 && b.lanes == 64)
      _mm512_storeu_si512(b.y + r * b.y_stride, codes);
    else
      _mm512_mask_storeu_epi8(b.y + r * b.y_stride, keep, codes);
  }
}

template <int V>
void pixels(const NhwcBlock& b, int R) {
  switch (R) {
    case 6:
      return block<6, V>(b);
    case 5:
      return block<5, V>(b);
    case 4:
      return block<4, V>(b);
    case 3:
      return block<3, V>(b);
    case 2:
      return block<2, V>(b);
    default:
      return block<1, V>(b);
  }
}

}  // namespace

void nhwc_block_avx512vnni(const NhwcBlock& b, int R) {
  switch ((b.lanes + 15) / 16) {
    case 1:
      return pixels<1>(b, R);
    case 2:
      return pixels<2>(b, R);
    case 3:
      return pixels<3>(b, R);
    default:
      return pixels<4>(b, R);
  }
}

}  // namespace npukit::qconv

#include "ops/cpu/isa-end.inc"

#else  // not x86-64: never listed as runnable

namespace npukit::qconv {
void nhwc_block_avx512vnni(const NhwcBlock& b, int R) {
  nhwc_block_portable(b, R);
}
}  // namespace npukit::qconv

#endif
