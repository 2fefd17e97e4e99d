// AVX-512 pieces of the integer convolution GEMM (qconv_gemm.hpp):
//  - exact micro-kernel: vpdpbusd sums 4 u8 x s8 products per int32 lane
//    without intermediate saturation (exact: the true sum fits int32);
//  - pair micro-kernel (AVX-512BW): vpmaddubsw saturates each adjacent pair to
//    int16, vpmaddwd by ones adds the two pairs of a lane, as MLAS's kernels;
//  - requantizing row store with the reference's fp32 operations, alone
//    (store_avx512) or fused into the micro-kernels' epilogue (fused_*).
// 8 weight rows x up to 3 vectors of 16 pixels = 24 accumulators.
#include "ops/cpu/qconv_gemm.hpp"

#if defined(__x86_64__)
// GCC 12 reports its own _mm512_undefined_* placeholders inside the AVX-512
// intrinsics as maybe-uninitialized, and once inlined into the fused
// epilogue as uninitialized (false positives of the header).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <cstring>

#define NPUKIT_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#define NPUKIT_AVX512VNNI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))

namespace npukit::qconv {

namespace {

inline int32_t word_at(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The 8 x NV accumulators are named variables (not an array): GCC keeps an
// array of vectors partly on the stack, with a store per vpdpbusd.
#define NPUKIT_QCONV_ACC(r) __m512i a##r##0 = z, a##r##1 = z, a##r##2 = z
#define NPUKIT_QCONV_STEP(r, OP)                               \
  {                                                            \
    const __m512i wb = _mm512_set1_epi32(word_at(wq + (r)*4)); \
    a##r##0 = OP(a##r##0, x0, wb);                             \
    if (NV > 1) a##r##1 = OP(a##r##1, x1, wb);                 \
    if (NV > 2) a##r##2 = OP(a##r##2, x2, wb);                 \
  }
#define NPUKIT_QCONV_STORE(r)                                     \
  {                                                               \
    _mm512_storeu_si512(c + (r)*kTile, a##r##0);                  \
    if (NV > 1) _mm512_storeu_si512(c + (r)*kTile + 16, a##r##1); \
    if (NV > 2) _mm512_storeu_si512(c + (r)*kTile + 32, a##r##2); \
  }
#define NPUKIT_QCONV_ACCUMULATE(OP)                               \
  const __m512i z = _mm512_setzero_si512();                       \
  NPUKIT_QCONV_ACC(0);                                            \
  NPUKIT_QCONV_ACC(1);                                            \
  NPUKIT_QCONV_ACC(2);                                            \
  NPUKIT_QCONV_ACC(3);                                            \
  NPUKIT_QCONV_ACC(4);                                            \
  NPUKIT_QCONV_ACC(5);                                            \
  NPUKIT_QCONV_ACC(6);                                            \
  NPUKIT_QCONV_ACC(7);                                            \
  for (int64_t q = 0; q < K4; ++q) {                              \
    const uint8_t* xq = x + q * kTile * 4;                        \
    const __m512i x0 = _mm512_loadu_si512(xq);                    \
    const __m512i x1 = NV > 1 ? _mm512_loadu_si512(xq + 64) : z;  \
    const __m512i x2 = NV > 2 ? _mm512_loadu_si512(xq + 128) : z; \
    const int8_t* wq = w + q * kQConvRows * 4;                    \
    NPUKIT_QCONV_STEP(0, OP)                                      \
    NPUKIT_QCONV_STEP(1, OP)                                      \
    NPUKIT_QCONV_STEP(2, OP)                                      \
    NPUKIT_QCONV_STEP(3, OP)                                      \
    NPUKIT_QCONV_STEP(4, OP)                                      \
    NPUKIT_QCONV_STEP(5, OP)                                      \
    NPUKIT_QCONV_STEP(6, OP)                                      \
    NPUKIT_QCONV_STEP(7, OP)                                      \
  }
#define NPUKIT_QCONV_KERNEL(OP) \
  NPUKIT_QCONV_ACCUMULATE(OP)   \
  NPUKIT_QCONV_STORE(0)         \
  NPUKIT_QCONV_STORE(1)         \
  NPUKIT_QCONV_STORE(2)         \
  NPUKIT_QCONV_STORE(3)         \
  NPUKIT_QCONV_STORE(4) NPUKIT_QCONV_STORE(5) NPUKIT_QCONV_STORE(6) NPUKIT_QCONV_STORE(7)
// The fused kernels keep the accumulation loop of the plain ones and pass the
// accumulators through a stack tile (handing the registers to the epilogue
// directly makes GCC spill them inside the loop).
#define NPUKIT_QCONV_FUSED_KERNEL(OP)        \
  alignas(64) int32_t c[kQConvRows * kTile]; \
  NPUKIT_QCONV_KERNEL(OP)                    \
  const Requant q = requant_constants(s);    \
  for (int r = 0; r < kQConvRows; ++r) fused_row<NV>(c + r * kTile, r, s, q);

NPUKIT_AVX512VNNI inline __m512i dot_exact(__m512i acc, __m512i x, __m512i w) {
  return _mm512_dpbusd_epi32(acc, x, w);
}
NPUKIT_AVX512 inline __m512i dot_pairs(__m512i acc, __m512i x, __m512i w) {
  return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(x, w), _mm512_set1_epi16(1)));
}

static_assert(kQConvRows == 8, "the kernels below name 8 rows");

// One vector of accumulators to 16 codes, as store_avx512 does (same fp32
// operations in the same order): acc + offset - w_zp * x_sum (wrapping),
// float(acc) * M, clamp to the code range minus y_zp, round to nearest even,
// + y_zp.
struct Requant {
  __m512 flo, fhi;
  __m512i yzp;
};
NPUKIT_AVX512 inline Requant requant_constants(const FusedStore& s) {
  const int32_t lo = s.y_s8 ? -128 : 0, hi = s.y_s8 ? 127 : 255;
  return {_mm512_set1_ps(static_cast<float>(lo - s.y_zp)),
          _mm512_set1_ps(static_cast<float>(hi - s.y_zp)), _mm512_set1_epi32(s.y_zp)};
}
NPUKIT_AVX512 inline __m128i requant16(__m512i a, __m512i offset, int32_t w_zp,
                                       const int32_t* x_sum, int64_t t, __m512 m,
                                       const Requant& q) {
  a = _mm512_add_epi32(a, offset);
  if (w_zp != 0)  // x_sum holds kTile sums: whole vectors are in bounds
    a = _mm512_sub_epi32(
        a, _mm512_mullo_epi32(_mm512_set1_epi32(w_zp), _mm512_loadu_si512(x_sum + t)));
  __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(a), m);
  v = _mm512_min_ps(_mm512_max_ps(v, q.flo), q.fhi);  // never NaN (see store_avx512)
  return _mm512_cvtepi32_epi8(_mm512_add_epi32(
      _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), q.yzp));
}
NPUKIT_AVX512 inline void store16(uint8_t* y, int64_t left, __m128i codes) {
  if (left >= 16)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y), codes);
  else if (left > 0)
    _mm_mask_storeu_epi8(y, static_cast<__mmask16>((1u << left) - 1), codes);
}
template <int NV>
NPUKIT_AVX512 inline void fused_row(const int32_t* c, int r, const FusedStore& s,
                                    const Requant& q) {
  const __m512i offset = _mm512_set1_epi32(s.offset[r]);
  const __m512 m = _mm512_set1_ps(s.multiplier[r]);
  const int32_t wz = s.w_zp[r];
  uint8_t* y = s.y[r];
  for (int v = 0; v < NV; ++v)
    store16(y + 16 * v, s.n - 16 * v,
            requant16(_mm512_load_si512(c + 16 * v), offset, wz, s.x_sum, 16 * v, m, q));
}

template <int NV>
NPUKIT_AVX512VNNI void exact_nv(const uint8_t* x, const int8_t* w, int64_t K4, int32_t* c) {
  NPUKIT_QCONV_KERNEL(dot_exact);
}

template <int NV>
NPUKIT_AVX512 void pairs_nv(const uint8_t* x, const int8_t* w, int64_t K4, int32_t* c) {
  NPUKIT_QCONV_KERNEL(dot_pairs);
}

template <int NV>
NPUKIT_AVX512VNNI void fused_exact_nv(const uint8_t* x, const int8_t* w, int64_t K4,
                                      const FusedStore& s) {
  NPUKIT_QCONV_FUSED_KERNEL(dot_exact)
}

template <int NV>
NPUKIT_AVX512 void fused_pairs_nv(const uint8_t* x, const int8_t* w, int64_t K4,
                                  const FusedStore& s) {
  NPUKIT_QCONV_FUSED_KERNEL(dot_pairs)
}

}  // namespace

void fused_exact_avx512vnni(const uint8_t* x, const int8_t* w, int64_t K4, int nvec,
                            const FusedStore& s) {
  if (nvec == 3)
    fused_exact_nv<3>(x, w, K4, s);
  else if (nvec == 2)
    fused_exact_nv<2>(x, w, K4, s);
  else
    fused_exact_nv<1>(x, w, K4, s);
}

void fused_pairs_avx512(const uint8_t* x, const int8_t* w, int64_t K4, int nvec,
                        const FusedStore& s) {
  if (nvec == 3)
    fused_pairs_nv<3>(x, w, K4, s);
  else if (nvec == 2)
    fused_pairs_nv<2>(x, w, K4, s);
  else
    fused_pairs_nv<1>(x, w, K4, s);
}

void gemm_exact_avx512vnni(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c) {
  if (nvec == 3)
    exact_nv<3>(x, w, K4, c);
  else if (nvec == 2)
    exact_nv<2>(x, w, K4, c);
  else
    exact_nv<1>(x, w, K4, c);
}

void gemm_pairs_avx512(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c) {
  if (nvec == 3)
    pairs_nv<3>(x, w, K4, c);
  else if (nvec == 2)
    pairs_nv<2>(x, w, K4, c);
  else
    pairs_nv<1>(x, w, K4, c);
}

NPUKIT_AVX512 void store_avx512(const int32_t* c, int64_t n, const RowStore& s, void* y) {
  const __m512i offset = _mm512_set1_epi32(s.offset), wzp = _mm512_set1_epi32(s.w_zp);
  const __m512 m = _mm512_set1_ps(s.multiplier);
  // The clamp bounds of detail::requantize_float: code range minus y_zp.
  const int32_t lo = s.y_s8 ? -128 : 0, hi = s.y_s8 ? 127 : 255;
  const __m512 flo = _mm512_set1_ps(static_cast<float>(lo - s.y_zp));
  const __m512 fhi = _mm512_set1_ps(static_cast<float>(hi - s.y_zp));
  const __m512i yzp = _mm512_set1_epi32(s.y_zp);
  // Locals: the byte stores below may alias `s` as far as the compiler knows.
  const bool requantize = s.requantize, sub_x_sum = s.w_zp != 0;
  const int32_t* x_sum = s.x_sum;
  for (int64_t t = 0; t < n; t += 16) {
    const __mmask16 k = n - t >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - t)) - 1);
    // Unmasked loads for whole vectors: AMD cores do not forward a store into a
    // masked load, and c was just stored by the micro-kernel.
    const bool whole = n - t >= 16;
    __m512i a = _mm512_add_epi32(
        whole ? _mm512_loadu_si512(c + t) : _mm512_maskz_loadu_epi32(k, c + t), offset);
    if (sub_x_sum)
      a = _mm512_sub_epi32(a, _mm512_mullo_epi32(wzp, _mm512_maskz_loadu_epi32(k, x_sum + t)));
    if (!requantize) {
      _mm512_mask_storeu_epi32(static_cast<int32_t*>(y) + t, k, a);
      continue;
    }
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(a), m);  // float(acc) * M: two fp32 roundings
    // The reference's clamp as max/min: equal results, since v is never NaN
    // (acc and the multiplier are finite; the kernel list declines the rest).
    v = _mm512_min_ps(_mm512_max_ps(v, flo), fhi);
    const __m512i r = _mm512_add_epi32(
        _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), yzp);
    // vpmovdb to a register, then a plain (or byte-masked) store: the memory
    // form of vpmovdb is slow on AMD cores. r is within the code range.
    const __m128i r8 = _mm512_cvtepi32_epi8(r);
    if (n - t >= 16)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<int8_t*>(y) + t), r8);
    else
      _mm_mask_storeu_epi8(static_cast<int8_t*>(y) + t, k, r8);
  }
}

}  // namespace npukit::qconv

#else  // not x86-64: never listed as runnable

namespace npukit::qconv {
void gemm_exact_avx512vnni(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c) {
  gemm_exact_portable(x, w, K4, nvec, c);
}
void gemm_pairs_avx512(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c) {
  gemm_pairs_portable(x, w, K4, nvec, c);
}
void store_avx512(const int32_t* c, int64_t n, const RowStore& s, void* y) {
  store_portable(c, n, s, y);
}
void fused_exact_avx512vnni(const uint8_t*, const int8_t*, int64_t, int, const FusedStore&) {}
void fused_pairs_avx512(const uint8_t*, const int8_t*, int64_t, int, const FusedStore&) {}
}  // namespace npukit::qconv

#endif
