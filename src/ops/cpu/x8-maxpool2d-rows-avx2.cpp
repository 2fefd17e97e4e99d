// Separable s8/u8 max pooling (x8-maxpool2d-rows.hpp) for AVX2: 32 byte
// lanes; row tails go through a small stack buffer (AVX2 has no byte masks).
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#define NPUKIT_X8ROWS_TARGET __attribute__((target("avx2")))
#define NPUKIT_X8ROWS_NS x8rows_avx2

namespace npukit::cpu::x8rows_avx2 {
namespace {

struct Simd {
  static constexpr int VB = 32;
  using B = __m256i;
  NPUKIT_X8ROWS_TARGET static B set1(uint8_t v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  NPUKIT_X8ROWS_TARGET static B load(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  NPUKIT_X8ROWS_TARGET static B load_n(const uint8_t* p, int n) {
    alignas(32) uint8_t tmp[32] = {};
    std::memcpy(tmp, p, static_cast<size_t>(n));
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(tmp));
  }
  NPUKIT_X8ROWS_TARGET static B load_n_fill(const uint8_t* p, int n, uint8_t f) {
    alignas(32) uint8_t tmp[32];
    std::memset(tmp, f, sizeof tmp);
    std::memcpy(tmp, p, static_cast<size_t>(n));
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(tmp));
  }
  template <class T>
  NPUKIT_X8ROWS_TARGET static T reduce_max(B v) {
    v = max<T>(v, _mm256_permute2x128_si256(v, v, 0x01));
    v = max<T>(v, _mm256_shuffle_epi32(v, 0x4e));
    v = max<T>(v, _mm256_shuffle_epi32(v, 0xb1));
    v = max<T>(v, _mm256_srli_epi32(v, 16));
    v = max<T>(v, _mm256_srli_epi16(v, 8));
    return static_cast<T>(_mm_cvtsi128_si32(_mm256_castsi256_si128(v)));
  }
  NPUKIT_X8ROWS_TARGET static void store(uint8_t* p, B v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  }
  NPUKIT_X8ROWS_TARGET static void store_n(uint8_t* p, B v, int n) {
    alignas(32) uint8_t tmp[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), v);
    std::memcpy(p, tmp, static_cast<size_t>(n));
  }
  template <class T>
  NPUKIT_X8ROWS_TARGET static B max(B a, B b) {
    if constexpr (T(-1) < T(0))
      return _mm256_max_epi8(a, b);
    else
      return _mm256_max_epu8(a, b);
  }
  // packus works per 128-bit lane: the quadword permute restores the order.
  NPUKIT_X8ROWS_TARGET static void deinterleave(const uint8_t* p, uint8_t* even, uint8_t* odd) {
    const B a = load(p), b = load(p + 32);
    const B lo = _mm256_set1_epi16(0x00ff);
    const B e = _mm256_packus_epi16(_mm256_and_si256(a, lo), _mm256_and_si256(b, lo));
    const B o = _mm256_packus_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
    store(even, _mm256_permute4x64_epi64(e, 0xd8));
    store(odd, _mm256_permute4x64_epi64(o, 0xd8));
  }
};

}  // namespace
}  // namespace npukit::cpu::x8rows_avx2

#include "x8-maxpool2d-rows.inc"

namespace npukit::cpu {

void max_pool2d_x8_rows_avx2(const Pool2dProblem& pr) {
  if (!x8rows_avx2::x8_rows<x8rows_avx2::Simd>(pr)) max_pool2d_x8_avx2(pr);
}

}  // namespace npukit::cpu
