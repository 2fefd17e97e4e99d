// Separable s8/u8 max pooling (x8-maxpool2d-rows.hpp) for AVX-512 BW: 64 byte
// lanes, row tails under masks (masked-off bytes are never read or written).
#include <immintrin.h>

#include <cstdint>

#define NPUKIT_X8ROWS_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#define NPUKIT_X8ROWS_NS x8rows_avx512

namespace npukit::cpu::x8rows_avx512 {
namespace {

struct Simd {
  static constexpr int VB = 64;
  using B = __m512i;
  NPUKIT_X8ROWS_TARGET static __mmask64 mask(int n) {
    return n >= 64 ? ~__mmask64(0) : (__mmask64(1) << n) - 1;
  }
  NPUKIT_X8ROWS_TARGET static B set1(uint8_t v) { return _mm512_set1_epi8(static_cast<char>(v)); }
  NPUKIT_X8ROWS_TARGET static B load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  NPUKIT_X8ROWS_TARGET static B load_n(const uint8_t* p, int n) {
    return _mm512_maskz_loadu_epi8(mask(n), p);
  }
  NPUKIT_X8ROWS_TARGET static B load_n_fill(const uint8_t* p, int n, uint8_t f) {
    return _mm512_mask_loadu_epi8(set1(f), mask(n), p);
  }
  template <class T>
  NPUKIT_X8ROWS_TARGET static T reduce_max(B v) {
    // maskz forms: GCC 12 warns about the undefined operand of the plain ones.
    v = max<T>(v, _mm512_maskz_shuffle_i64x2(0xff, v, v, 0x4e));
    v = max<T>(v, _mm512_maskz_shuffle_i64x2(0xff, v, v, 0xb1));
    v = max<T>(v, _mm512_maskz_shuffle_epi32(0xffff, v, _MM_PERM_BADC));
    v = max<T>(v, _mm512_maskz_shuffle_epi32(0xffff, v, _MM_PERM_CDAB));
    v = max<T>(v, _mm512_maskz_srli_epi32(0xffff, v, 16));
    v = max<T>(v, _mm512_maskz_srli_epi16(~__mmask32(0), v, 8));
    return static_cast<T>(_mm512_cvtsi512_si32(v));
  }
  NPUKIT_X8ROWS_TARGET static void store(uint8_t* p, B v) { _mm512_storeu_si512(p, v); }
  NPUKIT_X8ROWS_TARGET static void store_n(uint8_t* p, B v, int n) {
    _mm512_mask_storeu_epi8(p, mask(n), v);
  }
  template <class T>
  NPUKIT_X8ROWS_TARGET static B max(B a, B b) {
    if constexpr (T(-1) < T(0))
      return _mm512_max_epi8(a, b);
    else
      return _mm512_max_epu8(a, b);
  }
  // packus works per 128-bit lane: the quadword permute restores the order
  // (its maskz form sidesteps GCC 12's -Wmaybe-uninitialized).
  NPUKIT_X8ROWS_TARGET static void deinterleave(const uint8_t* p, uint8_t* even, uint8_t* odd) {
    const B a = _mm512_loadu_si512(p), b = _mm512_loadu_si512(p + 64);
    const B lo = _mm512_set1_epi16(0x00ff);
    const B order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
    const B e = _mm512_packus_epi16(_mm512_and_si512(a, lo), _mm512_and_si512(b, lo));
    const B o = _mm512_packus_epi16(_mm512_srli_epi16(a, 8), _mm512_srli_epi16(b, 8));
    _mm512_storeu_si512(even, _mm512_maskz_permutexvar_epi64(0xff, order, e));
    _mm512_storeu_si512(odd, _mm512_maskz_permutexvar_epi64(0xff, order, o));
  }
};

}  // namespace
}  // namespace npukit::cpu::x8rows_avx512

#include "x8-maxpool2d-rows.inc"

namespace npukit::cpu {

void max_pool2d_x8_rows_avx512(const Pool2dProblem& pr) {
  if (!x8rows_avx512::x8_rows<x8rows_avx512::Simd>(pr)) max_pool2d_x8_avx512(pr);
}

}  // namespace npukit::cpu
