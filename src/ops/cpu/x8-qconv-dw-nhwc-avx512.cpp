// AVX-512 row kernels of the channels-last depthwise integer convolution
// (qconv_dw_nhwc.hpp): 16 channels per vector; per tap pair the u8 codes of
// both taps widened into the two int16 halves of each lane, then one
// vpdpwssd (VNNI) or vpmaddwd + vpaddd sums both products exactly; then the
// requantization of the NHWC GEMM (float(acc) * m, clamp, round to even,
// + y_zp).
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
#define NPUKIT_AVX512VNNI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))

namespace npukit::qconv {

namespace {

template <bool kVnni>
NPUKIT_AVX512VNNI inline __m512i add_pair(__m512i acc, __m512i x, __m512i w) {
  if constexpr (kVnni)
    return _mm512_dpwssd_epi32(acc, x, w);
  else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(x, w));
}

// x[c] of two taps as the low and high int16 halves of 16 lanes.
NPUKIT_AVX512VNNI inline __m512i tap_pair(const uint8_t* a, const uint8_t* b) {
  const __m512i lo = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a)));
  const __m512i hi = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b)));
  return _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16));
}

// U vectors of 16 channels from channel c: U independent sums (the
// multiply-add latency of one chain of tap pairs would leave the units idle).
template <bool kVnni, int U>
NPUKIT_AVX512VNNI inline void channels(const DwNhwcRow& r, const uint8_t* const* tap, uint8_t* y,
                                       int64_t c, __m512 flo, __m512 fhi, __m512i yzp) {
  __m512i acc[U];
  for (int u = 0; u < U; ++u) acc[u] = _mm512_loadu_si512(r.offset + c + 16 * u);
  const int32_t* w = r.w + c;
  for (int64_t p = 0; p < r.pairs; ++p) {
    const uint8_t* a = tap[2 * p] + c;
    const uint8_t* b = tap[2 * p + 1] + c;
    for (int u = 0; u < U; ++u)
      acc[u] = add_pair<kVnni>(acc[u], tap_pair(a + 16 * u, b + 16 * u),
                               _mm512_loadu_si512(w + p * r.Cp + 16 * u));
  }
  for (int u = 0; u < U; ++u) {
    __m512 v =
        _mm512_mul_ps(_mm512_cvtepi32_ps(acc[u]), _mm512_loadu_ps(r.multiplier + c + 16 * u));
    v = _mm512_min_ps(_mm512_max_ps(v, flo), fhi);  // never NaN: finite acc and multipliers
    const __m128i codes = _mm512_cvtepi32_epi8(_mm512_add_epi32(
        _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), yzp));
    const int64_t left = r.C - c - 16 * u;
    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
    _mm_mask_storeu_epi8(y + c + 16 * u, m, codes);
  }
}

template <bool kVnni>
NPUKIT_AVX512VNNI void row(const DwNhwcRow& r) {
  const int32_t lo = r.y_s8 ? -128 : 0, hi = r.y_s8 ? 127 : 255;
  const __m512 flo = _mm512_set1_ps(static_cast<float>(lo - r.y_zp));
  const __m512 fhi = _mm512_set1_ps(static_cast<float>(hi - r.y_zp));
  const __m512i yzp = _mm512_set1_epi32(r.y_zp);
  const uint8_t* own[kDwNhwcMaxTaps];
  for (int64_t i = 0; i < r.n; ++i) {
    const uint8_t* const* tap = r.tap_ptr;
    if (tap == nullptr) {
      const uint8_t* x = r.x + i * r.x_step;
      for (int64_t t = 0; t < 2 * r.pairs; ++t) own[t] = x + r.tap_off[t];
      tap = own;
    }
    uint8_t* y = r.y + i * r.y_step;
    int64_t c = 0;
    for (; c + 64 <= r.Cp; c += 64) channels<kVnni, 4>(r, tap, y, c, flo, fhi, yzp);
    if (c + 32 <= r.Cp) channels<kVnni, 2>(r, tap, y, c, flo, fhi, yzp), c += 32;
    if (c < r.Cp) channels<kVnni, 1>(r, tap, y, c, flo, fhi, yzp);
  }
}

}  // namespace

NPUKIT_AVX512 void dw_nhwc_avx512(const DwNhwcRow& r) {
  row<false>(r);
}
NPUKIT_AVX512VNNI void dw_nhwc_avx512vnni(const DwNhwcRow& r) {
  row<true>(r);
}

}  // namespace npukit::qconv

#else  // not x86-64: never listed as runnable

namespace npukit::qconv {
void dw_nhwc_avx512(const DwNhwcRow& r) {
  dw_nhwc_portable(r);
}
void dw_nhwc_avx512vnni(const DwNhwcRow& r) {
  dw_nhwc_portable(r);
}
}  // namespace npukit::qconv

#endif
