// pool2d kernels for AVX2: 8 fp32 or 32 byte lanes. Float tails load with
// maskload and store the first n lanes by plain stores (maskstore only where
// the lanes are not a prefix; masked-off elements are never touched); byte
// tails go through a small buffer, since AVX2 has no byte masks.
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "ops/cpu/f32-store-first-avx2.hpp"

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
  // Loads n lanes at a lane stride of 1, 2 or ls elements; masked-off
  // elements are never read (2: up to the last lane's own element only).
  template <int LK>
  struct FLoad {
    __m256i a, b, idx;
    bool full;
    NPUKIT_POOL_TARGET FLoad(int64_t ls, int n) : full(n == V) {
      a = mask(LK == 2 ? 2 * n - 1 : n);
      b = mask(2 * n - 1 - 8);
      idx = iota_times(ls);
    }
    NPUKIT_POOL_TARGET F operator()(const float* p) const {
      if constexpr (LK == 1) return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, a);
      if constexpr (LK == 2) {
        // [x0 x2 y0 y2 | x4 x6 y4 y6] -> [x0 x2 x4 x6 y0 y2 y4 y6]
        const F s = _mm256_shuffle_ps(_mm256_maskload_ps(p, a), _mm256_maskload_ps(p + 8, b), 0x88);
        return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xd8));
      }
      return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, idx, _mm256_castsi256_ps(a), 4);
    }
  };
  // dst row i = column i of the 8 x 8 block whose row j is src + j*ss: three
  // butterfly stages, each swapping the off-diagonal s x s blocks of every
  // 2s x 2s block.
  NPUKIT_POOL_TARGET static void transpose(const float* src, int64_t ss, float* dst, int64_t ds) {
    __m256 r[8];
    for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(src + j * ss);
    for (int i : {0, 1, 2, 3}) {
      const __m256 a = r[i], b = r[i + 4];
      r[i] = _mm256_permute2f128_ps(a, b, 0x20);
      r[i + 4] = _mm256_permute2f128_ps(a, b, 0x31);
    }
    for (int i : {0, 1, 4, 5}) {
      const __m256 a = r[i], b = r[i + 2];
      r[i] = _mm256_shuffle_ps(a, b, 0x44);
      r[i + 2] = _mm256_shuffle_ps(a, b, 0xee);
    }
    for (int i : {0, 2, 4, 6}) {
      const __m256 a = r[i], b = r[i + 1];
      r[i] = _mm256_blend_ps(a, _mm256_moveldup_ps(b), 0xaa);
      r[i + 1] = _mm256_blend_ps(_mm256_movehdup_ps(a), b, 0xaa);
    }
    for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + i * ds, r[i]);
  }
  // Global pools (f32-pool2d-nchw-global.inc): 128-bit lane l = the n floats
  // at p + l*ls (masked-off elements +0, never read); 4x4 transposes per lane.
  template <bool Full>
  NPUKIT_POOL_TARGET static F load_quads(const float* p, int64_t ls, int n) {
    const __m128i m = _mm_cmpgt_epi32(_mm_set1_epi32(n), _mm_setr_epi32(0, 1, 2, 3));
    if constexpr (Full)
      return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p)), _mm_loadu_ps(p + ls), 1);
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_maskload_ps(p, m)),
                                _mm_maskload_ps(p + ls, m), 1);
  }
  NPUKIT_POOL_TARGET static void transpose_quads(F& a, F& b, F& c, F& d) {
    const __m256d t0 = _mm256_castps_pd(_mm256_unpacklo_ps(a, b));
    const __m256d t1 = _mm256_castps_pd(_mm256_unpackhi_ps(a, b));
    const __m256d t2 = _mm256_castps_pd(_mm256_unpacklo_ps(c, d));
    const __m256d t3 = _mm256_castps_pd(_mm256_unpackhi_ps(c, d));
    a = _mm256_castpd_ps(_mm256_unpacklo_pd(t0, t2));
    b = _mm256_castpd_ps(_mm256_unpackhi_pd(t0, t2));
    c = _mm256_castpd_ps(_mm256_unpacklo_pd(t1, t3));
    d = _mm256_castpd_ps(_mm256_unpackhi_pd(t1, t3));
  }
  NPUKIT_POOL_TARGET static F loadu(const float* p) { return _mm256_loadu_ps(p); }
  NPUKIT_POOL_TARGET static F load_even(const float* p) {
    // [x0 x2 y0 y2 | x4 x6 y4 y6] -> [x0 x2 x4 x6 y0 y2 y4 y6]
    const F s = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xd8));
  }
  NPUKIT_POOL_TARGET static F load_odd(const float* p) {  // p[1], p[3], ..., p[2V-1]
    const F s = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), 0xdd);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xd8));
  }
  // Lanes 0, 2, .., 2V-2 / 1, 3, .., 2V-1 of the 2V lanes a then b (stride-2 taps).
  NPUKIT_POOL_TARGET static F even(F a, F b) {
    const F s = _mm256_shuffle_ps(a, b, 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xd8));
  }
  NPUKIT_POOL_TARGET static F odd(F a, F b) {
    const F s = _mm256_shuffle_ps(a, b, 0xdd);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xd8));
  }
  // Arbitrary lane masks: bit i = lane i. load_m: masked-off lanes +0, never read.
  using M = __m256i;
  NPUKIT_POOL_TARGET static M lane_mask(uint32_t bits) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i b = _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits)), bit);
    return _mm256_cmpeq_epi32(b, bit);
  }
  NPUKIT_POOL_TARGET static F load_m(M m, const float* p) { return _mm256_maskload_ps(p, m); }
  NPUKIT_POOL_TARGET static F select(M m, F a, F b) {
    return _mm256_blendv_ps(b, a, _mm256_castsi256_ps(m));
  }
  // The first n < V lanes by plain stores (f32-store-first-avx2.hpp): a
  // VMASKMOVPS store is 42 uops and 12 cycles on Zen 2 and 3, and the row
  // tails of small planes (14x14: every second vector) are first-n-lane masks.
  NPUKIT_POOL_TARGET static void store_first(float* p, F v, int n) { store_first_f32x8(p, v, n); }
  // Masked-off elements are not written.
  NPUKIT_POOL_TARGET static void store_m(M m, float* p, F v) { _mm256_maskstore_ps(p, m, v); }
  NPUKIT_POOL_TARGET static void store(float* p, int64_t ys, F v, int n) {
    if (ys == 1) {
      if (n == V)
        _mm256_storeu_ps(p, v);
      else
        store_first(p, v, n);
    } else {
      alignas(32) float tmp[V];
      _mm256_store_ps(tmp, v);
      for (int i = 0; i < n; ++i) p[i * ys] = tmp[i];
    }
  }
  // a + b with a as VADDPS's first source, which decides the result when both
  // are NaN (the reference's x86_add). Inline asm: GCC treats _mm256_add_ps as
  // commutative and may swap the operands.
  NPUKIT_POOL_TARGET static F add(F a, F b) {
    F r;
    asm("vaddps %2, %1, %0" : "=x"(r) : "x"(a), "x"(b));
    return r;
  }
  // The scalar a + b under the same rule (a compiler may swap `+`'s operands too).
  NPUKIT_POOL_TARGET static float add1(float a, float b) {
    float r;
    asm("vaddss %2, %1, %0" : "=x"(r) : "x"(a), "x"(b));
    return r;
  }
  // a * b with a as VMULPS's first source (x86_mul; sum pooling's coeff may be NaN).
  NPUKIT_POOL_TARGET static F mul(F a, F b) {
    F r;
    asm("vmulps %2, %1, %0" : "=x"(r) : "x"(a), "x"(b));
    return r;
  }
  NPUKIT_POOL_TARGET static F div(F a, F b) { return _mm256_div_ps(a, b); }
  // MAXPS returns its second operand unless the first is greater: a > b ? a : b.
  NPUKIT_POOL_TARGET static F max(F a, F b) { return _mm256_max_ps(a, b); }
  NPUKIT_POOL_TARGET static F nan_to(F m, F v) {
    return _mm256_blendv_ps(m, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  NPUKIT_POOL_TARGET static uint32_t nan_lanes(F v) {  // bit i: lane i is NaN
    return static_cast<uint32_t>(_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
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
  // Byte lanes at a lane stride of 1 or 2; AVX2 has no byte masks, so a
  // partial vector (and any other stride) is collected through a buffer.
  template <int LK>
  struct BLoad {
    int64_t ls;
    int n;
    NPUKIT_POOL_TARGET BLoad(int64_t ls_, int n_) : ls(ls_), n(n_) {}
    NPUKIT_POOL_TARGET B operator()(const uint8_t* p) const {
      alignas(32) uint8_t tmp[2 * VB] = {};
      if constexpr (LK == 1) {
        if (n == VB) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
        std::memcpy(tmp, p, static_cast<size_t>(n));
        return _mm256_load_si256(reinterpret_cast<const __m256i*>(tmp));
      } else if constexpr (LK == 2) {
        const __m256i lo = _mm256_set1_epi16(0x00ff);
        __m256i x, y;
        if (n == VB) {
          // Bytes 0..31 and 31..62: never the byte after the last lane's own.
          x = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), lo);
          y = _mm256_srli_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 31)), 8);
        } else {
          std::memcpy(tmp, p, static_cast<size_t>(2 * n - 1));
          x = _mm256_and_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(tmp)), lo);
          y = _mm256_and_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(tmp + VB)), lo);
        }
        // packus interleaves x and y per 128-bit lane; put the quadwords back in order.
        return _mm256_permute4x64_epi64(_mm256_packus_epi16(x, y), 0xd8);
      } else {
        for (int i = 0; i < n; ++i) tmp[i] = p[i * ls];
        return _mm256_load_si256(reinterpret_cast<const __m256i*>(tmp));
      }
    }
  };
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
const char* f32_sweep_declines_avx2(const Pool2dProblem& pr) {
  return avx2::f32_sweep_declines<avx2::Simd>(pr);
}
void max_pool2d_x8_avx2(const Pool2dProblem& pr) {
  avx2::x8_max_pool2d<avx2::Simd>(pr);
}

}  // namespace npukit::cpu
