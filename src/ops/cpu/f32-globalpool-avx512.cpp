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
  // Leaves merged at the end, the vmaxps pass inlined: 1x2048x7x7 kernel
  // alone from L2 2.87-3.04 -> 2.68-2.84 µs against post-order merges and an
  // out-of-line pass (p25, variants alternated in one process, session 16;
  // session 14's kernel 2.71-2.80), L1-resident 226 -> 217 ns per 256 planes.
  static constexpr bool kTreeInPostOrder = false;
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
// k-1) in which plane q's element sits in lane (HW*q + e) % 16; the last
// blend and the move of plane q to lane q are one two-source permute
// (SumLanes). Per element vector 3 blends, the permute and the add, no 16x16
// transpose. Same-process minima against the AVX2 kernel's 4x4 transposes
// (session 13, load average 7-18, with a blend and a rotation where the
// permute is now): 2048 planes of 9 / 25 / 49 0.70 / 1.85 / 3.3 µs vs 1.18 /
// 2.47 / 4.2; 512 of 81 / 121 / 169 1.31 / 2.11 / 2.84 vs 1.69 / 2.55 / 3.59.
// The group's ~245 vector ops on this Zen 5's 4 vector pipes, not its chain of
// HW dependent adds, set its time (a group of 7x7 planes ~85 cycles, of which
// the chain ~4: summed by four chains instead, not exact, ~81).
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

// The last stage's blend (lane l from t2[i] for even l, t2[i - 1] for odd l)
// and the rotation that leaves plane q in lane q, as one two-source permute
// per element (vpermt2ps): lane p of element e's vector takes lane
// l = (HW*p + e) % 16, of the second source when l is odd. Plane p sits in
// lane HW*p % 16 of the rotated vector, so the sizes with HW % 16 != 1 need no
// closing permute either. A blend and a valignd per element before (6 ops of
// the 4 vector pipes per element, 5 now).
template <int HW>
struct SumLanes {
  alignas(64) int idx[16][16];
  constexpr SumLanes() : idx() {
    for (int e = 0; e < 16; ++e)
      for (int p = 0; p < 16; ++p) {
        const int l = (HW * p + e) % 16;
        idx[e][p] = l | (l & 1) << 4;
      }
  }
};
template <int HW>
constexpr SumLanes<HW> kSumLanes{};

// Sums of the 16 planes at g (16 * HW floats), plane q in lane q. Step i
// handles k = i - 15: the shift-8 stage from k = -7 on, shift 4 from -3,
// shift 2 from -1, and from k = 0 the last shift, the rotation and the add of
// element k (the earlier k are the wrap-around of the first elements' lanes).
// Inlined into the loop over the groups (a call per group: 2.97 against 2.81
// µs, its stack set-up and spills each time).
template <int HW>
__attribute__((always_inline)) inline __m512 odd_plane_sums(const float* g) {
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
    if (k >= 0) {
      const __m512i lanes = _mm512_load_si512(kSumLanes<HW>.idx[k & 15]);
      acc = ga512_add(acc, _mm512_permutex2var_ps(t2[i], lanes, t2[i - 1]));
    }
  }
  return acc;
}

// Whole groups of 16 planes by odd_plane_sums<HW>, the rest by the AVX2 kernel.
template <int HW>
void odd_planes(const F32GlobalPlanes& b, const F32GlobalAvgRule& r, float* out, int64_t os) {
  const int64_t whole = b.count / 16 * 16;
  for (int64_t k0 = 0; k0 < whole; k0 += kF32GlobalChunk) {
    // The sums first, their last step after: with the divisor and the
    // coefficient live across the groups, GCC spilled stage vectors (kernel
    // alone, 1x2048x7x7 from L2: 2.97 against 2.81 µs).
    const int64_t n = std::min(kF32GlobalChunk, whole - k0);
    alignas(64) float sums[kF32GlobalChunk];
    for (int64_t g = 0; g < n; g += 16)
      _mm512_store_ps(sums + g, odd_plane_sums<HW>(b.x + (k0 + g) * HW));
    const __m512 div = _mm512_set1_ps(static_cast<float>(HW)), coeff = _mm512_set1_ps(r.coeff);
    for (int64_t g = 0; g < n; g += 16) {
      const __m512 s = _mm512_load_ps(sums + g);
      const __m512 v = r.sum ? ga512_mul(s, coeff) : _mm512_div_ps(s, div);
      if (os == 1) {
        _mm512_storeu_ps(out + k0 + g, v);
      } else {
        alignas(64) float lanes[16];
        _mm512_store_ps(lanes, v);
        for (int q = 0; q < 16; ++q) out[(k0 + g + q) * os] = lanes[q];
      }
    }
  }
  if (whole == b.count) return;
  F32GlobalPlanes rest = b;
  rest.x += whole * b.cs;
  rest.count -= whole;
  f32_global_avg_avx2(rest, r, out + whole * os, os);
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
