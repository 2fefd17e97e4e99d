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
  static F set1(float v) { return _mm512_set1_ps(v); }
  static F max(F a, F b) { return _mm512_max_ps(a, b); }
  static constexpr int kNanChains = 4;
  static F nan_acc(F acc, F v) { return _mm512_fmadd_ps(v, _mm512_setzero_ps(), acc); }
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
namespace {

// Max of 16 gap-free planes of HW floats (33 <= HW: every plane spans three
// or more of the pass's HW rows of 16 floats), leaf q = plane q of the merge
// tree (gf_tree), every row loaded once, every mask a compile-time constant.
// Plane q covers lanes sh.. of its first row a (the lanes below belong to
// plane q - 1), rows a+1 .. z-1 whole and lanes ..st of its last row z. Its
// first row is blended with row a+1 below sh (the mask of plane q - 1's
// tail: one mask register per boundary) and its last row maxed under a mask:
// 3 maxes and about 1 mask move per 7x7 plane, where gf_packed_pass<4> takes
// 4 maxes, 2 mask moves and per-slot offsets from memory. On this Zen 5 the
// mask moves (kmovw) issue on the two pipes that run vmaxps. NaN: one FMA per
// pair of rows (a * b + acc is NaN if a or b is; +-inf * 0 and inf - inf
// only send a pass to the scalar loop), half of gf_packed_pass's FMAs.
// Kernel alone (min of 1000 x 20 calls, same process, load 19): 1x2048x7x7
// 2.31 vs 2.91 µs, 2048 planes of 36 / 100 / 196 floats: 3.0 / 2.1 / 2.1 vs
// 5.6 / 2.5 / 4.0 µs.
template <int HW>
inline __m512 gf_fixed_pass(const float* x, bool& nan) {
  static_assert(HW >= 33 && HW <= 256, "three or more rows per plane, unrolled below");
  const __m512 zero = _mm512_setzero_ps();
  __m512 acc[4] = {zero, zero, zero, zero};
  __m512 pending = zero, carry = zero;  // a row waiting for its NaN pair; the last row loaded
  int carry_row = -1;
  const auto row = [&](int j) {
    if (j == carry_row) return carry;
    const __m512 v = _mm512_loadu_ps(x + 16 * j);
    if (j % 2 == 1)
      acc[j / 2 % 4] = _mm512_fmadd_ps(pending, v, acc[j / 2 % 4]);
    else if (j == HW - 1)
      acc[j / 2 % 4] = _mm512_fmadd_ps(v, v, acc[j / 2 % 4]);
    else
      pending = v;
    carry = v;
    carry_row = j;
    return v;
  };
  __m512 r[16];
#pragma GCC unroll 16
  for (int q = 0; q < 16; ++q) {
    const int f = q * HW, l = f + HW - 1, a = f / 16, z = l / 16, sh = f % 16, st = l % 16;
    const __m512 first = row(a), next = row(a + 1);
    __m512 m = next;
#pragma GCC unroll 16
    for (int j = a + 2; j < z; ++j) m = _mm512_max_ps(m, row(j));
    const auto below = [](int n) { return static_cast<__mmask16>((1u << n) - 1); };
    m = _mm512_max_ps(m, sh == 0 ? first : _mm512_mask_blend_ps(below(sh), first, next));
    const __m512 last = row(z);
    r[q] = st == 15 ? _mm512_max_ps(m, last) : _mm512_mask_max_ps(m, below(st + 1), m, last);
  }
  nan = (_mm512_cmp_ps_mask(acc[0], acc[1], _CMP_UNORD_Q) |
         _mm512_cmp_ps_mask(acc[2], acc[3], _CMP_UNORD_Q)) != 0;
  gf_tree(r);
  return r[0];
}

// Whole passes of gf_fixed_pass<HW> (as gf_planes: start clamp, redo bits);
// returns the planes done, a multiple of 16.
template <int HW>
int64_t gf_fixed_planes(const F32GlobalPlanes& b, const F32GlobalMaxRule& r, float* out,
                        uint32_t* redo) {
  static const GfOrder order;
  // The tree leaves leaf s in lane order.plane_of_slot[s]; leaf s is plane s here.
  const __m512i to_plane = _mm512_loadu_si512(order.plane_of_slot);
  const __m512 start = _mm512_set1_ps(r.start);
  int64_t k0 = 0;
  for (; k0 + 16 <= b.count; k0 += 16) {
    bool nan;
    const __m512 tree = gf_fixed_pass<HW>(b.x + k0 * HW, nan);
    const __m512 m = _mm512_max_ps(_mm512_permutexvar_ps(to_plane, tree), start);
    const uint32_t bits = nan ? 0xFFFFu : GfVec::order_bits(m, r.flush);
    redo[k0 / 32] |= bits << (k0 % 32);
    _mm512_storeu_ps(out + k0, m);
  }
  return k0;
}

// Planes of b done by gf_fixed_planes (0 when their size has none).
int64_t gf_fixed_sizes(const F32GlobalPlanes& b, const F32GlobalMaxRule& r, float* out,
                       uint32_t* redo) {
  if (b.cs != b.hw) return 0;
  switch (b.hw) {
    case 36:
      return gf_fixed_planes<36>(b, r, out, redo);
    case 49:
      return gf_fixed_planes<49>(b, r, out, redo);
    case 64:
      return gf_fixed_planes<64>(b, r, out, redo);
    case 81:
      return gf_fixed_planes<81>(b, r, out, redo);
    case 100:
      return gf_fixed_planes<100>(b, r, out, redo);
    case 121:
      return gf_fixed_planes<121>(b, r, out, redo);
    case 144:
      return gf_fixed_planes<144>(b, r, out, redo);
    case 169:
      return gf_fixed_planes<169>(b, r, out, redo);
    case 196:
      return gf_fixed_planes<196>(b, r, out, redo);
    case 225:
      return gf_fixed_planes<225>(b, r, out, redo);
    default:
      return 0;
  }
}

}  // namespace

void f32_global_max_avx512(const F32GlobalPlanes& b, const F32GlobalMaxRule& r, float* out,
                           uint32_t* redo) {
  const int64_t done = gf_fixed_sizes(b, r, out, redo);
  if (done == 0) return gf_planes(b, r, out, redo);
  if (done == b.count) return;
  F32GlobalPlanes rest = b;  // the last planes, fewer than 16
  rest.x += done * b.cs;
  rest.count -= done;
  uint32_t rest_redo[kF32GlobalChunk / 32] = {};
  gf_planes(rest, r, out + done, rest_redo);
  for (int64_t k = 0; k < rest.count; ++k)
    redo[(done + k) / 32] |= (rest_redo[k / 32] >> (k % 32) & 1u) << ((done + k) % 32);
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
