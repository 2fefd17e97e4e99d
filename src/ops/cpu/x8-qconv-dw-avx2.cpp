// AVX2 output rows of the depthwise integer convolution (x8-qconv-dw.cpp)
// with two taps per instruction: vpmaddwd multiplies int16 pairs and adds
// each pair into an int32 lane, as vpdpwssd does for the VNNI rows
// (x8-qconv-dw-avx512vnni.cpp, same lane layouts). Plane values x - x_zp and
// weights w - w_zp lie in [-255, 255], so every pair sum and the row sums
// (bounded by the caller) are exact: the result equals the reference's.
//  - stride 2: int32 lane i at column 2(t+i)+kw holds the taps (kw, kw+1) of
//    output t+i;
//  - stride 1: lanes at column t+kw hold the pairs of outputs t+2i, lanes at
//    t+kw+1 those of t+2i+1; even and odd sums are interleaved at the end.
// The last n % 8 (n % 16) outputs are one more whole step through a stack
// copy: the plane's slack covers the taps read past the row. Dilated columns,
// other strides and stride-1 rows of at most 8 outputs take dw_row_avx2.
#include "ops/cpu/qconv_gemm.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#define NPUKIT_AVX2 __attribute__((target("avx2,fma")))

namespace npukit::qconv {

namespace {

// One kernel row's weights as int32 lanes (w[kw], w[kw+1]), 0 past its end.
struct TapPairs {
  int32_t w[64];  // KH * KW <= 64
  int64_t per_row = 0;
};

TapPairs tap_pairs(const DwRow& r) {
  TapPairs tp;
  tp.per_row = (r.kw + 1) / 2;
  for (int64_t kh = 0; kh < r.kh; ++kh)
    for (int64_t j = 0; j < tp.per_row; ++j) {
      const int32_t lo = r.w[kh * r.kw + 2 * j];
      const int32_t hi = 2 * j + 1 < r.kw ? r.w[kh * r.kw + 2 * j + 1] : 0;
      tp.w[kh * tp.per_row + j] = static_cast<int32_t>((static_cast<uint32_t>(hi) << 16) |
                                                       (static_cast<uint32_t>(lo) & 0xFFFFu));
    }
  return tp;
}

NPUKIT_AVX2 inline __m256i load16(const int16_t* s) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
}

// Outputs [t, t + 16) of a stride-1 row into out[0, 16).
NPUKIT_AVX2 inline void step_s1(const DwRow& r, const TapPairs& tp, int64_t t, int32_t* out) {
  __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
  for (int64_t kh = 0; kh < r.kh; ++kh) {
    const int16_t* s = r.row + kh * r.dh * r.wp + t;
    for (int64_t j = 0; j < tp.per_row; ++j) {
      const __m256i w = _mm256_set1_epi32(tp.w[kh * tp.per_row + j]);
      even = _mm256_add_epi32(even, _mm256_madd_epi16(load16(s + 2 * j), w));
      odd = _mm256_add_epi32(odd, _mm256_madd_epi16(load16(s + 2 * j + 1), w));
    }
  }
  // Per 128-bit half: unpacklo gives outputs (0..3 | 8..11), unpackhi (4..7 | 12..15).
  const __m256i lo = _mm256_unpacklo_epi32(even, odd), hi = _mm256_unpackhi_epi32(even, odd);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute2x128_si256(lo, hi, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
}

// Outputs [t, t + 8) of a stride-2 row into out[0, 8).
NPUKIT_AVX2 inline void step_s2(const DwRow& r, const TapPairs& tp, int64_t t, int32_t* out) {
  __m256i a = _mm256_setzero_si256();
  for (int64_t kh = 0; kh < r.kh; ++kh) {
    const int16_t* s = r.row + kh * r.dh * r.wp + 2 * t;
    for (int64_t j = 0; j < tp.per_row; ++j)
      a = _mm256_add_epi32(
          a, _mm256_madd_epi16(load16(s + 2 * j), _mm256_set1_epi32(tp.w[kh * tp.per_row + j])));
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), a);
}

template <int kStride>
NPUKIT_AVX2 void rows(const DwRow& r, int32_t* acc) {
  constexpr int64_t kStep = kStride == 1 ? 16 : 8;
  const TapPairs tp = tap_pairs(r);
  int64_t t = 0;
  for (; t + kStep <= r.n; t += kStep) {
    if (kStride == 1)
      step_s1(r, tp, t, acc + t);
    else
      step_s2(r, tp, t, acc + t);
  }
  if (t == r.n) return;
  alignas(32) int32_t last[16];
  if (kStride == 1)
    step_s1(r, tp, t, last);
  else
    step_s2(r, tp, t, last);
  std::memcpy(acc + t, last, static_cast<size_t>(r.n - t) * sizeof(int32_t));
}

}  // namespace

void dw_row_avx2_pairs(const DwRow& r, int32_t* acc) {
  if (r.dw == 1 && r.sw == 1 && r.n > 8)
    rows<1>(r, acc);
  else if (r.dw == 1 && r.sw == 2)
    rows<2>(r, acc);
  else
    dw_row_avx2(r, acc);
}

}  // namespace npukit::qconv

#else

namespace npukit::qconv {
void dw_row_avx2_pairs(const DwRow& r, int32_t* acc) {
  dw_row_portable(r, acc);
}
}  // namespace npukit::qconv

#endif
