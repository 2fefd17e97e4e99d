// AVX-512 s8/u8 global pool kernels (x8-globalpool.hpp). NCHW: eight planes
// at a time, each reduced to one register (max, or vpsadbw sums in 64-bit
// lanes), then a transpose tree leaves plane k in 64-bit lane k. NHWC: 64
// channels per register, 16-bit sums flushed to 32 bits every 256 positions.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "x8-globalpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {

namespace {

// Plane K of a run of N-code planes, N apart, from x (64-byte aligned): the
// aligned vector(s) holding it, shifted by whole dwords (valignd, an
// immediate) so that the plane sits in lanes s..s+N-1, s = N*K mod 4; the
// other lanes hold neighbouring codes (the callers mask them with
// aligned_keep_lanes(N, s)). Every load is aligned and stays inside the run's
// N*64 bytes (64-byte loads at N*K split a cache line in 63 of 64 planes).
template <int N, int K>
inline __m512i aligned_window(const uint8_t* x) {
  constexpr int at = N * K, j = at / 64, o = at % 64, d = o / 4;
  static_assert(N > 32 && N <= 61, "a plane and its dword shift fit one vector");
  const __m512i a = _mm512_load_si512(x + 64 * j);
  if constexpr (o + N > 64)
    return _mm512_alignr_epi32(_mm512_load_si512(x + 64 * j + 64), a, d);
  else if constexpr (d > 0)
    return _mm512_alignr_epi32(a, a, d);
  return a;
}

// 0xff in lanes s..s+n-1.
inline __m512i aligned_keep_lanes(int n, int s) {
  return _mm512_maskz_mov_epi8(((uint64_t{1} << n) - 1) << s, _mm512_set1_epi8(-1));
}

// Lane shim of x8-globalmax-nchw.inc: 64 planes per pass, 32-byte halves.
#if !defined(__clang__)
// The tree run once on constant plane numbers (GmaxOrder) lets GCC 12 see the
// undefined source operand inside its unmasked AVX-512 intrinsics: a false
// positive, as the begin.inc says for -Wmaybe-uninitialized (popped at isa-end).
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
struct GmaxVec {
  using V = __m512i;
  static constexpr int64_t kLanes = 64;
  static constexpr int kFirstLevel = 0;
  using Half = __m256i;
  static Half load_half(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  template <class T>
  static Half max_half(Half a, Half b) {
    return std::is_signed_v<T> ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b);
  }
  static V join(Half a, Half b) { return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1); }
  template <class T>
  static V max(V a, V b) {
    return std::is_signed_v<T> ? _mm512_max_epi8(a, b) : _mm512_max_epu8(a, b);
  }
  template <class T>
  static V mask_max(V src, __mmask64 k, V a, V b) {
    return std::is_signed_v<T> ? _mm512_mask_max_epi8(src, k, a, b)
                               : _mm512_mask_max_epu8(src, k, a, b);
  }
  static void store(uint8_t* p, V v) { _mm512_storeu_si512(p, v); }
  // One merge: the first half of each run keeps a's plane, the second half
  // b's. w holds, at each lane, the other half of the same plane's run (one
  // shuffle, or a shift at the 16- and 8-bit levels); max(a, w) is right in
  // the first halves, max(b, w) in the second. Level -1: a and b are one
  // plane each (64-byte runs).
  template <int Level, class T>
  static V merge(V a, V b) {
    V w;
    __mmask64 second;
    if constexpr (Level == -1) {  // 64-byte runs, 256-bit halves
      w = _mm512_shuffle_i64x2(a, b, 0x4e);
      second = 0xffffffff00000000ull;
    } else if constexpr (Level == 0) {  // 32-byte runs, 128-bit halves
      w = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(2, 3, 8, 9, 6, 7, 12, 13), b);
      second = 0xffff0000ffff0000ull;
    } else if constexpr (Level == 1) {  // 16-byte runs, 64-bit halves
      w = _mm512_castpd_si512(
          _mm512_shuffle_pd(_mm512_castsi512_pd(a), _mm512_castsi512_pd(b), 0x55));
      second = 0xff00ff00ff00ff00ull;
    } else if constexpr (Level == 2) {  // 8-byte runs, 32-bit halves
      const V idx = _mm512_setr_epi32(1, 16, 3, 18, 5, 20, 7, 22, 9, 24, 11, 26, 13, 28, 15, 30);
      w = _mm512_permutex2var_epi32(a, idx, b);
      second = 0xf0f0f0f0f0f0f0f0ull;
    } else if constexpr (Level == 3) {  // 4-byte runs, 16-bit halves
      const V t = max<T>(a, _mm512_srli_epi32(a, 16));
      return mask_max<T>(t, 0xccccccccccccccccull, b, _mm512_slli_epi32(b, 16));
    } else {  // 2-byte runs, bytes
      const V t = max<T>(a, _mm512_srli_epi16(a, 8));
      return mask_max<T>(t, 0xaaaaaaaaaaaaaaaaull, b, _mm512_slli_epi16(b, 8));
    }
    return mask_max<T>(max<T>(a, w), second, b, w);
  }
  static void store_part(uint8_t* p, V v, int64_t n) {
    _mm512_mask_storeu_epi8(p, n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1, v);
  }
  // 64 planes of N codes, N apart, by a tree whose first four levels stay
  // inside 128-bit lanes (gmax_unpack_tree); Aligned: x is 64-byte aligned.
  static constexpr bool kUnpackTree = true;
  template <class T, int N, bool Aligned>
  static V pass_unpack(const uint8_t* x);
};

// The leaf slot of each plane for the unpack tree below, so that output
// byte k is plane k: 128-bit lane q of the result holds the four-level
// subtree {0, 2, 1, 3}[q] (merge<-1> then merge<0>), whose byte b is leaf
// 16 * subtree + (b with its four bits reversed).
struct GmaxUnpackOrder {
  uint8_t plane_of_leaf[64] = {};
  constexpr GmaxUnpackOrder() {
    constexpr int subtree[4] = {0, 2, 1, 3};
    for (int k = 0; k < 64; ++k) {
      const int b = k % 16;
      const int rev = (b & 1) << 3 | (b & 2) << 1 | (b & 4) >> 1 | (b & 8) >> 3;
      plane_of_leaf[16 * subtree[k / 16] + rev] = static_cast<uint8_t>(k);
    }
  }
};
inline constexpr GmaxUnpackOrder kGmaxUnpackOrder{};

// The masks of the unpack tree's leaves for planes of N codes.
struct GmaxUnpackMasks {
  __mmask64 plane;  // lanes 0..N-1: a plane loaded at its first code
  __mmask64 lo[4];  // the first merge's unpacklo lanes that come from lanes s..s+N-1
  __mmask64 hi[4];  // the same for unpackhi
};

// Where unpacklo (half 0) or unpackhi (half 1) puts the lanes of `k`: byte
// 2i+s of each 128-bit lane is byte 8*half+i of operand s.
constexpr uint64_t unpack_lanes(uint64_t k, int half) {
  uint64_t r = 0;
  for (int l = 0; l < 4; ++l)
    for (int i = 0; i < 8; ++i)
      r |= (k >> (16 * l + 8 * half + i) & 1) * (uint64_t{3} << (16 * l + 2 * i));
  return r;
}

template <int N>
constexpr GmaxUnpackMasks gmax_unpack_masks() {
  GmaxUnpackMasks m{};
  m.plane = (uint64_t{1} << N) - 1;
  for (int s = 0; s < 4; ++s) {
    m.lo[s] = unpack_lanes(m.plane << s, 0);
    m.hi[s] = unpack_lanes(m.plane << s, 1);
  }
  return m;
}

// Leaves First.. of 2^Depth leaves: plane plane_of_leaf[leaf], its N codes
// and the neutral code elsewhere. A merge interleaves bytes 0-7 of each
// 128-bit lane of a and b (unpacklo) and bytes 8-15 (unpackhi) and takes the
// max as T: byte 2i+s = max(bytes i and i+8 of operand s), so every byte
// keeps one plane. Aligned: each plane from the aligned vectors holding it
// (aligned_window: no line splits, the plane in lanes s..s+N-1), and the
// first merge's unpacks masked so that the other lanes take the neutral code
// (the two planes of a leaf pair are 8 apart: the same s); else one
// zero-masked load per plane. Unpacks, byte maxes and blends run four per
// cycle on Zen 5, the window tree's cross-lane merges two (and its
// ternary-logic masking shares their pipes).
template <class T, int N, bool Aligned, int Depth, int First>
inline __m512i gmax_unpack_tree(const uint8_t* x, const GmaxUnpackMasks& m, __m512i neutral) {
  if constexpr (Depth == 1 && Aligned) {
    constexpr int p = kGmaxUnpackOrder.plane_of_leaf[First];
    constexpr int q = kGmaxUnpackOrder.plane_of_leaf[First + 1], s = N * p % 4;
    static_assert(N * q % 4 == s, "a leaf pair shares its lane offset");
    const __m512i a = aligned_window<N, p>(x);
    const __m512i b = aligned_window<N, q>(x);
    return GmaxVec::max<T>(_mm512_mask_unpacklo_epi8(neutral, m.lo[s], a, b),
                           _mm512_mask_unpackhi_epi8(neutral, m.hi[s], a, b));
  } else if constexpr (Depth == 0) {
    constexpr int plane = kGmaxUnpackOrder.plane_of_leaf[First];
    const __m512i w = _mm512_maskz_loadu_epi8(m.plane, x + plane * N);
    return std::is_signed_v<T> ? _mm512_mask_blend_epi8(m.plane, neutral, w) : w;
  } else {
    const __m512i a = gmax_unpack_tree<T, N, Aligned, Depth - 1, First>(x, m, neutral);
    const __m512i b =
        gmax_unpack_tree<T, N, Aligned, Depth - 1, First + (1 << (Depth - 1))>(x, m, neutral);
    return GmaxVec::max<T>(_mm512_unpacklo_epi8(a, b), _mm512_unpackhi_epi8(a, b));
  }
}

// Four subtrees of 16 leaves (their planes' maxima in every 128-bit lane),
// then the two cross-lane levels: lane q of the result holds subtree
// {0, 2, 1, 3}[q] (GmaxUnpackOrder).
template <class T, int N, bool Aligned>
GmaxVec::V GmaxVec::pass_unpack(const uint8_t* x) {
  static_assert(N > 32 && N <= 61, "one aligned window per plane");
  static constexpr GmaxUnpackMasks m = gmax_unpack_masks<N>();
  const __m512i neutral = _mm512_set1_epi8(std::is_signed_v<T> ? static_cast<char>(0x80) : 0);
  const __m512i m0 = merge<-1, T>(gmax_unpack_tree<T, N, Aligned, 4, 0>(x, m, neutral),
                                  gmax_unpack_tree<T, N, Aligned, 4, 16>(x, m, neutral));
  const __m512i m1 = merge<-1, T>(gmax_unpack_tree<T, N, Aligned, 4, 32>(x, m, neutral),
                                  gmax_unpack_tree<T, N, Aligned, 4, 48>(x, m, neutral));
  return merge<0, T>(m0, m1);
}

}  // namespace
}  // namespace npukit::cpu

#include "ops/cpu/x8-globalmax-nchw.inc"

namespace npukit::cpu {
namespace {

// Lane shim of x8-globalpool.inc: 64 codes per register.
struct GVec {
  using V = __m512i;
  static constexpr int64_t kLanes = 64;
  static constexpr int kSumRegs = 4;
  static V zero() { return _mm512_setzero_si512(); }
  static V bias(bool is_signed) {
    return _mm512_set1_epi8(is_signed ? static_cast<char>(0x80) : 0);
  }
  static V xor_(V a, V b) { return _mm512_xor_si512(a, b); }
  static V max_u8(V a, V b) { return _mm512_max_epu8(a, b); }
  static V add64(V a, V b) { return _mm512_add_epi64(a, b); }
  template <int K>
  static V srli64(V a) {
    return _mm512_srli_epi64(a, K);
  }
  static V sad(V a) { return _mm512_sad_epu8(a, _mm512_setzero_si512()); }
  static V load_full(const uint8_t* p) { return _mm512_loadu_si512(p); }
  // Plane K of a run of N-code planes at a 64-byte aligned x (aligned_window),
  // biased, 0 in the other lanes.
  static constexpr bool kAlignedWindows = true;
  template <int N, int K>
  static V window(const uint8_t* x, const V* keep, V bias) {
    // keep ? plane ^ bias : 0, with the window as the first operand (imm
    // 0x48): vpternlogd overwrites it, so keep is not copied per plane.
    constexpr int at = N * K;
    const V plane = aligned_window<N, K>(x);  // not inside the call: clang's intrinsic is a macro
    return _mm512_ternarylogic_epi32(plane, keep[at % 4], bias, 0x48);
  }
  static V keep_lanes(int n, int s) { return aligned_keep_lanes(n, s); }
  // Zero-masking loads (merge-masking ones are slow on AMD); mb holds the
  // bias in the tail's lanes only.
  struct Tail {
    __mmask64 m;
    V mb, mv;  // mv: 0xff in the tail's lanes
  };
  static Tail tail(int64_t n, V bias) {
    const __mmask64 m = n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
    return {m, _mm512_maskz_mov_epi8(m, bias), _mm512_maskz_mov_epi8(m, _mm512_set1_epi8(-1))};
  }
  static V load_tail(const uint8_t* p, const Tail& t, const uint8_t*, V) {
    return _mm512_xor_si512(_mm512_maskz_loadu_epi8(t.m, p), t.mb);
  }
  // A whole load and (x & mv) ^ mb in one ternary-logic op: byte-masked loads
  // cost about a cycle each here when they cross a line, plain ones 0.9.
  static V load_tail_inside(const uint8_t* p, const Tail& t, V) {
    return _mm512_ternarylogic_epi32(_mm512_loadu_si512(p), t.mv, t.mb, 0x6a);
  }
  // Eight registers of eight 64-bit partial results. Inlined by force: GCC
  // called it per tree of the sums (the eight registers through memory).
  template <class Op>
  __attribute__((always_inline)) static V tree(const V* a) {
    V pair[4];
    for (int k = 0; k < 4; ++k)
      pair[k] = Op::merge(_mm512_unpacklo_epi64(a[2 * k], a[2 * k + 1]),
                          _mm512_unpackhi_epi64(a[2 * k], a[2 * k + 1]));
    const V q0 = Op::merge(_mm512_shuffle_i64x2(pair[0], pair[1], 0x88),
                           _mm512_shuffle_i64x2(pair[0], pair[1], 0xdd));
    const V q1 = Op::merge(_mm512_shuffle_i64x2(pair[2], pair[3], 0x88),
                           _mm512_shuffle_i64x2(pair[2], pair[3], 0xdd));
    return Op::merge(_mm512_shuffle_i64x2(q0, q1, 0x88), _mm512_shuffle_i64x2(q0, q1, 0xdd));
  }
  // Plain stores when whole: masked narrowing stores are slow on AMD.
  static void store_codes(uint8_t* out, V t, int64_t m, V bias) {
    const __m128i codes = _mm_xor_si128(_mm512_cvtepi64_epi8(t), _mm512_castsi512_si128(bias));
    if (m == 8)
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out), codes);
    else
      _mm_mask_storeu_epi8(out, static_cast<__mmask16>((1u << m) - 1), codes);
  }
  // a's 64-bit lanes' low halves, then b's: (a, b) per lane, both < 2^32.
  static V pack_pair(V a, V b) { return _mm512_mask_shuffle_epi32(a, 0xaaaa, b, _MM_PERM_CDAB); }
  static void store_sum_pairs(int32_t* sums, V t) { _mm512_storeu_si512(sums, t); }
  static void store_sums(int32_t* sums, V t, int64_t m) {
    if (m == 8)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums), _mm512_cvtepi64_epi32(t));
    else
      _mm256_mask_storeu_epi32(sums, static_cast<__mmask8>((1u << m) - 1),
                               _mm512_cvtepi64_epi32(t));
  }
  static void store_channels(uint8_t* out, V acc, const Tail& t, V bias) {
    _mm512_mask_storeu_epi8(out, t.m, _mm512_xor_si512(acc, bias));
  }
  // Even channels' codes into lo, odd ones' into hi (and / shift, no
  // shuffles); flush puts them back in order.
  static void widen_add(V x, V& lo, V& hi) {
    lo = _mm512_add_epi16(lo, _mm512_and_si512(x, _mm512_set1_epi16(0xff)));
    hi = _mm512_add_epi16(hi, _mm512_srli_epi16(x, 8));
  }
  static void flush(V lo, V hi, int32_t* dst, int64_t m, bool add) {
    // Word indices (into lo:hi) of channels 0-31 and 32-63.
    alignas(64) static const uint16_t kFirst[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,
                                                    37, 6,  38, 7,  39, 8,  40, 9,  41, 10, 42,
                                                    11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    alignas(64) static const uint16_t kSecond[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21,
                                                     53, 22, 54, 23, 55, 24, 56, 25, 57, 26, 58,
                                                     27, 59, 28, 60, 29, 61, 30, 62, 31, 63};
    const V halves[2] = {_mm512_permutex2var_epi16(lo, _mm512_load_si512(kFirst), hi),
                         _mm512_permutex2var_epi16(lo, _mm512_load_si512(kSecond), hi)};
    for (int q = 0; q < 4 && 16 * q < m; ++q) {
      const int64_t left = m - 16 * q;
      const __mmask16 mq = left >= 16 ? 0xffff : static_cast<__mmask16>((1u << left) - 1);
      // Immediate operands must be literal constants for clang.
      const __m256i words = q % 2 ? _mm512_maskz_extracti64x4_epi64(0xff, halves[q / 2], 1)
                                  : _mm512_maskz_extracti64x4_epi64(0xff, halves[q / 2], 0);
      const V sum = _mm512_maskz_cvtepu16_epi32(0xffff, words);
      const V old = add ? _mm512_maskz_loadu_epi32(mq, dst + 16 * q) : _mm512_setzero_si512();
      _mm512_mask_storeu_epi32(dst + 16 * q, mq, _mm512_add_epi32(old, sum));
    }
  }
};

}  // namespace
}  // namespace npukit::cpu

#define X8G_NHWC_MAX_INLINE __attribute__((always_inline)) inline
#include "ops/cpu/x8-globalpool.inc"
#undef X8G_NHWC_MAX_INLINE

namespace npukit::cpu {

void x8_global_max_avx512(const X8GlobalBlock& b, uint8_t* out) {
  global_max(b, out);
}

void x8_global_sums_avx512(const X8GlobalBlock& b, int32_t* sums) {
  global_sums(b, sums);
}

namespace {

// 64 codes of int_sum_float with q.saturating_packs: round(v) + y_zp per lane,
// then int32 -> int16 -> 8-bit saturating packs clamp to the code range
// (clamp(round(v), lo, hi) + y_zp, as the reference's clamp-then-round), and
// one dword permute undoes the packs' 128-bit lane order. 29 operations per 64
// codes instead of 44 (vpmovdb is two).
template <bool Signed>
inline void int_sum_float_64(const int32_t* sums, __m512i bias, __m512 m, __m512i zp,
                             uint8_t* out) {
  __m512i r[4];
  for (int i = 0; i < 4; ++i) {
    const __m512i acc = _mm512_sub_epi32(_mm512_loadu_si512(sums + 16 * i), bias);
    const __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), m);
    r[i] = _mm512_add_epi32(
        _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
  }
  const __m512i w0 = _mm512_packs_epi32(r[0], r[1]), w1 = _mm512_packs_epi32(r[2], r[3]);
  const __m512i b = Signed ? _mm512_packs_epi16(w0, w1) : _mm512_packus_epi16(w0, w1);
  // Dword 4l + i of b holds codes 4l..4l+3 of r[i].
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  _mm512_storeu_si512(out, _mm512_permutexvar_epi32(order, b));
}

}  // namespace

// The reference's float steps per lane: int32 -> float, one multiply, clamp,
// round half to even (explicit, whatever MXCSR says), add the zero point.
void x8_global_int_sum_float_avx512(const int32_t* sums, int64_t count, const X8IntSumFloat& q,
                                    uint8_t* out) {
  const __m512i bias = _mm512_set1_epi32(q.bias_total), zp = _mm512_set1_epi32(q.y_zp);
  const __m512 m = _mm512_set1_ps(q.m), lo = _mm512_set1_ps(q.lo), hi = _mm512_set1_ps(q.hi);
  int64_t k = 0;
  if (q.saturating_packs) {
    for (; k + 64 <= count; k += 64)
      if (q.is_signed)
        int_sum_float_64<true>(sums + k, bias, m, zp, out + k);
      else
        int_sum_float_64<false>(sums + k, bias, m, zp, out + k);
  }
  for (; k < count; k += 16) {
    const __mmask16 mk = count - k >= 16 ? 0xffff : static_cast<__mmask16>((1u << (count - k)) - 1);
    const __m512i in =
        mk == 0xffff ? _mm512_loadu_si512(sums + k) : _mm512_maskz_loadu_epi32(mk, sums + k);
    const __m512i acc = _mm512_sub_epi32(in, bias);
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), m);
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    const __m512i r = _mm512_add_epi32(
        _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
    // A plain store when whole: the masked vpmovdb store is slow on AMD.
    if (mk == 0xffff)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + k), _mm512_cvtepi32_epi8(r));
    else
      _mm_mask_storeu_epi8(out + k, mk, _mm512_cvtepi32_epi8(r));
  }
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
