// AVX2 pieces of the integer convolution GEMM (qconv_gemm.hpp).
//  - pair micro-kernel: vpmaddubsw (adjacent u8 x s8 products summed and
//    saturated to int16) then vpmaddwd by ones: MLAS's AVX2 arithmetic exactly.
//  - exact micro-kernels without VNNI: from K = 64, int16 operands
//    (vpmaddwd: no saturation for u8 x s8 products); below, the split
//    x' = (x' & 0x80) + (x' & 0x7f).
//    vpmaddubsw cannot saturate on either part (|2 * 127 * 128| <= 32512;
//    2 * 128 * w in [-32768, 32512]); both are widened by vpmaddwd with 1,
//    so every product is summed exactly in int32.
//  - requantizing row store with the reference's fp32 operations, alone
//    (store_avx2) or after the micro-kernels on a stack tile (fused_*: no
//    per-row calls; rows of any length, the last n % 8 codes by a vector too).
// Register block: 8 weight rows x 8 pixels (1 vector) = 8 accumulators.
#include "ops/cpu/qconv_gemm.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>
#include <vector>

#define NPUKIT_AVX2 __attribute__((target("avx2,fma")))

namespace npukit::qconv {

namespace {

inline int32_t word_at(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

static_assert(kQConvRows == 8, "block_8x8 names 8 rows");

// One vector of 8 pixels against all kQConvRows rows: the x halves are made
// once per quad for 8 rows, and 8 accumulators, 2 constants, the x halves
// and a weight word fit the 16 ymm registers (a 4-row x 16-pixel block
// spilled its accumulators).
template <bool kExact>
NPUKIT_AVX2 void block_8x8(const uint8_t* x, const int8_t* w, int64_t K4, int32_t* c) {
  const __m256i ones = _mm256_set1_epi16(1), low7 = _mm256_set1_epi8(0x7f);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
          a7 = a0;
  for (int64_t q = 0; q < K4; ++q) {
    const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + q * kTile * 4));
    // Exact: x = lo + hi with lo = x & 0x7f and hi = x & 0x80; each
    // vpmaddubsw pair sum is then within int16 (|lo pair| <= 2*127*128,
    // hi pair in [-32768, 32512]) and each is widened on its own.
    const __m256i lo = kExact ? _mm256_and_si256(xv, low7) : xv;
    const __m256i hi = _mm256_andnot_si256(low7, xv);
    const int8_t* wq = w + q * kQConvRows * 4;
    auto dot = [&](__m256i acc, int r) NPUKIT_AVX2 {
      const __m256i wb = _mm256_set1_epi32(word_at(wq + r * 4));
      __m256i t = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, wb), ones);
      if (kExact) t = _mm256_add_epi32(t, _mm256_madd_epi16(_mm256_maddubs_epi16(hi, wb), ones));
      return _mm256_add_epi32(acc, t);
    };
    a0 = dot(a0, 0), a1 = dot(a1, 1), a2 = dot(a2, 2), a3 = dot(a3, 3);
    a4 = dot(a4, 4), a5 = dot(a5, 5), a6 = dot(a6, 6), a7 = dot(a7, 7);
  }
  const __m256i out[kQConvRows] = {a0, a1, a2, a3, a4, a5, a6, a7};
  for (int r = 0; r < kQConvRows; ++r)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * kTile), out[r]);
}

template <bool kExact>
void gemm_avx2(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c) {
  for (int v = 0; v < 2 * nvec; ++v) block_8x8<kExact>(x + v * 8 * 4, w, K4, c + v * 8);
}

// Exact, from int16 operands: vpmaddwd multiplies x' (0..255) by w'
// (-128..127) and adds adjacent products into int32 without saturation. 8
// pixels x 4 rows: the pixels' quads zero-extended to int16 (4 pixels per
// register, two int32 lanes per pixel), each row's quad of int16 weights
// broadcast; the two lanes of a pixel are added at the end (wrapping, as
// the other kernels).
NPUKIT_AVX2 void block_4x8_int16(const uint8_t* x, const int16_t* w16, int64_t K4, int32_t* c) {
  __m256i a0 = _mm256_setzero_si256(), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0,
          b3 = a0;
  for (int64_t q = 0; q < K4; ++q) {
    const uint8_t* xq = x + q * kTile * 4;
    const __m256i xa = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xq)));
    const __m256i xb =
        _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xq + 16)));
    const int16_t* wq = w16 + q * kQConvRows * 4;
    auto dot = [&](__m256i& a, __m256i& b, int r) NPUKIT_AVX2 {
      int64_t word;
      std::memcpy(&word, wq + r * 4, sizeof word);
      const __m256i wb = _mm256_set1_epi64x(word);
      a = _mm256_add_epi32(a, _mm256_madd_epi16(xa, wb));
      b = _mm256_add_epi32(b, _mm256_madd_epi16(xb, wb));
    };
    dot(a0, b0, 0), dot(a1, b1, 1), dot(a2, b2, 2), dot(a3, b3, 3);
  }
  // hadd: [p0 p1 p4 p5 | p2 p3 p6 p7]; the 64-bit permute restores p0..p7.
  auto out = [&](__m256i a, __m256i b, int r) NPUKIT_AVX2 {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * kTile),
                        _mm256_permute4x64_epi64(_mm256_hadd_epi32(a, b), _MM_SHUFFLE(3, 1, 2, 0)));
  };
  out(a0, b0, 0), out(a1, b1, 1), out(a2, b2, 2), out(a3, b3, 3);
}

// The block's weights sign-extended to int16 once per call (per thread:
// K4 * kQConvRows * 4 values), then 4-row halves of every 8 pixels.
NPUKIT_AVX2 void gemm_exact_int16(const uint8_t* x, const int8_t* w, int64_t K4, int nvec,
                                  int32_t* c) {
  thread_local std::vector<int16_t> w16;
  const int64_t n = K4 * kQConvRows * 4;  // a multiple of 32
  w16.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i += 16)
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(w16.data() + i),
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i))));
  for (int v = 0; v < 2 * nvec; ++v)
    for (int half = 0; half < 2; ++half)
      block_4x8_int16(x + v * 8 * 4, w16.data() + half * 16, K4, c + half * 4 * kTile + v * 8);
}

}  // namespace

void gemm_exact_avx2(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c) {
  // Short sums (MobileNet's expand layers) stay on the split kernel: there the
  // int16 kernel's weight conversion and per-block epilogue cost more than
  // it saves (bench_qconv: equal at K = 32, 12-20% less time from K = 96).
  if (K4 >= 16)
    gemm_exact_int16(x, w, K4, nvec, c);
  else
    gemm_avx2<true>(x, w, K4, nvec, c);
}

void gemm_pairs_avx2(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c) {
  gemm_avx2<false>(x, w, K4, nvec, c);
}

namespace {

// The fp32 requantization of store_portable on 8 lanes: acc = c + offset -
// w_zp * x_sum (wrapping), float(acc) * M, clamp to the code range minus
// y_zp, round to nearest even, + y_zp; packed to 8 codes in the low bytes.
struct Requant8 {
  __m256 flo, fhi;
  __m256i yzp;
  bool y_s8;
};
NPUKIT_AVX2 inline Requant8 requant8_constants(int32_t y_zp, bool y_s8) {
  const int32_t lo = y_s8 ? -128 : 0, hi = y_s8 ? 127 : 255;
  return {_mm256_set1_ps(static_cast<float>(lo - y_zp)),
          _mm256_set1_ps(static_cast<float>(hi - y_zp)), _mm256_set1_epi32(y_zp), y_s8};
}
// x_sum (read at t) only when w_zp != 0: it may be null otherwise.
NPUKIT_AVX2 inline __m256i accumulators8(const int32_t* c, int32_t offset, int32_t w_zp,
                                         const int32_t* x_sum, int64_t t) {
  __m256i a = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(c)),
                               _mm256_set1_epi32(offset));
  if (w_zp != 0)
    a = _mm256_sub_epi32(
        a, _mm256_mullo_epi32(_mm256_set1_epi32(w_zp),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x_sum + t))));
  return a;
}
NPUKIT_AVX2 inline __m128i codes8(__m256i a, float multiplier, const Requant8& q) {
  __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(a), _mm256_set1_ps(multiplier));
  v = _mm256_min_ps(_mm256_max_ps(v, q.flo), q.fhi);  // v is never NaN (see store_avx512)
  const __m256i r = _mm256_add_epi32(
      _mm256_cvttps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)),
      q.yzp);
  // r is within the code range: pack to 16 then 8 bits without saturation effects.
  const __m128i r16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
  return q.y_s8 ? _mm_packs_epi16(r16, r16) : _mm_packus_epi16(r16, r16);
}

// One row of n codes: whole vectors of 8, then the last n % 8 from copies
// of c and x_sum padded to a vector (nothing read or written past n).
NPUKIT_AVX2 inline void requant_row(const int32_t* c, int64_t n, int32_t offset, int32_t w_zp,
                                    const int32_t* x_sum, float multiplier, const Requant8& q,
                                    uint8_t* y) {
  int64_t t = 0;
  for (; t + 8 <= n; t += 8)
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + t),
                     codes8(accumulators8(c + t, offset, w_zp, x_sum, t), multiplier, q));
  if (t == n) return;
  alignas(32) int32_t cv[8] = {}, xs[8] = {};
  alignas(16) uint8_t out[16];
  std::memcpy(cv, c + t, static_cast<size_t>(n - t) * sizeof(int32_t));
  if (w_zp != 0) std::memcpy(xs, x_sum + t, static_cast<size_t>(n - t) * sizeof(int32_t));
  _mm_store_si128(reinterpret_cast<__m128i*>(out),
                  codes8(accumulators8(cv, offset, w_zp, xs, 0), multiplier, q));
  std::memcpy(y + t, out, static_cast<size_t>(n - t));
}

// The pair or exact GEMM into a stack tile, then every row's codes.
template <bool kExact>
NPUKIT_AVX2 void fused_avx2(const uint8_t* x, const int8_t* w, int64_t K4, int nvec,
                            const FusedStore& s) {
  alignas(32) int32_t c[kQConvRows * kTile];
  if (kExact)
    gemm_exact_avx2(x, w, K4, nvec, c);
  else
    gemm_avx2<false>(x, w, K4, nvec, c);
  const Requant8 q = requant8_constants(s.y_zp, s.y_s8);
  for (int r = 0; r < kQConvRows; ++r)
    requant_row(c + r * kTile, s.n, s.offset[r], s.w_zp[r], s.x_sum, s.multiplier[r], q, s.y[r]);
}

}  // namespace

void fused_exact_avx2(const uint8_t* x, const int8_t* w, int64_t K4, int nvec,
                      const FusedStore& s) {
  fused_avx2<true>(x, w, K4, nvec, s);
}

void fused_pairs_avx2(const uint8_t* x, const int8_t* w, int64_t K4, int nvec,
                      const FusedStore& s) {
  fused_avx2<false>(x, w, K4, nvec, s);
}

NPUKIT_AVX2 void store_avx2(const int32_t* c, int64_t n, const RowStore& s, void* y) {
  if (s.requantize) {
    requant_row(c, n, s.offset, s.w_zp, s.x_sum, s.multiplier, requant8_constants(s.y_zp, s.y_s8),
                static_cast<uint8_t*>(y));
    return;
  }
  int64_t t = 0;
  for (; t + 8 <= n; t += 8)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<int32_t*>(y) + t),
                        accumulators8(c + t, s.offset, s.w_zp, s.x_sum, t));
  if (t < n) {
    RowStore tail = s;
    if (s.x_sum) tail.x_sum = s.x_sum + t;
    store_portable(c + t, n - t, tail, static_cast<int32_t*>(y) + t);
  }
}

}  // namespace npukit::qconv

#else

namespace npukit::qconv {
void gemm_exact_avx2(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c) {
  gemm_exact_portable(x, w, K4, nvec, c);
}
void gemm_pairs_avx2(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c) {
  gemm_pairs_portable(x, w, K4, nvec, c);
}
void store_avx2(const int32_t* c, int64_t n, const RowStore& s, void* y) {
  store_portable(c, n, s, y);
}
void fused_exact_avx2(const uint8_t*, const int8_t*, int64_t, int, const FusedStore&) {}
void fused_pairs_avx2(const uint8_t*, const int8_t*, int64_t, int, const FusedStore&) {}
}  // namespace npukit::qconv

#endif
