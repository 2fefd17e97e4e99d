// AVX-512 row kernels of the channels-last depthwise integer convolution
// (qconv_dw_nhwc.hpp): 16 channels per vector over x8-qconv-dw-nhwc-body.inc,
// compiled twice: vpmaddwd + vpaddd per tap pair (AVX-512BW), and one
// vpdpwssd (VNNI). Codes by vpmovdb, the last channels by a masked store.
#include "ops/cpu/qconv_dw_nhwc.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512-begin.inc"

// The shim of both levels but add_pair, the one instruction that differs.
namespace npukit::qconv::dw_nhwc_avx512_common {

using VecI = __m512i;
using VecF = __m512;
constexpr int64_t kLanes = 16;
inline VecI load_i32(const int32_t* p) {
  return _mm512_loadu_si512(p);
}
inline VecF load_f32(const float* p) {
  return _mm512_loadu_ps(p);
}
inline VecI set1_i32(int32_t v) {
  return _mm512_set1_epi32(v);
}
inline VecF set1_f32(float v) {
  return _mm512_set1_ps(v);
}
inline VecI widen_u8(const uint8_t* p) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline VecI tap_halves(VecI lo, VecI hi) {
  return _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16));
}
inline VecI requant(VecI acc, VecF m, VecF flo, VecF fhi, VecI yzp) {
  __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), m);
  v = _mm512_min_ps(_mm512_max_ps(v, flo), fhi);
  return _mm512_add_epi32(
      _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), yzp);
}
// left > 0 here: 16 lanes and Cp = C rounded up to 16 (the codes are within
// the code range, so vpmovdb's truncation is exact).
inline void store_codes(uint8_t* y, int64_t left, VecI q, bool) {
  const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
  _mm_mask_storeu_epi8(y, m, _mm512_cvtepi32_epi8(q));
}

}  // namespace npukit::qconv::dw_nhwc_avx512_common

namespace npukit::qconv::dw_nhwc_avx512_lanes {
using namespace dw_nhwc_avx512_common;
inline VecI add_pair(VecI acc, VecI x, VecI w) {
  return _mm512_add_epi32(acc, _mm512_madd_epi16(x, w));
}
}  // namespace npukit::qconv::dw_nhwc_avx512_lanes

#define NPUKIT_DW_NHWC_NS dw_nhwc_avx512_lanes
#define NPUKIT_DW_NHWC_FN dw_nhwc_avx512
#include "ops/cpu/x8-qconv-dw-nhwc-body.inc"
#undef NPUKIT_DW_NHWC_NS
#undef NPUKIT_DW_NHWC_FN

#include "ops/cpu/isa-end.inc"

#include "ops/cpu/isa-avx512vnni-begin.inc"

namespace npukit::qconv::dw_nhwc_avx512vnni_lanes {
using namespace dw_nhwc_avx512_common;
inline VecI add_pair(VecI acc, VecI x, VecI w) {
  return _mm512_dpwssd_epi32(acc, x, w);
}
}  // namespace npukit::qconv::dw_nhwc_avx512vnni_lanes

#define NPUKIT_DW_NHWC_NS dw_nhwc_avx512vnni_lanes
#define NPUKIT_DW_NHWC_FN dw_nhwc_avx512vnni
#include "ops/cpu/x8-qconv-dw-nhwc-body.inc"
#undef NPUKIT_DW_NHWC_NS
#undef NPUKIT_DW_NHWC_FN

#include "ops/cpu/isa-end.inc"

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
