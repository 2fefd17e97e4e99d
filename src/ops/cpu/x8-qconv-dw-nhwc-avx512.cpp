// AVX-512 pixel kernel of the channels-last depthwise integer convolution
// (qconv_dw_nhwc.hpp): 16 channels per vector, per tap the u8 codes widened
// to int32 and multiplied by w' (vpmulld, exact), then the requantization of
// the NHWC GEMM (float(acc) * m, clamp, round to even, + y_zp).
#include "ops/cpu/qconv_dw_nhwc.hpp"

#if defined(__x86_64__)
// GCC 12 reports its own _mm512_undefined_* placeholders inside the AVX-512
// intrinsics as (maybe-)uninitialized (false positives of the header).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#define NPUKIT_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

namespace npukit::qconv {

NPUKIT_AVX512 void dw_nhwc_avx512(const DwNhwcPixel& px) {
  const int32_t lo = px.y_s8 ? -128 : 0, hi = px.y_s8 ? 127 : 255;
  const __m512 flo = _mm512_set1_ps(static_cast<float>(lo - px.y_zp));
  const __m512 fhi = _mm512_set1_ps(static_cast<float>(hi - px.y_zp));
  const __m512i yzp = _mm512_set1_epi32(px.y_zp);
  for (int64_t c = 0; c < px.C; c += kDwNhwcLanes) {
    __m512i a0 = _mm512_loadu_si512(px.offset + c), a1 = _mm512_setzero_si512();
    const uint8_t* x = px.x + c;
    const int32_t* w = px.w + c;
    int64_t t = 0;
    for (; t + 2 <= px.taps; t += 2) {  // two chains: the multiplies overlap
      const __m512i x0 = _mm512_cvtepu8_epi32(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + px.tap_off[t])));
      const __m512i x1 = _mm512_cvtepu8_epi32(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + px.tap_off[t + 1])));
      a0 = _mm512_add_epi32(a0, _mm512_mullo_epi32(x0, _mm512_loadu_si512(w + t * px.Cp)));
      a1 = _mm512_add_epi32(a1, _mm512_mullo_epi32(x1, _mm512_loadu_si512(w + (t + 1) * px.Cp)));
    }
    if (t < px.taps) {
      const __m512i x0 = _mm512_cvtepu8_epi32(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + px.tap_off[t])));
      a0 = _mm512_add_epi32(a0, _mm512_mullo_epi32(x0, _mm512_loadu_si512(w + t * px.Cp)));
    }
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(a0, a1)),
                             _mm512_loadu_ps(px.multiplier + c));
    v = _mm512_min_ps(_mm512_max_ps(v, flo), fhi);  // never NaN: finite acc and multipliers
    const __m128i codes = _mm512_cvtepi32_epi8(_mm512_add_epi32(
        _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), yzp));
    const int64_t n = px.C - c;
    const __mmask16 m = n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
    _mm_mask_storeu_epi8(px.y + c, m, codes);
  }
}

}  // namespace npukit::qconv

#else  // not x86-64: never listed as runnable

namespace npukit::qconv {
void dw_nhwc_avx512(const DwNhwcPixel& px) {
  dw_nhwc_portable(px);
}
}  // namespace npukit::qconv

#endif
