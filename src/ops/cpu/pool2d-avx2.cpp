// pool2d kernels for AVX2: 8 fp32 or 32 byte lanes. Float tails use
// maskload/maskstore (masked-off elements are never touched); byte tails go
// through a small buffer, since AVX2 has no byte masks.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#define NPUKIT_POOL_TARGET __attribute__((target("avx2,fma")))
#define NPUKIT_POOL_NS avx2

namespace npukit::cpu::avx2 {
namespace {

struct Simd {
  static constexpr int V = 8, VB = 32;
  using F = __m256;
  using B = __m256i;

  NPUKIT_POOL_TARGET static __m256i mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  NPUKIT_POOL_TARGET static __m256i iota_times(int64_t s) {
    return _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                              _mm256_set1_epi32(static_cast<int>(s)));
  }

  NPUKIT_POOL_TARGET static F zero() { return _mm256_setzero_ps(); }
  NPUKIT_POOL_TARGET static F set1(float v) { return _mm256_set1_ps(v); }
  NPUKIT_POOL_TARGET static F load1(const float* p, int n) {
    return n == V ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask(n));
  }
  NPUKIT_POOL_TARGET static F load2(const float* p, int n) {
    const int e = 2 * n - 1;  // elements read: up to the last lane's own
    const F a = _mm256_maskload_ps(p, mask(e));
    const F b = _mm256_maskload_ps(p + 8, mask(e - 8));
    // [a0 a2 b0 b2 | a4 a6 b4 b6] -> [a0 a2 a4 a6 b0 b2 b4 b6]
    const F s = _mm256_shuffle_ps(a, b, 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xd8));
  }
  NPUKIT_POOL_TARGET static F gather(const float* p, int64_t ls, int n) {
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, iota_times(ls),
                                    _mm256_castsi256_ps(mask(n)), 4);
  }
  NPUKIT_POOL_TARGET static void store(float* p, int64_t ys, F v, int n) {
    if (ys == 1) {
      if (n == V)
        _mm256_storeu_ps(p, v);
      else
        _mm256_maskstore_ps(p, mask(n), v);
    } else {
      alignas(32) float tmp[V];
      _mm256_store_ps(tmp, v);
      for (int i = 0; i < n; ++i) p[i * ys] = tmp[i];
    }
  }
  NPUKIT_POOL_TARGET static F add(F a, F b) { return _mm256_add_ps(a, b); }
  NPUKIT_POOL_TARGET static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  NPUKIT_POOL_TARGET static F div(F a, F b) { return _mm256_div_ps(a, b); }
  // MAXPS returns its second operand unless the first is greater: a > b ? a : b.
  NPUKIT_POOL_TARGET static F max(F a, F b) { return _mm256_max_ps(a, b); }
  NPUKIT_POOL_TARGET static F nan_to(F m, F v) {
    return _mm256_blendv_ps(m, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  NPUKIT_POOL_TARGET static F flush(F v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i tiny = _mm256_cmpeq_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7f800000)),
                                            _mm256_setzero_si256());
    const __m256i sign = _mm256_and_si256(bits, _mm256_set1_epi32(INT32_MIN));
    return _mm256_castsi256_ps(_mm256_blendv_epi8(bits, sign, tiny));
  }
  NPUKIT_POOL_TARGET static bool any_abs_eq(F v, float c) {
    const F a = _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
    return _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(c), _CMP_EQ_OQ)) != 0;
  }
  NPUKIT_POOL_TARGET static void to(float* a, F v) { _mm256_storeu_ps(a, v); }
  NPUKIT_POOL_TARGET static F from(const float* a) { return _mm256_loadu_ps(a); }

  NPUKIT_POOL_TARGET static B set1_8(uint8_t v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  NPUKIT_POOL_TARGET static B load8_1(const uint8_t* p, int n) {
    if (n == VB) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    alignas(32) uint8_t tmp[VB] = {};
    std::memcpy(tmp, p, static_cast<size_t>(n));
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(tmp));
  }
  NPUKIT_POOL_TARGET static B load8_2(const uint8_t* p, int n) {
    __m256i a, b;
    if (n == VB) {
      // Bytes 0..31 and 31..62: never the byte after the last lane's own.
      a = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)),
                           _mm256_set1_epi16(0x00ff));
      b = _mm256_srli_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 31)), 8);
    } else {
      alignas(32) uint8_t tmp[2 * VB] = {};
      std::memcpy(tmp, p, static_cast<size_t>(2 * n - 1));
      a = _mm256_and_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(tmp)),
                           _mm256_set1_epi16(0x00ff));
      b = _mm256_and_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(tmp + VB)),
                           _mm256_set1_epi16(0x00ff));
    }
    // packus interleaves a and b per 128-bit lane; put the quadwords back in order.
    return _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xd8);
  }
  NPUKIT_POOL_TARGET static void store8(uint8_t* p, int64_t ys, B v, int n) {
    alignas(32) uint8_t tmp[VB];
    if (ys == 1 && n == VB) return _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
    _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), v);
    for (int i = 0; i < n; ++i) p[i * ys] = tmp[i];
  }
  template <class T>
  NPUKIT_POOL_TARGET static B max8(B a, B b) {
    if constexpr (T(-1) < T(0))
      return _mm256_max_epi8(a, b);
    else
      return _mm256_max_epu8(a, b);
  }
};

}  // namespace
}  // namespace npukit::cpu::avx2

#include "pool2d_core.inc"

namespace npukit::cpu {

void pool2d_f32_avx2(const Pool2dProblem& pr) {
  avx2::f32_pool2d<avx2::Simd>(pr);
}
void max_pool2d_x8_avx2(const Pool2dProblem& pr) {
  avx2::x8_max_pool2d<avx2::Simd>(pr);
}

}  // namespace npukit::cpu
