// split_row_stride2 for AVX-512: 32 input columns per step, two permutes
// (even lanes, odd lanes) instead of the baseline build's SSE shuffles, and
// the rest of the row in one masked step; the stride-2 depthwise layers spent
// more time here than in their arithmetic.
#include <immintrin.h>

#include "phase_split.hpp"

#define NPUKIT_AVX512 __attribute__((target("avx512f")))

namespace npukit::cpu {

NPUKIT_AVX512 void split_row_stride2_avx512(const float* s, int64_t W, int64_t pad_left,
                                            float* even, float* odd) {
  int64_t w = 0;
  if (pad_left % 2 != 0 && W > 0) {
    odd[pad_left / 2] = s[0];
    w = 1;
  }
  const int64_t base = (pad_left + w) / 2;
  float* e = even + base;
  float* o = odd + base;
  const float* src = s + w;
  const int64_t pairs = (W - w) / 2;
  const __m512i pick_even =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i pick_odd =
      _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  int64_t i = 0;
  for (; i + 16 <= pairs; i += 16) {
    const __m512 a = _mm512_loadu_ps(src + 2 * i), b = _mm512_loadu_ps(src + 2 * i + 16);
    _mm512_storeu_ps(e + i, _mm512_permutex2var_ps(a, pick_even, b));
    _mm512_storeu_ps(o + i, _mm512_permutex2var_ps(a, pick_odd, b));
  }
  if (i < pairs) {  // the last 1-15 pairs through masks (narrow rows are mostly tail)
    const int64_t n = 2 * (pairs - i);
    const auto lo = static_cast<__mmask16>(n >= 16 ? 0xffffu : (1u << n) - 1u);
    const auto hi = static_cast<__mmask16>(n > 16 ? (1u << (n - 16)) - 1u : 0u);
    const auto out = static_cast<__mmask16>((1u << (pairs - i)) - 1u);
    const __m512 a = _mm512_maskz_loadu_ps(lo, src + 2 * i),
                 b = _mm512_maskz_loadu_ps(hi, src + 2 * i + 16);
    _mm512_mask_storeu_ps(e + i, out, _mm512_permutex2var_ps(a, pick_even, b));
    _mm512_mask_storeu_ps(o + i, out, _mm512_permutex2var_ps(a, pick_odd, b));
  }
  if (w + 2 * pairs < W) e[pairs] = s[W - 1];
}

}  // namespace npukit::cpu
