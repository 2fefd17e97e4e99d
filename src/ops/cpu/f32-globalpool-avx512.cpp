// AVX-512 f32 global pools over NCHW planes (f32-globalpool.hpp): max through
// the lane shim of f32-globalmax-nchw-body.inc (16 planes per pass), and the
// averages and sums of gap-free planes of odd square sizes in the reference's
// order (below).
#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <limits>

#include "f32-globalpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {
namespace {

struct GfVec {
  using F = __m512;
  static constexpr int64_t kLanes = 16;
  static constexpr int kDepth = 4;
  // vmaxps passes only: with the integer max first (as AVX2) 1x2048x7x7 took
  // 3.0-3.4 µs against 2.7-2.8 (race binaries alternated, session 15, lead;
  // both CPU placements).
  static constexpr bool kBitsMaxFirst = false;
  static F loadu(const float* p) { return _mm512_loadu_ps(p); }
  static F load_first(const float* p, int64_t n) {
    const __mmask16 m = static_cast<__mmask16>((1u << n) - 1);
    return _mm512_mask_loadu_ps(_mm512_set1_ps(-std::numeric_limits<float>::infinity()), m, p);
  }
  using Mask = __mmask16;
  static Mask make_mask(uint32_t bits) { return static_cast<__mmask16>(bits); }
  static F load_masked(const float* p, Mask m) {
    return _mm512_mask_loadu_ps(_mm512_set1_ps(-std::numeric_limits<float>::infinity()), m, p);
  }
  static F max_masked(F a, F b, Mask m) { return _mm512_mask_max_ps(a, m, a, b); }
  static F blend(Mask m, F a, F b) { return _mm512_mask_blend_ps(m, a, b); }
  using Index = __m512i;
  static Index lane_index(const int* p) { return _mm512_loadu_si512(p); }
  static F permute(F v, Index i) { return _mm512_permutexvar_ps(i, v); }
  static F set1(float v) { return _mm512_set1_ps(v); }
  static F max(F a, F b) { return _mm512_max_ps(a, b); }
  static F imax(F a, F b) {
    return _mm512_castsi512_ps(_mm512_max_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  }
  static F imax_masked(F a, F b, Mask m) {
    const __m512i ai = _mm512_castps_si512(a);
    return _mm512_castsi512_ps(_mm512_mask_max_epi32(ai, m, ai, _mm512_castps_si512(b)));
  }
  static uint32_t positive_bits(F v) {
    return _mm512_cmpgt_epi32_mask(_mm512_castps_si512(v), _mm512_setzero_si512());
  }
  static constexpr int kNanChains = 4;
  static F nan_acc(F acc, F v) { return _mm512_fmadd_ps(v, _mm512_setzero_ps(), acc); }
  static F nan_pair(F acc, F a, F b) { return _mm512_fmadd_ps(a, b, acc); }
  static uint32_t nan_bits(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }
  template <int Level>
  static void merge_parts(F a, F b, F& lo, F& hi) {
    if constexpr (Level == 0) {  // 256-bit halves
      lo = _mm512_shuffle_f32x4(a, b, 0x44);
      hi = _mm512_shuffle_f32x4(a, b, 0xee);
    } else if constexpr (Level == 1) {  // 128-bit blocks
      lo = _mm512_shuffle_f32x4(a, b, 0x88);
      hi = _mm512_shuffle_f32x4(a, b, 0xdd);
    } else if constexpr (Level == 2) {  // 64-bit halves of each block
      lo = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
      hi = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
    } else {  // even / odd floats
      lo = _mm512_shuffle_ps(a, b, 0x88);
      hi = _mm512_shuffle_ps(a, b, 0xdd);
    }
  }
  static uint32_t order_bits(F v, bool flush) {
    if (flush) return _mm512_cmp_ps_mask(_mm512_abs_ps(v), _mm512_set1_ps(FLT_MIN), _CMP_LT_OQ);
    return _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_EQ_OQ);
  }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
};

// Averages and sums of gap-free planes of an odd size HW (the odd squares
// 3x3 .. 15x15), each plane summed from +0 in element order as the reference
// does, 16 planes at a time.
//
// The 16 planes are HW rows of 16 floats. Plane q's element e is at
// HW*q + e = 16*row + lane: lanes (HW*q + e) % 16 differ for the 16 planes (HW
// odd) and all move up by one from e to e + 1, and row = u*(e - lane) mod HW
// with u = 1/16 mod HW. So with S_k = row u*k mod HW, the vector of every
// plane's element e is, in lane l, lane l of S_(e - l) mod HW: a per-lane
// barrel shift of the S sequence (blends of S_k with S_(k-8), then k-4, k-2,
// k-1), rotated down by e % 16 lanes, after which plane q sits in lane
// (HW*q) % 16 at every e (lane q when HW % 16 == 1; else one permute at the
// end). Per element vector 4 blends, 1 rotation and the add, no 16x16
// transpose. Same-process minima against the AVX2 kernel's 4x4 transposes
// (load average 7-18): 2048 planes of 9 / 25 / 49 0.70 / 1.85 / 3.3 µs vs
// 1.18 / 2.47 / 4.2; 512 of 81 / 121 / 169 1.31 / 2.11 / 2.84 vs 1.69 / 2.55
// / 3.59. L1-resident, the HW dependent adds of a group (2 cycles each) set
// its time.
constexpr int inverse_of_16(int hw) {
  for (int u = 1; u < hw; ++u)
    if (16 * u % hw == 1) return u;
  return 0;  // hw == 1: every row is row 0
}
template <int HW>
constexpr int s_row(int k) {
  constexpr int u = inverse_of_16(HW);
  return ((u * k) % HW + HW) % HW;
}

// a + b and a * b with a as the first source (its NaN wins; the compiler
// may swap the operands of the intrinsics).
inline __m512 ga512_add(__m512 a, __m512 b) {
  __m512 r;
  asm("vaddps %2, %1, %0" : "=v"(r) : "v"(a), "v"(b));
  return r;
}
inline __m512 ga512_mul(__m512 a, __m512 b) {
  __m512 r;
  asm("vmulps %2, %1, %0" : "=v"(r) : "v"(a), "v"(b));
  return r;
}

// Lane i := lane (i + N) % 16.
template <int N>
inline __m512 rotate_lanes(__m512 v) {
  const __m512i a = _mm512_castps_si512(v);
  return _mm512_castsi512_ps(_mm512_mask_alignr_epi32(a, 0xFFFF, a, a, N));
}
// The same for r in 0..15 (a constant once the caller's loop is unrolled).
inline __m512 rotate_lanes(__m512 v, int r) {
  switch (r) {
    case 1:
      return rotate_lanes<1>(v);
    case 2:
      return rotate_lanes<2>(v);
    case 3:
      return rotate_lanes<3>(v);
    case 4:
      return rotate_lanes<4>(v);
    case 5:
      return rotate_lanes<5>(v);
    case 6:
      return rotate_lanes<6>(v);
    case 7:
      return rotate_lanes<7>(v);
    case 8:
      return rotate_lanes<8>(v);
    case 9:
      return rotate_lanes<9>(v);
    case 10:
      return rotate_lanes<10>(v);
    case 11:
      return rotate_lanes<11>(v);
    case 12:
      return rotate_lanes<12>(v);
    case 13:
      return rotate_lanes<13>(v);
    case 14:
      return rotate_lanes<14>(v);
    case 15:
      return rotate_lanes<15>(v);
    default:
      return v;
  }
}

// Sums of the 16 planes at g (16 * HW floats), plane q in lane q. Step i
// handles k = i - 15: the shift-8 stage from k = -7 on, shift 4 from -3,
// shift 2 from -1, and from k = 0 the last shift and the add of element k
// (the earlier k are the wrap-around of the first elements' lanes).
template <int HW>
__m512 odd_plane_sums(const float* g) {
  static_assert(HW % 2 == 1 && HW + 15 <= 256, "odd sizes, unrolled below");
  __m512 t8[HW + 15], t4[HW + 15], t2[HW + 15];
  __m512 acc = _mm512_setzero_ps();
#pragma GCC unroll 256
  for (int i = 0; i < HW + 15; ++i) {
    const int k = i - 15;
    if (k >= -7)
      t8[i] = _mm512_mask_blend_ps(0xFF00, _mm512_loadu_ps(g + 16 * s_row<HW>(k)),
                                   _mm512_loadu_ps(g + 16 * s_row<HW>(k - 8)));
    if (k >= -3) t4[i] = _mm512_mask_blend_ps(0xF0F0, t8[i], t8[i - 4]);
    if (k >= -1) t2[i] = _mm512_mask_blend_ps(0xCCCC, t4[i], t4[i - 2]);
    if (k >= 0)
      acc = ga512_add(acc, rotate_lanes(_mm512_mask_blend_ps(0xAAAA, t2[i], t2[i - 1]), k & 15));
  }
  if constexpr (HW % 16 == 1) return acc;
  const __m512i lane_of_plane =
      _mm512_setr_epi32(0, HW % 16, 2 * HW % 16, 3 * HW % 16, 4 * HW % 16, 5 * HW % 16, 6 * HW % 16,
                        7 * HW % 16, 8 * HW % 16, 9 * HW % 16, 10 * HW % 16, 11 * HW % 16,
                        12 * HW % 16, 13 * HW % 16, 14 * HW % 16, 15 * HW % 16);
  return _mm512_mask_permutexvar_ps(acc, 0xFFFF, lane_of_plane, acc);
}

// Whole groups of 16 planes by odd_plane_sums<HW>, the rest by the AVX2 kernel.
template <int HW>
void odd_planes(const F32GlobalPlanes& b, const F32GlobalAvgRule& r, float* out, int64_t os) {
  const __m512 div = _mm512_set1_ps(static_cast<float>(HW)), coeff = _mm512_set1_ps(r.coeff);
  int64_t k0 = 0;
  for (; k0 + 16 <= b.count; k0 += 16) {
    const __m512 s = odd_plane_sums<HW>(b.x + k0 * HW);
    const __m512 v = r.sum ? ga512_mul(s, coeff) : _mm512_div_ps(s, div);
    if (os == 1) {
      _mm512_storeu_ps(out + k0, v);
    } else {
      alignas(64) float lanes[16];
      _mm512_store_ps(lanes, v);
      for (int q = 0; q < 16; ++q) out[(k0 + q) * os] = lanes[q];
    }
  }
  if (k0 == b.count) return;
  F32GlobalPlanes rest = b;
  rest.x += k0 * b.cs;
  rest.count -= k0;
  f32_global_avg_avx2(rest, r, out + k0 * os, os);
}

}  // namespace
}  // namespace npukit::cpu

#include "ops/cpu/f32-globalmax-nchw-body.inc"

namespace npukit::cpu {

void f32_global_max_avx512(const F32GlobalPlanes& b, const F32GlobalMaxRule& r, float* out,
                           uint32_t* redo) {
  gf_planes(b, r, out, redo);
}

void f32_global_avg_odd_avx512(const F32GlobalPlanes& b, const F32GlobalAvgRule& r, float* out,
                               int64_t os) {
  switch (b.hw) {
    case 9:
      return odd_planes<9>(b, r, out, os);
    case 25:
      return odd_planes<25>(b, r, out, os);
    case 49:
      return odd_planes<49>(b, r, out, os);
    case 81:
      return odd_planes<81>(b, r, out, os);
    case 121:
      return odd_planes<121>(b, r, out, os);
    case 169:
      return odd_planes<169>(b, r, out, os);
    case 225:
      return odd_planes<225>(b, r, out, os);
    default:
      return f32_global_avg_avx2(b, r, out, os);  // not reached: declined
  }
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
