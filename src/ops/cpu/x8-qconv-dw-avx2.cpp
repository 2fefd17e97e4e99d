// AVX2 output rows of the depthwise integer convolution (x8-qconv-dw.cpp)
// with two taps per vpmaddwd: 8 lanes over x8-qconv-dw-pairs-body.inc. The
// last n % 8 (n % 16) outputs are one more whole step stored through a stack
// copy; the rows the body does not take go to dw_row_avx2.
#include "ops/cpu/qconv_gemm.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::qconv::dw_pairs_avx2_lanes {

using Vec = __m256i;
constexpr int64_t kLanes = 8;
inline Vec zero() {
  return _mm256_setzero_si256();
}
inline Vec load(const int16_t* s) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
}
inline Vec set1(int32_t v) {
  return _mm256_set1_epi32(v);
}
inline Vec add_pair(Vec acc, Vec x, Vec w) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(x, w));
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
inline void store_interleaved(int32_t* out, Vec even, Vec odd, int64_t left) {
  // Per 128-bit half: unpacklo gives outputs (0..3 | 8..11), unpackhi (4..7 | 12..15).
  const __m256i lo = _mm256_unpacklo_epi32(even, odd), hi = _mm256_unpackhi_epi32(even, odd);
  const __m256i first = _mm256_permute2x128_si256(lo, hi, 0x20);
  const __m256i second = _mm256_permute2x128_si256(lo, hi, 0x31);
  if (left >= 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), first);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8), second);
    return;
  }
  alignas(32) int32_t last[16];
  _mm256_store_si256(reinterpret_cast<__m256i*>(last), first);
  _mm256_store_si256(reinterpret_cast<__m256i*>(last + 8), second);
  std::memcpy(out, last, static_cast<size_t>(left) * sizeof(int32_t));
}
inline void fallback(const DwRow& r, int32_t* acc) {
  dw_row_avx2(r, acc);
}

}  // namespace npukit::qconv::dw_pairs_avx2_lanes

#define NPUKIT_DW_PAIRS_NS dw_pairs_avx2_lanes
#define NPUKIT_DW_PAIRS_FN dw_row_avx2_pairs
#include "ops/cpu/x8-qconv-dw-pairs-body.inc"
#undef NPUKIT_DW_PAIRS_NS
#undef NPUKIT_DW_PAIRS_FN

#include "ops/cpu/isa-end.inc"

#else

namespace npukit::qconv {
void dw_row_avx2_pairs(const DwRow& r, int32_t* acc) {
  dw_row_portable(r, acc);
}
}  // namespace npukit::qconv

#endif
