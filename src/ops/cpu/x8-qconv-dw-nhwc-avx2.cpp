// AVX2 row kernel of the channels-last depthwise integer convolution
// (qconv_dw_nhwc.hpp), for hosts without AVX-512: 8 channels per vector over
// x8-qconv-dw-nhwc-body.inc; vpmaddwd + vpaddd per tap pair, codes packed
// without saturation effects (the values are within the code range).
#include "ops/cpu/qconv_dw_nhwc.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::qconv::dw_nhwc_avx2_lanes {

using VecI = __m256i;
using VecF = __m256;
constexpr int64_t kLanes = 8;
inline VecI load_i32(const int32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
inline VecF load_f32(const float* p) {
  return _mm256_loadu_ps(p);
}
inline VecI set1_i32(int32_t v) {
  return _mm256_set1_epi32(v);
}
inline VecF set1_f32(float v) {
  return _mm256_set1_ps(v);
}
inline VecI widen_u8(const uint8_t* p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline VecI tap_halves(VecI lo, VecI hi) {
  return _mm256_or_si256(lo, _mm256_slli_epi32(hi, 16));
}
inline VecI add_pair(VecI acc, VecI x, VecI w) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(x, w));
}
inline VecI requant(VecI acc, VecF m, VecF flo, VecF fhi, VecI yzp) {
  __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), m);
  v = _mm256_min_ps(_mm256_max_ps(v, flo), fhi);
  return _mm256_add_epi32(
      _mm256_cvttps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)), yzp);
}
inline void store_codes(uint8_t* y, int64_t left, VecI q, bool s8) {
  const __m128i q16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  const __m128i codes = s8 ? _mm_packs_epi16(q16, q16) : _mm_packus_epi16(q16, q16);
  if (left >= 8) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y), codes);
  } else if (left > 0) {  // the next pixel's channels follow
    alignas(16) uint8_t tmp[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(tmp), codes);
    std::memcpy(y, tmp, static_cast<size_t>(left));
  }
}

}  // namespace npukit::qconv::dw_nhwc_avx2_lanes

#define NPUKIT_DW_NHWC_NS dw_nhwc_avx2_lanes
#define NPUKIT_DW_NHWC_FN dw_nhwc_avx2
#include "ops/cpu/x8-qconv-dw-nhwc-body.inc"
#undef NPUKIT_DW_NHWC_NS
#undef NPUKIT_DW_NHWC_FN

#include "ops/cpu/isa-end.inc"

#else  // not x86-64: never listed as runnable

namespace npukit::qconv {
void dw_nhwc_avx2(const DwNhwcRow& r) {
  dw_nhwc_portable(r);
}
}  // namespace npukit::qconv

#endif
