// AVX-512 and AVX2 loops of QLinearAdd and QuantizeLinear (x8-qelementwise.hpp):
// the portable loop's fp32 operations, lane by lane, with explicit fused
// multiply-adds where the reference calls std::fma and none elsewhere; the
// tails run the portable loop.
#include "ops/cpu/x8-qelementwise.hpp"

#if defined(__x86_64__)
// GCC 12 reports its own _mm512_undefined_* placeholders inside the AVX-512
// intrinsics as maybe-uninitialized (a false positive of the header).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

namespace npukit::qelem {

namespace {

#define NPUKIT_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#define NPUKIT_AVX2 __attribute__((target("avx2,fma")))

NPUKIT_AVX512 inline __m512i load16(const void* p, bool s8) {
  const __m128i v = _mm_loadu_si128(static_cast<const __m128i*>(p));
  return s8 ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v);
}

// clamp then round half to even, as v < lo ? lo : v > hi ? hi : v (v not NaN).
NPUKIT_AVX512 inline __m512i clamp_round(__m512 v, __m512 lo, __m512 hi) {
  v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), v, lo);
  v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), v, hi);
  return _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

NPUKIT_AVX2 inline __m256i load8(const void* p, bool s8) {
  const __m128i v = _mm_loadl_epi64(static_cast<const __m128i*>(p));
  return s8 ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
}

NPUKIT_AVX2 inline __m256i clamp_round(__m256 v, __m256 lo, __m256 hi) {
  v = _mm256_blendv_ps(v, lo, _mm256_cmp_ps(v, lo, _CMP_LT_OQ));
  v = _mm256_blendv_ps(v, hi, _mm256_cmp_ps(v, hi, _CMP_GT_OQ));
  return _mm256_cvttps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// Stores 8 int32 lanes already within the code range as bytes.
NPUKIT_AVX2 inline void store8(void* p, __m256i r, bool s8) {
  const __m128i r16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
  _mm_storel_epi64(static_cast<__m128i*>(p),
                   s8 ? _mm_packs_epi16(r16, r16) : _mm_packus_epi16(r16, r16));
}

}  // namespace

NPUKIT_AVX512 void add_avx512(const void* a, const void* b, void* c, int64_t n,
                              const AddConsts& k) {
  const auto* ap = static_cast<const int8_t*>(a);
  const auto* bp = static_cast<const int8_t*>(b);
  auto* cp = static_cast<int8_t*>(c);
  const __m512 lo = _mm512_set1_ps(k.lo), hi = _mm512_set1_ps(k.hi);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i r;
    if (k.fma_form) {
      const __m512 af = _mm512_cvtepi32_ps(load16(ap + i, k.s8));
      const __m512 bf = _mm512_cvtepi32_ps(load16(bp + i, k.s8));
      const __m512 t = _mm512_fmadd_ps(bf, _mm512_set1_ps(k.rb), _mm512_set1_ps(k.k));
      r = clamp_round(_mm512_fmadd_ps(af, _mm512_set1_ps(k.ra), t), lo, hi);
    } else {
      // float(a - a_zp) is exact either way: int subtract first, as the reference.
      const __m512 va = _mm512_mul_ps(
          _mm512_set1_ps(k.a_scale),
          _mm512_cvtepi32_ps(_mm512_sub_epi32(load16(ap + i, k.s8), _mm512_set1_epi32(k.a_zp))));
      const __m512 vb = _mm512_mul_ps(
          _mm512_set1_ps(k.b_scale),
          _mm512_cvtepi32_ps(_mm512_sub_epi32(load16(bp + i, k.s8), _mm512_set1_epi32(k.b_zp))));
      const __m512 v = _mm512_div_ps(_mm512_add_ps(va, vb), _mm512_set1_ps(k.c_scale));
      r = _mm512_add_epi32(clamp_round(v, lo, hi), _mm512_set1_epi32(k.c_zp));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(cp + i), _mm512_cvtepi32_epi8(r));
  }
  add_portable(ap + i, bp + i, cp + i, n - i, k);
}

NPUKIT_AVX2 void add_avx2(const void* a, const void* b, void* c, int64_t n, const AddConsts& k) {
  const auto* ap = static_cast<const int8_t*>(a);
  const auto* bp = static_cast<const int8_t*>(b);
  auto* cp = static_cast<int8_t*>(c);
  const __m256 lo = _mm256_set1_ps(k.lo), hi = _mm256_set1_ps(k.hi);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i r;
    if (k.fma_form) {
      const __m256 af = _mm256_cvtepi32_ps(load8(ap + i, k.s8));
      const __m256 bf = _mm256_cvtepi32_ps(load8(bp + i, k.s8));
      const __m256 t = _mm256_fmadd_ps(bf, _mm256_set1_ps(k.rb), _mm256_set1_ps(k.k));
      r = clamp_round(_mm256_fmadd_ps(af, _mm256_set1_ps(k.ra), t), lo, hi);
    } else {
      const __m256 va = _mm256_mul_ps(
          _mm256_set1_ps(k.a_scale),
          _mm256_cvtepi32_ps(_mm256_sub_epi32(load8(ap + i, k.s8), _mm256_set1_epi32(k.a_zp))));
      const __m256 vb = _mm256_mul_ps(
          _mm256_set1_ps(k.b_scale),
          _mm256_cvtepi32_ps(_mm256_sub_epi32(load8(bp + i, k.s8), _mm256_set1_epi32(k.b_zp))));
      const __m256 v = _mm256_div_ps(_mm256_add_ps(va, vb), _mm256_set1_ps(k.c_scale));
      r = _mm256_add_epi32(clamp_round(v, lo, hi), _mm256_set1_epi32(k.c_zp));
    }
    store8(cp + i, r, k.s8);
  }
  add_portable(ap + i, bp + i, cp + i, n - i, k);
}

NPUKIT_AVX512 void quantize_avx512(const float* x, void* y, int64_t n, const QuantizeConsts& k) {
  auto* yp = static_cast<int8_t*>(y);
  const __m512 lo = _mm512_set1_ps(k.lo), hi = _mm512_set1_ps(k.hi);
  const __m512 s = _mm512_set1_ps(k.scale), inv = _mm512_set1_ps(k.inv);
  const __m512i zp = _mm512_set1_epi32(k.zp);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 xv = _mm512_loadu_ps(x + i);
    __m512 v = k.reciprocal ? _mm512_mul_ps(xv, inv) : _mm512_div_ps(xv, s);
    v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v, lo);  // NaN -> lo
    const __m512i r = _mm512_add_epi32(clamp_round(v, lo, hi), zp);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(yp + i), _mm512_cvtepi32_epi8(r));
  }
  quantize_portable(x + i, yp + i, n - i, k);
}

NPUKIT_AVX2 void quantize_avx2(const float* x, void* y, int64_t n, const QuantizeConsts& k) {
  auto* yp = static_cast<int8_t*>(y);
  const __m256 lo = _mm256_set1_ps(k.lo), hi = _mm256_set1_ps(k.hi);
  const __m256 s = _mm256_set1_ps(k.scale), inv = _mm256_set1_ps(k.inv);
  const __m256i zp = _mm256_set1_epi32(k.zp);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i);
    __m256 v = k.reciprocal ? _mm256_mul_ps(xv, inv) : _mm256_div_ps(xv, s);
    v = _mm256_blendv_ps(v, lo, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));  // NaN -> lo
    store8(yp + i, _mm256_add_epi32(clamp_round(v, lo, hi), zp), k.s8);
  }
  quantize_portable(x + i, yp + i, n - i, k);
}

}  // namespace npukit::qelem

#else

namespace npukit::qelem {
void add_avx512(const void* a, const void* b, void* c, int64_t n, const AddConsts& k) {
  add_portable(a, b, c, n, k);
}
void add_avx2(const void* a, const void* b, void* c, int64_t n, const AddConsts& k) {
  add_portable(a, b, c, n, k);
}
void quantize_avx512(const float* x, void* y, int64_t n, const QuantizeConsts& k) {
  quantize_portable(x, y, n, k);
}
void quantize_avx2(const float* x, void* y, int64_t n, const QuantizeConsts& k) {
  quantize_portable(x, y, n, k);
}
}  // namespace npukit::qelem

#endif
