// AVX512-VNNI output rows of the depthwise integer convolution
// (x8-qconv-dw.cpp) with two taps per vpdpwssd: 16 lanes over
// x8-qconv-dw-pairs-body.inc, the last outputs by masked stores; the rows
// the body does not take go to dw_row_avx512.
#include "ops/cpu/qconv_gemm.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "ops/cpu/isa-avx512vnni-begin.inc"

namespace npukit::qconv::dw_pairs_avx512vnni_lanes {

using Vec = __m512i;
constexpr int64_t kLanes = 16;
inline Vec zero() {
  return _mm512_setzero_si512();
}
inline Vec load(const int16_t* s) {
  return _mm512_loadu_si512(s);
}
inline Vec set1(int32_t v) {
  return _mm512_set1_epi32(v);
}
inline Vec add_pair(Vec acc, Vec x, Vec w) {
  return _mm512_dpwssd_epi32(acc, x, w);
}
inline __mmask16 first_lanes(int64_t left) {  // left > 0
  return left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
}
inline void store(int32_t* out, Vec a, int64_t left) {
  _mm512_mask_storeu_epi32(out, first_lanes(left), a);
}
inline void store_interleaved(int32_t* out, Vec even, Vec odd, int64_t left) {
  const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i second =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  _mm512_mask_storeu_epi32(out, first_lanes(left), _mm512_permutex2var_epi32(even, first, odd));
  if (left > 16)
    _mm512_mask_storeu_epi32(out + 16, first_lanes(left - 16),
                             _mm512_permutex2var_epi32(even, second, odd));
}
inline void fallback(const DwRow& r, int32_t* acc) {
  dw_row_avx512(r, acc);
}

}  // namespace npukit::qconv::dw_pairs_avx512vnni_lanes

#define NPUKIT_DW_PAIRS_NS dw_pairs_avx512vnni_lanes
#define NPUKIT_DW_PAIRS_FN dw_row_avx512vnni
#include "ops/cpu/x8-qconv-dw-pairs-body.inc"
#undef NPUKIT_DW_PAIRS_NS
#undef NPUKIT_DW_PAIRS_FN

#include "ops/cpu/isa-end.inc"

#else

namespace npukit::qconv {
void dw_row_avx512vnni(const DwRow& r, int32_t* acc) {
  dw_row_portable(r, acc);
}
}  // namespace npukit::qconv

#endif
