// AVX2 row kernel of the channels-last depthwise integer convolution
// (qconv_dw_nhwc.hpp), for hosts without AVX-512: 8 channels per vector; per
// tap pair the u8 codes of both taps widened into the two int16 halves of
// each lane, then vpmaddwd + vpaddd sums both products exactly (as the
// AVX-512 kernel, half the width); then the requantization of the NHWC GEMM
// (float(acc) * m, clamp, round to even, + y_zp).
#include "ops/cpu/qconv_dw_nhwc.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::qconv {

namespace {

// x[c] of two taps as the low and high int16 halves of 8 lanes.
inline __m256i tap_pair(const uint8_t* a, const uint8_t* b) {
  const __m256i lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a)));
  const __m256i hi = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b)));
  return _mm256_or_si256(lo, _mm256_slli_epi32(hi, 16));
}

// U vectors of 8 channels from channel c (c + 8 * U <= Cp): U independent
// sums (one chain of tap pairs would wait on the multiply-add latency).
template <int U>
inline void channels(const DwNhwcRow& r, const uint8_t* const* tap, uint8_t* y, int64_t c,
                     __m256 flo, __m256 fhi, __m256i yzp) {
  __m256i acc[U];
  for (int u = 0; u < U; ++u)
    acc[u] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r.offset + c + 8 * u));
  const int32_t* w = r.w + c;
  for (int64_t p = 0; p < r.pairs; ++p) {
    const uint8_t* a = tap[2 * p] + c;
    const uint8_t* b = tap[2 * p + 1] + c;
    for (int u = 0; u < U; ++u)
      acc[u] = _mm256_add_epi32(
          acc[u], _mm256_madd_epi16(
                      tap_pair(a + 8 * u, b + 8 * u),
                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + p * r.Cp + 8 * u))));
  }
  for (int u = 0; u < U; ++u) {
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[u]), _mm256_loadu_ps(r.multiplier + c + 8 * u));
    v = _mm256_min_ps(_mm256_max_ps(v, flo), fhi);  // never NaN: finite acc and multipliers
    const __m256i q = _mm256_add_epi32(
        _mm256_cvttps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)),
        yzp);
    // Codes: packs without saturation effects; 8 in the low bytes.
    const __m128i q16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    const __m128i codes = r.y_s8 ? _mm_packs_epi16(q16, q16) : _mm_packus_epi16(q16, q16);
    const int64_t left = r.C - c - 8 * u;
    if (left >= 8) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y + c + 8 * u), codes);
    } else if (left > 0) {  // the next pixel's channels follow
      alignas(16) uint8_t tmp[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(tmp), codes);
      std::memcpy(y + c + 8 * u, tmp, static_cast<size_t>(left));
    }
  }
}

}  // namespace

void dw_nhwc_avx2(const DwNhwcRow& r) {
  const int32_t lo = r.y_s8 ? -128 : 0, hi = r.y_s8 ? 127 : 255;
  const __m256 flo = _mm256_set1_ps(static_cast<float>(lo - r.y_zp));
  const __m256 fhi = _mm256_set1_ps(static_cast<float>(hi - r.y_zp));
  const __m256i yzp = _mm256_set1_epi32(r.y_zp);
  const uint8_t* own[kDwNhwcMaxTaps];
  for (int64_t i = 0; i < r.n; ++i) {
    const uint8_t* const* tap = r.tap_ptr;
    if (tap == nullptr) {
      const uint8_t* x = r.x + i * r.x_step;
      for (int64_t t = 0; t < 2 * r.pairs; ++t) own[t] = x + r.tap_off[t];
      tap = own;
    }
    uint8_t* y = r.y + i * r.y_step;
    int64_t c = 0;  // Cp is a multiple of 16
    for (; c + 32 <= r.Cp; c += 32) channels<4>(r, tap, y, c, flo, fhi, yzp);
    if (c < r.Cp) channels<2>(r, tap, y, c, flo, fhi, yzp);
  }
}

}  // namespace npukit::qconv

#include "ops/cpu/isa-end.inc"

#else  // not x86-64: never listed as runnable

namespace npukit::qconv {
void dw_nhwc_avx2(const DwNhwcRow& r) {
  dw_nhwc_portable(r);
}
}  // namespace npukit::qconv

#endif
