// AVX512-VNNI output rows of the depthwise integer convolution
// (x8-qconv-dw.cpp): vpdpwssd adds two int16 x int16 products to each int32
// lane, so one instruction applies two horizontally adjacent taps (kw, kw+1)
// of a kernel row. The plane holds x - x_zp and the weights w - w_zp, both
// within [-255, 255] (int16), and the sums are exact in int32 (bounded by the
// caller), so the result equals the reference's whatever the order.
//  - stride 2: the int32 lane i of the plane at column 2(t+i)+kw is the tap
//    pair (kw, kw+1) of output t+i: one vpdpwssd per pair of taps;
//  - stride 1: lane i at column t+kw holds the pair of output t+2i, lane i at
//    t+kw+1 that of output t+2i+1: even and odd outputs are summed apart,
//    then interleaved.
// Dilated columns (no adjacent taps), other strides and stride-1 rows of at
// most 16 columns take the AVX-512 rows.
#include "ops/cpu/qconv_gemm.hpp"

#if defined(__x86_64__)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstdint>

#define NPUKIT_AVX512VNNI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))

namespace npukit::qconv {

namespace {

// The weights of one kernel row as int32 lanes of (w[kw], w[kw+1]) pairs, the
// second 0 past the row's end. KH * KW <= 64 gives at most 64 pairs.
struct TapPairs {
  int32_t w[64];
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

// Outputs [t, t + 32) of a stride-1 row; `m` masks those past the end. The
// plane has one vector of slack past the last tap, so the loads stay inside it.
NPUKIT_AVX512VNNI inline void step_s1(const DwRow& r, const TapPairs& tp, int64_t t, __mmask32 m,
                                      int32_t* acc) {
  __m512i even = _mm512_setzero_si512(), odd = _mm512_setzero_si512();
  for (int64_t kh = 0; kh < r.kh; ++kh) {
    const int16_t* s = r.row + kh * r.dh * r.wp + t;
    for (int64_t j = 0; j < tp.per_row; ++j) {
      const __m512i w = _mm512_set1_epi32(tp.w[kh * tp.per_row + j]);
      even = _mm512_dpwssd_epi32(even, _mm512_loadu_si512(s + 2 * j), w);
      odd = _mm512_dpwssd_epi32(odd, _mm512_loadu_si512(s + 2 * j + 1), w);
    }
  }
  const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i second =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  _mm512_mask_storeu_epi32(acc + t, static_cast<__mmask16>(m),
                           _mm512_permutex2var_epi32(even, first, odd));
  _mm512_mask_storeu_epi32(acc + t + 16, static_cast<__mmask16>(m >> 16),
                           _mm512_permutex2var_epi32(even, second, odd));
}

// Outputs [t, t + 16) of a stride-2 row.
NPUKIT_AVX512VNNI inline void step_s2(const DwRow& r, const TapPairs& tp, int64_t t, __mmask16 m,
                                      int32_t* acc) {
  __m512i a = _mm512_setzero_si512();
  for (int64_t kh = 0; kh < r.kh; ++kh) {
    const int16_t* s = r.row + kh * r.dh * r.wp + 2 * t;
    for (int64_t j = 0; j < tp.per_row; ++j)
      a = _mm512_dpwssd_epi32(a, _mm512_loadu_si512(s + 2 * j),
                              _mm512_set1_epi32(tp.w[kh * tp.per_row + j]));
  }
  _mm512_mask_storeu_epi32(acc + t, m, a);
}

NPUKIT_AVX512VNNI void rows_s1(const DwRow& r, int32_t* acc) {
  const TapPairs tp = tap_pairs(r);
  int64_t t = 0;
  for (; t + 32 <= r.n; t += 32) step_s1(r, tp, t, ~__mmask32(0), acc);
  if (t < r.n) step_s1(r, tp, t, static_cast<__mmask32>((uint64_t{1} << (r.n - t)) - 1), acc);
}

NPUKIT_AVX512VNNI void rows_s2(const DwRow& r, int32_t* acc) {
  const TapPairs tp = tap_pairs(r);
  int64_t t = 0;
  for (; t + 16 <= r.n; t += 16) step_s2(r, tp, t, __mmask16(0xFFFF), acc);
  if (t < r.n) step_s2(r, tp, t, static_cast<__mmask16>((1u << (r.n - t)) - 1), acc);
}

}  // namespace

void dw_row_avx512vnni(const DwRow& r, int32_t* acc) {
  // Rows of at most 16 columns fill one AVX-512 vector; the 32-column
  // even/odd blocks would leave half their lanes idle.
  if (r.dw == 1 && r.sw == 1 && r.n > 16)
    rows_s1(r, acc);
  else if (r.dw == 1 && r.sw == 2)
    rows_s2(r, acc);
  else
    dw_row_avx512(r, acc);
}

}  // namespace npukit::qconv

#else

namespace npukit::qconv {
void dw_row_avx512vnni(const DwRow& r, int32_t* acc) {
  dw_row_portable(r, acc);
}
}  // namespace npukit::qconv

#endif
