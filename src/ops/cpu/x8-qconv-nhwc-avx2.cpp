// AVX2 micro-kernel of the channels-last integer convolution (qconv_nhwc.hpp)
// for hosts without AVX-512 VNNI: output channels in the lanes (8 per
// vector), int16 weights in pairs (NhwcBlock::w16), and per pixel and quad
// the pairs (x'0, x'1) and (x'2, x'3) zero-extended to int16 and broadcast:
// one vpmaddwd sums two u8 x s8 products per lane exactly in int32 (no
// saturation, unlike vpmaddubsw: 2 vpmaddwd per 4 products instead of the
// 7-bit split's 2 vpmaddubsw + 2 vpmaddwd), onto the lane's offset. The
// requantization is store_avx2's, its lower clamp by saturating packs.
#include "ops/cpu/qconv_nhwc.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::qconv {

namespace {

constexpr int kVectors = 4;  // per pass: 32 output channels, half a weight block

inline __m256i bcast(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

// float(acc) * m rounded to nearest even, clamped above to the code range
// minus y_zp only (past it the conversion would give INT_MIN); pack32's
// saturating packs clamp below: for an integer bound, clamping before or
// after rounding gives the same integer. acc already holds the offset.
inline __m256i rounded(__m256i a, const float* m, __m256 fhi) {
  const __m256 v = _mm256_min_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(a), _mm256_loadu_ps(m)), fhi);
  return _mm256_cvttps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// 32 codes of four vectors of rounded values in channel order: int32 ->
// int16 with saturation, + y_zp with int16 saturation (a saturated value
// stays past the code range on its side), -> u8/s8 with saturation (the
// reference's clamp). The packs interleave 128-bit lanes
// ([a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7]); one dword permutation
// restores the order.
inline __m256i pack32(const __m256i* q, __m256i yzp16, bool s8) {
  const __m256i ab = _mm256_adds_epi16(_mm256_packs_epi32(q[0], q[1]), yzp16);
  const __m256i cd = _mm256_adds_epi16(_mm256_packs_epi32(q[2], q[3]), yzp16);
  const __m256i bytes = s8 ? _mm256_packs_epi16(ab, cd) : _mm256_packus_epi16(ab, cd);
  return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// R pixels (R <= 2) from pixel r0 x 32 channels from channel o0 of the block.
// Lanes past the block's output channels meet zero weights and are computed
// but not stored.
template <int R>
void pass(const NhwcBlock& b, int r0, int64_t o0) {
  // Bytes (0, 1) and (2, 3) of each dword as zero-extended int16 pairs.
  const __m256i pair01 = _mm256_set1_epi32(static_cast<int32_t>(0x80018000u));
  const __m256i pair23 = _mm256_set1_epi32(static_cast<int32_t>(0x80038002u));
  __m256i acc[R][kVectors];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kVectors; ++v)
      acc[r][v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.offset + o0 + 8 * v));
  const int16_t* w = b.w16 + o0 * 2;
  for (int64_t t = 0; t < b.taps; ++t) {
    const uint8_t* x[R];
    for (int r = 0; r < R; ++r) x[r] = b.px[r0 + r] + b.tap_off[t];
    for (int64_t q = 0; q < b.C4; ++q, w += kNhwcOcBlock * 4) {
      __m256i xa[R], xb[R];
      for (int r = 0; r < R; ++r) {
        const __m256i xv = bcast(x[r] + q * 4);
        xa[r] = _mm256_shuffle_epi8(xv, pair01);
        xb[r] = _mm256_shuffle_epi8(xv, pair23);
      }
      for (int v = 0; v < kVectors; ++v) {
        const __m256i wa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16 * v));
        const __m256i wb =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + kNhwcOcBlock * 2 + 16 * v));
        for (int r = 0; r < R; ++r)
          acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_add_epi32(_mm256_madd_epi16(xa[r], wa),
                                                                   _mm256_madd_epi16(xb[r], wb)));
      }
    }
  }
  const int32_t hi = b.y_s8 ? 127 : 255;
  const __m256 fhi = _mm256_set1_ps(static_cast<float>(hi - b.y_zp));
  const __m256i yzp16 = _mm256_set1_epi16(static_cast<int16_t>(b.y_zp));
  const int64_t n = b.lanes - o0;  // channels to store (> 0)
  // Unrolled, so the accumulators stay in registers (see the VNNI kernel).
#pragma GCC unroll 2
  for (int r = 0; r < R; ++r) {
    __m256i q[kVectors];
    for (int v = 0; v < kVectors; ++v) q[v] = rounded(acc[r][v], b.multiplier + o0 + 8 * v, fhi);
    const __m256i codes = pack32(q, yzp16, b.y_s8);
    uint8_t* y = b.y + (r0 + r) * b.y_stride + o0;
    if (n >= 32) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y), codes);
    } else {  // a channels-last y's last block: the next pixel follows
      alignas(32) uint8_t tmp[32];
      _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), codes);
      std::memcpy(y, tmp, static_cast<size_t>(n));
    }
  }
}

}  // namespace

void nhwc_block_avx2(const NhwcBlock& b, int R) {
  for (int64_t o0 = 0; o0 < b.lanes; o0 += 8 * kVectors) {
    int r = 0;
    for (; r + 2 <= R; r += 2) pass<2>(b, r, o0);
    if (r < R) pass<1>(b, r, o0);
  }
}

}  // namespace npukit::qconv

#include "ops/cpu/isa-end.inc"

#else  // not x86-64: never listed as runnable

namespace npukit::qconv {
void nhwc_block_avx2(const NhwcBlock& b, int R) {
  nhwc_block_portable(b, R);
}
}  // namespace npukit::qconv

#endif
