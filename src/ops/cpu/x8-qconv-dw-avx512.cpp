// AVX-512 and AVX2 rows of the depthwise integer convolution
// (x8-qconv-dw.cpp): acc[t] += row[t * stride] * w exactly in int32, 16 (8)
// output columns per step for strides 1 and 2; other strides and the tail
// take the portable loop.
#include "ops/cpu/qconv_gemm.hpp"

#if defined(__x86_64__)
// GCC 12 reports its own _mm512_undefined_* placeholders inside the AVX-512
// intrinsics as maybe-uninitialized (a false positive of the header).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

namespace npukit::qconv {

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void dw_row_avx512(
    const int16_t* row, int64_t stride, int32_t w, int64_t n, int32_t* acc) {
  const __m512i wb = _mm512_set1_epi32(w);
  int64_t t = 0;
  if (stride == 1) {
    for (; t + 16 <= n; t += 16) {
      const __m512i xv =
          _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + t)));
      _mm512_storeu_si512(
          acc + t, _mm512_add_epi32(_mm512_loadu_si512(acc + t), _mm512_mullo_epi32(xv, wb)));
    }
  } else if (stride == 2) {
    for (; t + 16 <= n; t += 16) {
      // Lane i holds columns 2i (low half) and 2i + 1: keep the low half, sign-extended.
      const __m512i v = _mm512_loadu_si512(row + 2 * t);
      const __m512i xv = _mm512_srai_epi32(_mm512_slli_epi32(v, 16), 16);
      _mm512_storeu_si512(
          acc + t, _mm512_add_epi32(_mm512_loadu_si512(acc + t), _mm512_mullo_epi32(xv, wb)));
    }
  }
  dw_row_portable(row + t * stride, stride, w, n - t, acc + t);
}

__attribute__((target("avx2,fma"))) void dw_row_avx2(const int16_t* row, int64_t stride, int32_t w,
                                                     int64_t n, int32_t* acc) {
  const __m256i wb = _mm256_set1_epi32(w);
  int64_t t = 0;
  if (stride == 1) {
    for (; t + 8 <= n; t += 8) {
      const __m256i xv =
          _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + t)));
      __m256i* a = reinterpret_cast<__m256i*>(acc + t);
      _mm256_storeu_si256(a, _mm256_add_epi32(_mm256_loadu_si256(a), _mm256_mullo_epi32(xv, wb)));
    }
  } else if (stride == 2) {
    for (; t + 8 <= n; t += 8) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * t));
      const __m256i xv = _mm256_srai_epi32(_mm256_slli_epi32(v, 16), 16);
      __m256i* a = reinterpret_cast<__m256i*>(acc + t);
      _mm256_storeu_si256(a, _mm256_add_epi32(_mm256_loadu_si256(a), _mm256_mullo_epi32(xv, wb)));
    }
  }
  dw_row_portable(row + t * stride, stride, w, n - t, acc + t);
}

}  // namespace npukit::qconv

#else

namespace npukit::qconv {
void dw_row_avx512(const int16_t* row, int64_t stride, int32_t w, int64_t n, int32_t* acc) {
  dw_row_portable(row, stride, w, n, acc);
}
void dw_row_avx2(const int16_t* row, int64_t stride, int32_t w, int64_t n, int32_t* acc) {
  dw_row_portable(row, stride, w, n, acc);
}
}  // namespace npukit::qconv

#endif
