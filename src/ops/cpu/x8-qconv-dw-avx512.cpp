// AVX-512 and AVX2 output rows of the depthwise integer convolution
// (x8-qconv-dw.cpp) with one tap per product: 16 (8) output columns per
// step over x8-qconv-dw-taps-body.inc. AVX-512 masks the loads and stores of
// the last columns; AVX2 computes one more whole vector (its taps read past
// the row stay within the plane's slack, see run_depthwise) and stores it
// through a stack copy (7x7 and 14x14 stride-2 rows are all tail). Also the
// AVX-512 plane fill.
#include "ops/cpu/qconv_gemm.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::qconv::dw_taps_avx512_lanes {

using Vec = __m512i;
constexpr int64_t kLanes = 16;
inline __mmask16 first_lanes(int64_t left) {  // left > 0
  return left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
}
inline Vec zero() {
  return _mm512_setzero_si512();
}
inline Vec set1(int32_t v) {
  return _mm512_set1_epi32(v);
}
// The columns past the end are not loaded.
inline Vec load_s1(const int16_t* s, int64_t left) {
  return _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(first_lanes(left), s));
}
inline Vec load_s2(const int16_t* s, int64_t left) {
  return _mm512_maskz_loadu_epi32(first_lanes(left), s);
}
inline Vec even_halves(Vec v) {
  return _mm512_srai_epi32(_mm512_slli_epi32(v, 16), 16);
}
inline Vec mul_add(Vec acc, Vec x, Vec w) {
  return _mm512_add_epi32(acc, _mm512_mullo_epi32(x, w));
}
inline void store(int32_t* out, Vec a, int64_t left) {
  _mm512_mask_storeu_epi32(out, first_lanes(left), a);
}

}  // namespace npukit::qconv::dw_taps_avx512_lanes

#define NPUKIT_DW_TAPS_NS dw_taps_avx512_lanes
#define NPUKIT_DW_TAPS_FN dw_row_avx512
#include "ops/cpu/x8-qconv-dw-taps-body.inc"
#undef NPUKIT_DW_TAPS_NS
#undef NPUKIT_DW_TAPS_FN

namespace npukit::qconv {

// The plane fill 32 columns per step (zero-extend, subtract), the last step
// masked so that the borders next to the interior stay zero.
void dw_fill_avx512(const uint8_t* src, int64_t sh, int64_t sw, int64_t H, int64_t W, int32_t zp,
                    uint8_t flip, int16_t* dst, int64_t Wp) {
  if (sw != 1) return dw_fill_portable(src, sh, sw, H, W, zp, flip, dst, Wp);
  const __m256i f = _mm256_set1_epi8(static_cast<char>(flip));
  const __m512i z = _mm512_set1_epi16(static_cast<int16_t>(zp + (flip ? 128 : 0)));
  for (int64_t h = 0; h < H; ++h) {
    const uint8_t* s = src + h * sh;
    int16_t* d = dst + h * Wp;
    for (int64_t w = 0; w < W; w += 32) {
      const __mmask32 k =
          W - w >= 32 ? ~__mmask32(0) : static_cast<__mmask32>((uint64_t{1} << (W - w)) - 1);
      const __m256i v = _mm256_xor_si256(_mm256_maskz_loadu_epi8(k, s + w), f);
      _mm512_mask_storeu_epi16(d + w, k, _mm512_sub_epi16(_mm512_cvtepu8_epi16(v), z));
    }
  }
}

}  // namespace npukit::qconv

#include "ops/cpu/isa-end.inc"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::qconv::dw_taps_avx2_lanes {

using Vec = __m256i;
constexpr int64_t kLanes = 8;
inline Vec zero() {
  return _mm256_setzero_si256();
}
inline Vec set1(int32_t v) {
  return _mm256_set1_epi32(v);
}
inline Vec load_s1(const int16_t* s, int64_t) {
  return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
}
inline Vec load_s2(const int16_t* s, int64_t) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
}
inline Vec even_halves(Vec v) {
  return _mm256_srai_epi32(_mm256_slli_epi32(v, 16), 16);
}
inline Vec mul_add(Vec acc, Vec x, Vec w) {
  return _mm256_add_epi32(acc, _mm256_mullo_epi32(x, w));
}
inline void store(int32_t* out, Vec a, int64_t left) {
  if (left >= 8) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), a);
    return;
  }
  alignas(32) int32_t last[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(last), a);
  std::memcpy(out, last, static_cast<size_t>(left) * sizeof(int32_t));
}

}  // namespace npukit::qconv::dw_taps_avx2_lanes

#define NPUKIT_DW_TAPS_NS dw_taps_avx2_lanes
#define NPUKIT_DW_TAPS_FN dw_row_avx2
#include "ops/cpu/x8-qconv-dw-taps-body.inc"
#undef NPUKIT_DW_TAPS_NS
#undef NPUKIT_DW_TAPS_FN

#include "ops/cpu/isa-end.inc"

#else

namespace npukit::qconv {
void dw_fill_avx512(const uint8_t* src, int64_t sh, int64_t sw, int64_t H, int64_t W, int32_t zp,
                    uint8_t flip, int16_t* dst, int64_t Wp) {
  dw_fill_portable(src, sh, sw, H, W, zp, flip, dst, Wp);
}
void dw_row_avx512(const DwRow& r, int32_t* acc) {
  dw_row_portable(r, acc);
}
void dw_row_avx2(const DwRow& r, int32_t* acc) {
  dw_row_portable(r, acc);
}
}  // namespace npukit::qconv

#endif
