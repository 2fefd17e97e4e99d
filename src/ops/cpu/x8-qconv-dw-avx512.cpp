// AVX-512 and AVX2 output rows of the depthwise integer convolution
// (x8-qconv-dw.cpp): 16 (8) output columns per step, every tap multiplied
// (vpmulld, exact) and added in a register; strides 1 and 2 load the taps
// directly (stride 2 keeps the even int16 of each int32 lane), other strides
// take the portable loop; AVX-512 masks the last columns, AVX2 computes one
// more whole vector.
#include "ops/cpu/qconv_gemm.hpp"

#if defined(__x86_64__)
// GCC 12 reports its own _mm512_undefined_* placeholders inside the AVX-512
// intrinsics as maybe-uninitialized (a false positive of the header).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstring>

namespace npukit::qconv {

namespace {

// Columns [t, t + 16) of one output row; `m` masks the columns past the end
// (their taps are not loaded, their sums not stored).
template <int S>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) inline void step512(const DwRow& r,
                                                                                  int64_t t,
                                                                                  __mmask16 m,
                                                                                  int32_t* acc) {
  __m512i a = _mm512_setzero_si512();
  for (int64_t kh = 0; kh < r.kh; ++kh)
    for (int64_t kw = 0; kw < r.kw; ++kw) {
      const int16_t* s = r.row + kh * r.dh * r.wp + kw * r.dw + t * S;
      __m512i xv;
      if (S == 1) {
        xv = _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(m, s));
      } else {  // lane i holds columns 2i (low half) and 2i + 1: keep the low half
        const __m512i v = _mm512_maskz_loadu_epi32(m, s);
        xv = _mm512_srai_epi32(_mm512_slli_epi32(v, 16), 16);
      }
      a = _mm512_add_epi32(a, _mm512_mullo_epi32(xv, _mm512_set1_epi32(r.w[kh * r.kw + kw])));
    }
  _mm512_mask_storeu_epi32(acc + t, m, a);
}

template <int S>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void rows512(const DwRow& r,
                                                                           int32_t* acc) {
  int64_t t = 0;
  for (; t + 16 <= r.n; t += 16) step512<S>(r, t, __mmask16(0xFFFF), acc);
  if (t < r.n) step512<S>(r, t, __mmask16((1u << (r.n - t)) - 1), acc);
}

// Columns [t, t + 8) of one output row (taps read past the row's last
// column stay within the plane's slack, see run_depthwise).
template <int S>
__attribute__((target("avx2,fma"))) inline __m256i step256(const DwRow& r, int64_t t) {
  __m256i a = _mm256_setzero_si256();
  for (int64_t kh = 0; kh < r.kh; ++kh)
    for (int64_t kw = 0; kw < r.kw; ++kw) {
      const int16_t* s = r.row + kh * r.dh * r.wp + kw * r.dw + t * S;
      __m256i xv;
      if (S == 1) {
        xv = _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
      } else {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
        xv = _mm256_srai_epi32(_mm256_slli_epi32(v, 16), 16);
      }
      a = _mm256_add_epi32(a, _mm256_mullo_epi32(xv, _mm256_set1_epi32(r.w[kh * r.kw + kw])));
    }
  return a;
}

// Whole vectors, then the last n % 8 columns by one more vector through a
// stack copy (7x7 and 14x14 stride-2 rows are all tail).
template <int S>
__attribute__((target("avx2,fma"))) void rows256(const DwRow& r, int32_t* acc) {
  int64_t t = 0;
  for (; t + 8 <= r.n; t += 8)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + t), step256<S>(r, t));
  if (t == r.n) return;
  alignas(32) int32_t last[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(last), step256<S>(r, t));
  std::memcpy(acc + t, last, static_cast<size_t>(r.n - t) * sizeof(int32_t));
}

}  // namespace

// The plane fill 32 columns per step (zero-extend, subtract), the last step
// masked so that the borders next to the interior stay zero.
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void dw_fill_avx512(
    const uint8_t* src, int64_t sh, int64_t sw, int64_t H, int64_t W, int32_t zp, uint8_t flip,
    int16_t* dst, int64_t Wp) {
  if (sw != 1) return dw_fill_portable(src, sh, sw, H, W, zp, flip, dst, Wp);
  const __m256i f = _mm256_set1_epi8(static_cast<char>(flip));
  const __m512i z = _mm512_set1_epi16(static_cast<int16_t>(zp + (flip ? 128 : 0)));
  for (int64_t h = 0; h < H; ++h) {
    const uint8_t* s = src + h * sh;
    int16_t* d = dst + h * Wp;
    for (int64_t w = 0; w < W; w += 32) {
      const __mmask32 k =
          W - w >= 32 ? ~__mmask32(0) : static_cast<__mmask32>((uint64_t{1} << (W - w)) - 1);
      const __m256i v = _mm256_xor_si256(_mm256_maskz_loadu_epi8(k, s + w), f);
      _mm512_mask_storeu_epi16(d + w, k, _mm512_sub_epi16(_mm512_cvtepu8_epi16(v), z));
    }
  }
}

void dw_row_avx512(const DwRow& r, int32_t* acc) {
  if (r.sw == 1)
    rows512<1>(r, acc);
  else if (r.sw == 2)
    rows512<2>(r, acc);
  else
    dw_row_portable(r, acc);
}

void dw_row_avx2(const DwRow& r, int32_t* acc) {
  if (r.sw == 1)
    rows256<1>(r, acc);
  else if (r.sw == 2)
    rows256<2>(r, acc);
  else
    dw_row_portable(r, acc);
}

}  // namespace npukit::qconv

#else

namespace npukit::qconv {
void dw_fill_avx512(const uint8_t* src, int64_t sh, int64_t sw, int64_t H, int64_t W, int32_t zp,
                    uint8_t flip, int16_t* dst, int64_t Wp) {
  dw_fill_portable(src, sh, sw, H, W, zp, flip, dst, Wp);
}
void dw_row_avx512(const DwRow& r, int32_t* acc) {
  dw_row_portable(r, acc);
}
void dw_row_avx2(const DwRow& r, int32_t* acc) {
  dw_row_portable(r, acc);
}
}  // namespace npukit::qconv

#endif
