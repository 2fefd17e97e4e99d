// AVX2 micro-kernels of the channels-last integer convolution
// (qconv_nhwc.hpp) for hosts without AVX-512 VNNI: output channels in the
// lanes (8 per vector), per pixel and quad the dword (x'0, x'1, x'2, x'3)
// broadcast. A pass covers 3 pixels x 16 channels: its weights are loaded
// once per quad for the 3 pixels, and 16 channels' weights stream through L1
// per pass (32 channels x 2 pixels before: 8-10% less time per int8 network
// at the cap, session 15). The requantization is store_avx2's, its lower
// clamp by saturating packs. Two accumulations:
//  - exact: int16 weights in pairs (NhwcBlock::w16: (w0, w2) and (w1, w3)
//    of each quad); the broadcast's low bytes masked are the int16 pairs
//    (x'0, x'2), its words shifted right by 8 are (x'1, x'3): one vpmaddwd
//    sums two u8 x s8 products per lane exactly in int32 (no saturation,
//    unlike vpmaddubsw: 2 vpmaddwd per 4 products instead of the 7-bit
//    split's 2 vpmaddubsw + 2 vpmaddwd);
//  - MLAS's int16 pairs (raw u8 x and s8 w codes, an even channel count so
//    that a quad's pairs are the (kh, kw, ic) order's pairs): vpmaddubsw
//    saturates (x0 w0 + x1 w1) and (x2 w2 + x3 w3) to int16, vpmaddwd by
//    ones adds the two exactly: MLAS's AVX2 arithmetic (3 instructions per
//    32 products), on the s8 weights NhwcBlock::w.
#include "ops/cpu/qconv_nhwc.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::qconv {

namespace {

inline __m256i bcast(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

// float(acc) * m rounded to nearest even, clamped above to the code range
// minus y_zp only (past it the conversion would give INT_MIN); pack16's
// saturating packs clamp below: for an integer bound, clamping before or
// after rounding gives the same integer. acc already holds the offset.
inline __m256i rounded(__m256i a, const float* m, __m256 fhi) {
  const __m256 v = _mm256_min_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(a), _mm256_loadu_ps(m)), fhi);
  return _mm256_cvttps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// 16 codes of two vectors of rounded values in channel order: int32 ->
// int16 with saturation, + y_zp with int16 saturation (a saturated value
// stays past the code range on its side), -> u8/s8 with saturation (the
// reference's clamp). The packs interleave 128-bit lanes (dwords [a0-3 b0-3
// a0-3 b0-3 | a4-7 b4-7 a4-7 b4-7]); one dword permutation puts the 16 codes
// in order in the low 128 bits.
inline __m128i pack16(const __m256i* q, __m256i yzp16, bool s8) {
  const __m256i ab = _mm256_adds_epi16(_mm256_packs_epi32(q[0], q[1]), yzp16);
  const __m256i bytes = s8 ? _mm256_packs_epi16(ab, ab) : _mm256_packus_epi16(ab, ab);
  return _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 0, 4, 1, 5)));
}

constexpr int kVectors = 2;  // per pass: 16 output channels, a quarter of a weight block

using Acc = __m256i[3][kVectors];

// acc[r] += pixel r's exact products with 16 channels' int16 weight pairs.
template <int R>
[[gnu::always_inline]] inline void accumulate_exact(const NhwcBlock& b, int r0, int64_t o0,
                                                    Acc& acc) {
  const __m256i low_bytes = _mm256_set1_epi16(0x00ff);
  const int16_t* w = b.w16 + o0 * 2;
  for (int64_t t = 0; t < b.taps; ++t) {
    const uint8_t* x[R];
    for (int r = 0; r < R; ++r) x[r] = b.px[r0 + r] + b.tap_off[t];
    for (int64_t q = 0; q < b.C4; ++q, w += kNhwcOcBlock * 4) {
      __m256i wa[kVectors], wb[kVectors];
      for (int v = 0; v < kVectors; ++v) {
        wa[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16 * v));
        wb[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + kNhwcOcBlock * 2 + 16 * v));
      }
      for (int r = 0; r < R; ++r) {
        const __m256i xv = bcast(x[r] + q * 4);
        const __m256i xa = _mm256_and_si256(xv, low_bytes), xb = _mm256_srli_epi16(xv, 8);
        for (int v = 0; v < kVectors; ++v)
          acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_add_epi32(_mm256_madd_epi16(xa, wa[v]),
                                                                   _mm256_madd_epi16(xb, wb[v])));
      }
    }
  }
}

// acc[r] += pixel r's pair sums (saturated to int16, MLAS's) with 16
// channels' s8 weights.
template <int R>
[[gnu::always_inline]] inline void accumulate_pairs(const NhwcBlock& b, int r0, int64_t o0,
                                                    Acc& acc) {
  const __m256i ones = _mm256_set1_epi16(1);
  const int8_t* w = b.w + o0 * 4;
  for (int64_t t = 0; t < b.taps; ++t) {
    const uint8_t* x[R];
    for (int r = 0; r < R; ++r) x[r] = b.px[r0 + r] + b.tap_off[t];
    for (int64_t q = 0; q < b.C4; ++q, w += kNhwcOcBlock * 4) {
      __m256i wv[kVectors];
      for (int v = 0; v < kVectors; ++v)
        wv[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32 * v));
      for (int r = 0; r < R; ++r) {
        const __m256i xv = bcast(x[r] + q * 4);
        for (int v = 0; v < kVectors; ++v)
          acc[r][v] =
              _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(_mm256_maddubs_epi16(xv, wv[v]), ones));
      }
    }
  }
}

// R pixels (R <= 3) from pixel r0 x 16 channels from channel o0 of the block.
// Lanes past the block's output channels meet zero weights and are computed
// but not stored. 3 x 2 accumulators, the weight vectors and a pixel's
// broadcast fit the 16 registers.
template <int R, bool kPairs>
void pass(const NhwcBlock& b, int r0, int64_t o0) {
  Acc acc;
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kVectors; ++v)
      acc[r][v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.offset + o0 + 8 * v));
  if constexpr (kPairs)
    accumulate_pairs<R>(b, r0, o0, acc);
  else
    accumulate_exact<R>(b, r0, o0, acc);
  const int32_t hi = b.y_s8 ? 127 : 255;
  const __m256 fhi = _mm256_set1_ps(static_cast<float>(hi - b.y_zp));
  const __m256i yzp16 = _mm256_set1_epi16(static_cast<int16_t>(b.y_zp));
  const int64_t n = b.lanes - o0;  // channels to store (> 0)
  // Unrolled, so the accumulators stay in registers (see the VNNI kernel).
#pragma GCC unroll 3
  for (int r = 0; r < R; ++r) {
    __m256i q[kVectors];
    for (int v = 0; v < kVectors; ++v) q[v] = rounded(acc[r][v], b.multiplier + o0 + 8 * v, fhi);
    const __m128i codes = pack16(q, yzp16, b.y_s8);
    uint8_t* y = b.y + (r0 + r) * b.y_stride + o0;
    if (n >= 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y), codes);
    } else {  // a channels-last y's last block: the next pixel follows
      alignas(16) uint8_t tmp[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(tmp), codes);
      std::memcpy(y, tmp, static_cast<size_t>(n));
    }
  }
}

template <bool kPairs>
void blocks(const NhwcBlock& b, int R) {
  for (int64_t o0 = 0; o0 < b.lanes; o0 += 8 * kVectors) {
    int r = 0;
    for (; r + 3 <= R; r += 3) pass<3, kPairs>(b, r, o0);
    if (R - r == 2) pass<2, kPairs>(b, r, o0);
    if (R - r == 1) pass<1, kPairs>(b, r, o0);
  }
}

}  // namespace

void nhwc_block_avx2(const NhwcBlock& b, int R) {
  blocks<false>(b, R);
}

void nhwc_block_pairs_avx2(const NhwcBlock& b, int R) {
  blocks<true>(b, R);
}

}  // namespace npukit::qconv

#include "ops/cpu/isa-end.inc"

#else  // not x86-64: never listed as runnable

namespace npukit::qconv {
void nhwc_block_avx2(const NhwcBlock& b, int R) {
  nhwc_block_portable(b, R);
}
void nhwc_block_pairs_avx2(const NhwcBlock& b, int R) {
  nhwc_block_portable(b, R);
}
}  // namespace npukit::qconv

#endif
