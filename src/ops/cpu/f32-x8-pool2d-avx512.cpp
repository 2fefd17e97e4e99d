// pool2d kernels for AVX-512 (F, BW, DQ, VL): 16 fp32 or 64 byte lanes, tails
// and stride-2 reads under masks (masked-off elements are never touched).
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#define NPUKIT_POOL_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#define NPUKIT_POOL_NS avx512

namespace npukit::cpu::avx512 {
namespace {

struct Simd {
  static constexpr int V = 16, VB = 64;
  using F = __m512;
  using B = __m512i;

  NPUKIT_POOL_TARGET static __mmask16 m16(int n) {
    return n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
  }
  NPUKIT_POOL_TARGET static __mmask64 m64(int n) {
    return n >= 64 ? ~__mmask64(0) : n <= 0 ? __mmask64(0) : (__mmask64(1) << n) - 1;
  }
  NPUKIT_POOL_TARGET static __m512i iota_times(int64_t s) {
    return _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32(static_cast<int>(s)));
  }

  NPUKIT_POOL_TARGET static F zero() { return _mm512_setzero_ps(); }
  // Arbitrary lane masks (f32-pool2d-nchw-narrow.inc): bit i = lane i.
  using M = __mmask16;
  NPUKIT_POOL_TARGET static M lane_mask(uint32_t bits) { return static_cast<M>(bits); }
  // Masked-off lanes are +0 and their elements are never read.
  NPUKIT_POOL_TARGET static F load_m(M m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  NPUKIT_POOL_TARGET static F select(M m, F a, F b) { return _mm512_mask_mov_ps(b, m, a); }
  NPUKIT_POOL_TARGET static void store_m(M m, float* p, F v) { _mm512_mask_storeu_ps(p, m, v); }
  NPUKIT_POOL_TARGET static F set1(float v) { return _mm512_set1_ps(v); }
  // Loads n lanes at a lane stride of 1, 2 or ls elements; masked-off
  // elements are never read (2: up to the last lane's own element only).
  template <int LK>
  struct FLoad {
    __mmask16 a, b;
    __m512i idx;
    NPUKIT_POOL_TARGET FLoad(int64_t ls, int n) {
      if constexpr (LK == 2) {
        a = m16(2 * n - 1);
        b = m16(2 * n - 1 - 16);
        idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
      } else {
        a = m16(n);
        b = 0;
        idx = LK == 1 ? _mm512_setzero_si512() : iota_times(ls);
      }
    }
    NPUKIT_POOL_TARGET F operator()(const float* p) const {
      if constexpr (LK == 1) return _mm512_maskz_loadu_ps(a, p);
      if constexpr (LK == 2)
        return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(a, p), idx,
                                      _mm512_maskz_loadu_ps(b, p + 16));
      return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), a, idx, p, 4);
    }
  };
  // dst row i = column i of the 16 x 16 block whose row j is src + j*ss: four
  // butterfly stages, each swapping the off-diagonal s x s blocks of every
  // 2s x 2s block (rows i and i + s exchange their column halves).
  NPUKIT_POOL_TARGET static void swap(__m512& a, __m512& b, __m512i il, __m512i ih) {
    const __m512 x = a;
    a = _mm512_permutex2var_ps(x, il, b);
    b = _mm512_permutex2var_ps(x, ih, b);
  }
  NPUKIT_POOL_TARGET static void transpose(const float* src, int64_t ss, float* dst, int64_t ds) {
    __m512 r[16];
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) r[j] = _mm512_loadu_ps(src + j * ss);
    {  // s = 8
      const __m512i il = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
      const __m512i ih =
          _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
      swap(r[0], r[8], il, ih);
      swap(r[1], r[9], il, ih);
      swap(r[2], r[10], il, ih);
      swap(r[3], r[11], il, ih);
      swap(r[4], r[12], il, ih);
      swap(r[5], r[13], il, ih);
      swap(r[6], r[14], il, ih);
      swap(r[7], r[15], il, ih);
    }
    {  // s = 4
      const __m512i il =
          _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
      const __m512i ih =
          _mm512_setr_epi32(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
      swap(r[0], r[4], il, ih);
      swap(r[1], r[5], il, ih);
      swap(r[2], r[6], il, ih);
      swap(r[3], r[7], il, ih);
      swap(r[8], r[12], il, ih);
      swap(r[9], r[13], il, ih);
      swap(r[10], r[14], il, ih);
      swap(r[11], r[15], il, ih);
    }
    {  // s = 2
      const __m512i il =
          _mm512_setr_epi32(0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
      const __m512i ih =
          _mm512_setr_epi32(2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
      swap(r[0], r[2], il, ih);
      swap(r[1], r[3], il, ih);
      swap(r[4], r[6], il, ih);
      swap(r[5], r[7], il, ih);
      swap(r[8], r[10], il, ih);
      swap(r[9], r[11], il, ih);
      swap(r[12], r[14], il, ih);
      swap(r[13], r[15], il, ih);
    }
    {  // s = 1
      const __m512i il =
          _mm512_setr_epi32(0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30);
      const __m512i ih =
          _mm512_setr_epi32(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
      swap(r[0], r[1], il, ih);
      swap(r[2], r[3], il, ih);
      swap(r[4], r[5], il, ih);
      swap(r[6], r[7], il, ih);
      swap(r[8], r[9], il, ih);
      swap(r[10], r[11], il, ih);
      swap(r[12], r[13], il, ih);
      swap(r[14], r[15], il, ih);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) _mm512_storeu_ps(dst + i * ds, r[i]);
  }
  // Global pools (f32-pool2d-nchw-global.inc): 128-bit lane l = the n floats
  // at p + l*ls (masked-off elements +0, never read); 4x4 transposes per lane.
  // (maskz forms: see max below.)
  template <bool Full>
  NPUKIT_POOL_TARGET static F load_quads(const float* p, int64_t ls, int n) {
    const __mmask8 m = Full ? __mmask8(0xf) : __mmask8((1u << n) - 1);
    F v = _mm512_castps128_ps512(quad<Full>(m, p));
    v = _mm512_insertf32x4(v, quad<Full>(m, p + ls), 1);
    v = _mm512_insertf32x4(v, quad<Full>(m, p + 2 * ls), 2);
    return _mm512_insertf32x4(v, quad<Full>(m, p + 3 * ls), 3);
  }
  template <bool Full>
  NPUKIT_POOL_TARGET static __m128 quad(__mmask8 m, const float* p) {
    if constexpr (Full) return _mm_loadu_ps(p);
    return _mm_maskz_loadu_ps(m, p);
  }
  NPUKIT_POOL_TARGET static void transpose_quads(F& a, F& b, F& c, F& d) {
    const __m512d t0 = _mm512_castps_pd(_mm512_maskz_unpacklo_ps(0xffff, a, b));
    const __m512d t1 = _mm512_castps_pd(_mm512_maskz_unpackhi_ps(0xffff, a, b));
    const __m512d t2 = _mm512_castps_pd(_mm512_maskz_unpacklo_ps(0xffff, c, d));
    const __m512d t3 = _mm512_castps_pd(_mm512_maskz_unpackhi_ps(0xffff, c, d));
    a = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xff, t0, t2));
    b = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xff, t0, t2));
    c = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xff, t1, t3));
    d = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xff, t1, t3));
  }
  NPUKIT_POOL_TARGET static F loadu(const float* p) {
    return _mm512_loadu_ps(p);
  }
  NPUKIT_POOL_TARGET static F load_even(const float* p) {
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_loadu_ps(p + 16));
  }
  NPUKIT_POOL_TARGET static F load_odd(const float* p) {  // p[1], p[3], ..., p[2V-1]
    const __m512i odd =
        _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    return _mm512_permutex2var_ps(_mm512_loadu_ps(p), odd, _mm512_loadu_ps(p + 16));
  }
  // Lanes 0, 2, .., 2V-2 / 1, 3, .., 2V-1 of the 2V lanes a then b (stride-2 taps).
  NPUKIT_POOL_TARGET static F even(F a, F b) {
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
  }
  NPUKIT_POOL_TARGET static F odd(F a, F b) {
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b);
  }
  NPUKIT_POOL_TARGET static void store(float* p, int64_t ys, F v, int n) {
    if (ys == 1) {
      _mm512_mask_storeu_ps(p, m16(n), v);  // masked-off lanes are not written
    } else {
      _mm512_mask_i32scatter_ps(p, m16(n), iota_times(ys), v, 4);
    }
  }
  // a + b with a as VADDPS's first source, which decides the result when both
  // are NaN (the reference's x86_add). Inline asm: GCC treats _mm512_add_ps as
  // commutative and may swap the operands.
  NPUKIT_POOL_TARGET static F add(F a, F b) {
    F r;
    asm("vaddps %2, %1, %0" : "=v"(r) : "v"(a), "v"(b));
    return r;
  }
  // The scalar a + b under the same rule (a compiler may swap `+`'s operands too).
  NPUKIT_POOL_TARGET static float add1(float a, float b) {
    float r;
    asm("vaddss %2, %1, %0" : "=v"(r) : "v"(a), "v"(b));
    return r;
  }
  // Lane i of v moved to lane i + N (shift_up) or i - N (shift_down), fill's
  // lanes where nothing moves in: one VALIGND. (The maskz form: see max.)
  template <int N>
  NPUKIT_POOL_TARGET static F shift_up(F v, F fill) {
    const __m512i r = _mm512_maskz_alignr_epi32(0xffff, _mm512_castps_si512(v),
                                                _mm512_castps_si512(fill), 16 - N);
    return _mm512_castsi512_ps(r);
  }
  template <int N>
  NPUKIT_POOL_TARGET static F shift_down(F v, F fill) {
    const __m512i r =
        _mm512_maskz_alignr_epi32(0xffff, _mm512_castps_si512(fill), _mm512_castps_si512(v), N);
    return _mm512_castsi512_ps(r);
  }
  // a * b with a as VMULPS's first source (x86_mul; sum pooling's coeff may be NaN).
  NPUKIT_POOL_TARGET static F mul(F a, F b) {
    F r;
    asm("vmulps %2, %1, %0" : "=v"(r) : "v"(a), "v"(b));
    return r;
  }
  NPUKIT_POOL_TARGET static F div(F a, F b) {
    return _mm512_div_ps(a, b);
  }
  // MAXPS returns its second operand unless the first is greater: a > b ? a : b.
  // (The maskz forms sidestep GCC 12's -Wmaybe-uninitialized on _mm512_undefined_*.)
  NPUKIT_POOL_TARGET static F max(F a, F b) {
    return _mm512_maskz_max_ps(0xffff, a, b);
  }
  NPUKIT_POOL_TARGET static F nan_to(F m, F v) {
    return _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
  }
  NPUKIT_POOL_TARGET static uint32_t nan_lanes(F v) {  // bit i: lane i is NaN
    return _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  }
  NPUKIT_POOL_TARGET static F flush(F v) {
    const __m512i bits = _mm512_castps_si512(v);
    const __mmask16 normal = _mm512_test_epi32_mask(bits, _mm512_set1_epi32(0x7f800000));
    const __m512i sign = _mm512_and_si512(bits, _mm512_set1_epi32(INT32_MIN));
    return _mm512_castsi512_ps(_mm512_mask_mov_epi32(sign, normal, bits));
  }
  NPUKIT_POOL_TARGET static bool any_abs_eq(F v, float c) {
    return _mm512_cmp_ps_mask(_mm512_abs_ps(v), _mm512_set1_ps(c), _CMP_EQ_OQ) != 0;
  }
  NPUKIT_POOL_TARGET static void to(float* a, F v) {
    _mm512_storeu_ps(a, v);
  }
  NPUKIT_POOL_TARGET static F from(const float* a) {
    return _mm512_loadu_ps(a);
  }

  NPUKIT_POOL_TARGET static B set1_8(uint8_t v) {
    return _mm512_set1_epi8(static_cast<char>(v));
  }
  // Byte lanes at a lane stride of 1 or 2 under masks; any other stride
  // collects the lanes one by one.
  template <int LK>
  struct BLoad {
    __mmask64 a, b;
    int64_t ls;
    int n;
    NPUKIT_POOL_TARGET BLoad(int64_t ls_, int n_) : ls(ls_), n(n_) {
      a = m64(LK == 2 ? 2 * n - 1 : n);
      b = m64(2 * n - 1 - 64);
    }
    NPUKIT_POOL_TARGET B operator()(const uint8_t* p) const {
      if constexpr (LK == 1) return _mm512_maskz_loadu_epi8(a, p);
      if constexpr (LK == 2) {
        const __m512i lo = _mm512_set1_epi16(0x00ff);
        const B x = _mm512_and_si512(_mm512_maskz_loadu_epi8(a, p), lo);
        const B y = _mm512_and_si512(_mm512_maskz_loadu_epi8(b, p + 64), lo);
        // packus interleaves x and y per 128-bit lane; put the quadwords back in order.
        return _mm512_maskz_permutexvar_epi64(0xff, _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7),
                                              _mm512_packus_epi16(x, y));
      }
      alignas(64) uint8_t tmp[VB] = {};
      for (int i = 0; i < n; ++i) tmp[i] = p[i * ls];
      return _mm512_load_si512(tmp);
    }
  };
  NPUKIT_POOL_TARGET static void store8(uint8_t* p, int64_t ys, B v, int n) {
    if (ys == 1 && n == VB) {
      _mm512_storeu_si512(p, v);
    } else {
      alignas(64) uint8_t tmp[VB];
      _mm512_store_si512(tmp, v);
      for (int i = 0; i < n; ++i) p[i * ys] = tmp[i];
    }
  }
  template <class T>
  NPUKIT_POOL_TARGET static B max8(B a, B b) {
    if constexpr (T(-1) < T(0))
      return _mm512_max_epi8(a, b);
    else
      return _mm512_max_epu8(a, b);
  }
};

}  // namespace
}  // namespace npukit::cpu::avx512

#include "pool2d_core.inc"

namespace npukit::cpu {

void pool2d_f32_avx512(const Pool2dProblem& pr) {
  avx512::f32_pool2d<avx512::Simd>(pr);
}
const char* f32_sweep_declines_avx512(const Pool2dProblem& pr) {
  return avx512::f32_sweep_declines<avx512::Simd>(pr);
}
void max_pool2d_x8_avx512(const Pool2dProblem& pr) {
  avx512::x8_max_pool2d<avx512::Simd>(pr);
}

}  // namespace npukit::cpu
