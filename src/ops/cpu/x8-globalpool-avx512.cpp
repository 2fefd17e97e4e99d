// AVX-512 s8/u8 global pool kernels (x8-globalpool.hpp). NCHW: eight planes
// at a time, each reduced to one register (max, or vpsadbw sums in 64-bit
// lanes), then a transpose tree leaves plane k in 64-bit lane k. NHWC: 64
// channels per register, 16-bit sums flushed to 32 bits every 256 positions.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "x8-globalpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {

namespace {

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
  template <int Level>
  static void merge_parts(V a, V b, V& lo, V& hi) {
    if constexpr (Level == 0) {  // 128-bit blocks
      lo = _mm512_shuffle_i64x2(a, b, 0x88);
      hi = _mm512_shuffle_i64x2(a, b, 0xdd);
    } else if constexpr (Level == 1) {  // 64-bit halves of each block
      lo = _mm512_unpacklo_epi64(a, b);
      hi = _mm512_unpackhi_epi64(a, b);
    } else if constexpr (Level == 2) {  // even / odd dwords
      lo = _mm512_castps_si512(
          _mm512_shuffle_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(b), 0x88));
      hi = _mm512_castps_si512(
          _mm512_shuffle_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(b), 0xdd));
    } else if constexpr (Level == 3) {  // low / high words of each dword
      const V m = _mm512_set1_epi32(0xffff);
      lo = _mm512_packus_epi32(_mm512_and_si512(a, m), _mm512_and_si512(b, m));
      hi = _mm512_packus_epi32(_mm512_srli_epi32(a, 16), _mm512_srli_epi32(b, 16));
    } else {  // low / high bytes of each word
      const V m = _mm512_set1_epi16(0xff);
      lo = _mm512_packus_epi16(_mm512_and_si512(a, m), _mm512_and_si512(b, m));
      hi = _mm512_packus_epi16(_mm512_srli_epi16(a, 8), _mm512_srli_epi16(b, 8));
    }
  }
  static void store_part(uint8_t* p, V v, int64_t n) {
    _mm512_mask_storeu_epi8(p, n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1, v);
  }
};

}  // namespace
}  // namespace npukit::cpu

#include "ops/cpu/x8-globalmax-nchw.inc"

namespace npukit::cpu {
namespace {

struct MaxOp {
  static __m512i merge(__m512i a, __m512i b) { return _mm512_max_epu8(a, b); }
  static __m512i step(__m512i acc, __m512i v) { return _mm512_max_epu8(acc, v); }
};
struct SumOp {
  static __m512i merge(__m512i a, __m512i b) { return _mm512_add_epi64(a, b); }
  static __m512i step(__m512i acc, __m512i v) {
    return _mm512_add_epi64(acc, _mm512_sad_epu8(v, _mm512_setzero_si512()));
  }
};

// One plane of n codes, biased; lanes past the plane are 0 (neutral for both).
// Zero-masking loads (merge-masking ones are slow on AMD), and tail_bias holds
// the bias in the tail's lanes only.
template <class Op>
inline __m512i plane(const uint8_t* p, int64_t n, __mmask64 tail, __m512i bias, __m512i tail_bias) {
  __m512i acc = _mm512_setzero_si512();
  int64_t i = 0;
  for (; i + 64 <= n; i += 64)
    acc = Op::step(acc, _mm512_xor_si512(_mm512_loadu_si512(p + i), bias));
  if (tail) acc = Op::step(acc, _mm512_xor_si512(_mm512_maskz_loadu_epi8(tail, p + i), tail_bias));
  return acc;
}

// Eight registers of eight 64-bit partial results: 64-bit lane k of the result
// merges all of a[k].
template <class Op>
inline __m512i tree8(const __m512i* a) {
  __m512i pair[4];
  for (int k = 0; k < 4; ++k)
    pair[k] = Op::merge(_mm512_unpacklo_epi64(a[2 * k], a[2 * k + 1]),
                        _mm512_unpackhi_epi64(a[2 * k], a[2 * k + 1]));
  const __m512i q0 = Op::merge(_mm512_shuffle_i64x2(pair[0], pair[1], 0x88),
                               _mm512_shuffle_i64x2(pair[0], pair[1], 0xdd));
  const __m512i q1 = Op::merge(_mm512_shuffle_i64x2(pair[2], pair[3], 0x88),
                               _mm512_shuffle_i64x2(pair[2], pair[3], 0xdd));
  return Op::merge(_mm512_shuffle_i64x2(q0, q1, 0x88), _mm512_shuffle_i64x2(q0, q1, 0xdd));
}

// NCHW: calls emit(k0, t) per group of eight planes k0.. with the tree result
// t (planes past count repeat the last one).
template <class Op, class Emit>
void nchw_groups(const X8GlobalBlock& b, const Emit& emit) {
  const int64_t n = b.H * b.W;
  const __mmask64 tail = n % 64 ? (uint64_t{1} << (n % 64)) - 1 : 0;
  const __m512i bias = _mm512_set1_epi8(b.is_signed ? static_cast<char>(0x80) : 0);
  const __m512i tail_bias = _mm512_maskz_mov_epi8(tail, bias);
  const int64_t full = b.count / 8 * 8;
  if (n <= 64) {  // one register per plane; the eight stay in registers
    const __mmask64 m = tail ? tail : ~uint64_t{0};
    const __m512i mb = _mm512_maskz_mov_epi8(m, bias);
    const __m512i zero = _mm512_setzero_si512();
    const int64_t sC = b.sC;
    auto one = [&](const uint8_t* p) {
      return Op::step(zero, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, p), mb));
    };
    for (int64_t k0 = 0; k0 < full; k0 += 8) {
      const uint8_t* p = b.x + k0 * sC;
      const __m512i a[8] = {one(p),          one(p + sC),     one(p + 2 * sC), one(p + 3 * sC),
                            one(p + 4 * sC), one(p + 5 * sC), one(p + 6 * sC), one(p + 7 * sC)};
      emit(k0, tree8<Op>(a));
    }
  } else {
    for (int64_t k0 = 0; k0 < full; k0 += 8) {
      __m512i a[8];
      for (int64_t k = 0; k < 8; ++k)
        a[k] = plane<Op>(b.x + (k0 + k) * b.sC, n, tail, bias, tail_bias);
      emit(k0, tree8<Op>(a));
    }
  }
  if (full < b.count) {  // the last planes, repeated to fill eight
    __m512i a[8];
    for (int64_t k = 0; k < 8; ++k) {
      const int64_t c = full + k < b.count ? full + k : b.count - 1;
      a[k] = plane<Op>(b.x + c * b.sC, n, tail, bias, tail_bias);
    }
    emit(full, tree8<Op>(a));
  }
}

void max_nchw(const X8GlobalBlock& b, uint8_t* out) {
  if (gmax_small_planes(b.H * b.W)) {  // a vector of planes per pass
    if (b.is_signed)
      gmax_nchw_small<int8_t>(b, out);
    else
      gmax_nchw_small<uint8_t>(b, out);
    return;
  }
  const __m512i bias = _mm512_set1_epi8(b.is_signed ? static_cast<char>(0x80) : 0);
  nchw_groups<MaxOp>(b, [&](int64_t k0, __m512i t) {
    t = _mm512_max_epu8(t, _mm512_srli_epi64(t, 32));
    t = _mm512_max_epu8(t, _mm512_srli_epi64(t, 16));
    t = _mm512_max_epu8(t, _mm512_srli_epi64(t, 8));
    const int64_t m = b.count - k0 < 8 ? b.count - k0 : 8;
    const __m128i codes = _mm_xor_si128(_mm512_cvtepi64_epi8(t), _mm512_castsi512_si128(bias));
    if (m == 8)  // a plain store: masked stores are slow on AMD
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + k0), codes);
    else
      _mm_mask_storeu_epi8(out + k0, static_cast<__mmask16>((1u << m) - 1), codes);
  });
}

void sums_nchw(const X8GlobalBlock& b, int32_t* sums) {
  nchw_groups<SumOp>(b, [&](int64_t k0, __m512i t) {
    const int64_t m = b.count - k0 < 8 ? b.count - k0 : 8;
    if (m == 8)  // a plain store: masked narrowing stores (vpmovqd m{k}) are slow on AMD
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + k0), _mm512_cvtepi64_epi32(t));
    else
      _mm256_mask_storeu_epi32(sums + k0, static_cast<__mmask8>((1u << m) - 1),
                               _mm512_cvtepi64_epi32(t));
  });
}

// NHWC: channels in lanes, V registers (64 channels each, m[v] the valid
// ones) per position, so that each position's read is one contiguous run.
inline __mmask64 channel_mask(int64_t left) {
  return left >= 64 ? ~uint64_t{0} : left <= 0 ? 0 : (uint64_t{1} << left) - 1;
}

template <int V>
void max_nhwc_group(const X8GlobalBlock& b, int64_t c, __m512i bias, uint8_t* out) {
  __mmask64 m[V];
  __m512i mb[V], acc[V];
  for (int v = 0; v < V; ++v) {
    m[v] = channel_mask(b.count - c - 64 * v);
    mb[v] = _mm512_maskz_mov_epi8(m[v], bias);
    acc[v] = _mm512_setzero_si512();
  }
  for (int64_t h = 0; h < b.H; ++h)
    for (int64_t w = 0; w < b.W; ++w) {
      const uint8_t* p = b.x + h * b.sH + w * b.sW + c;
      for (int v = 0; v < V; ++v)
        acc[v] = _mm512_max_epu8(
            acc[v], _mm512_xor_si512(_mm512_maskz_loadu_epi8(m[v], p + 64 * v), mb[v]));
    }
  for (int v = 0; v < V; ++v)
    _mm512_mask_storeu_epi8(out + c + 64 * v, m[v], _mm512_xor_si512(acc[v], bias));
}

void max_nhwc(const X8GlobalBlock& b, uint8_t* out) {
  const __m512i bias = _mm512_set1_epi8(b.is_signed ? static_cast<char>(0x80) : 0);
  int64_t c = 0;
  for (; c + 256 <= b.count; c += 256) max_nhwc_group<4>(b, c, bias, out);
  for (; c < b.count; c += 64) max_nhwc_group<1>(b, c, bias, out);
}

// Sums: 16-bit lanes, added into the int32 sums every 256 positions
// (255 * 256 < 2^16). vpunpck{l,h}bw interleave the channels: lo holds channels
// 0-7, 16-23, 32-39, 48-55 of its 64, hi the others, put back in order once
// per flush.
template <int V>
void sums_nhwc_group(const X8GlobalBlock& b, int64_t c, __m512i bias, int32_t* sums) {
  __mmask64 m[V];
  __m512i mb[V];
  const __m512i zero = _mm512_setzero_si512();
  for (int v = 0; v < V; ++v) {
    m[v] = channel_mask(b.count - c - 64 * v);
    mb[v] = _mm512_maskz_mov_epi8(m[v], bias);
  }
  // Word indices (into lo:hi) of channels 0-31 and 32-63.
  alignas(64) static const uint16_t kFirst[32] = {0,  1,  2,  3,  4,  5,  6,  7,  32, 33, 34,
                                                  35, 36, 37, 38, 39, 8,  9,  10, 11, 12, 13,
                                                  14, 15, 40, 41, 42, 43, 44, 45, 46, 47};
  alignas(64) static const uint16_t kSecond[32] = {16, 17, 18, 19, 20, 21, 22, 23, 48, 49, 50,
                                                   51, 52, 53, 54, 55, 24, 25, 26, 27, 28, 29,
                                                   30, 31, 56, 57, 58, 59, 60, 61, 62, 63};
  const __m512i first = _mm512_load_si512(kFirst), second = _mm512_load_si512(kSecond);
  const int64_t total = b.H * b.W;
  int64_t h = 0, w = 0;
  for (int64_t done = 0; done < total;) {
    const int64_t n = total - done < 256 ? total - done : 256;
    __m512i lo[V], hi[V];  // no lambda captures them: they stay in registers
    for (int v = 0; v < V; ++v) lo[v] = hi[v] = zero;
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* p = b.x + h * b.sH + w * b.sW + c;
      for (int v = 0; v < V; ++v) {
        const __m512i x = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m[v], p + 64 * v), mb[v]);
        lo[v] = _mm512_add_epi16(lo[v], _mm512_unpacklo_epi8(x, zero));
        hi[v] = _mm512_add_epi16(hi[v], _mm512_unpackhi_epi8(x, zero));
      }
      if (++w == b.W) w = 0, ++h;
    }
    for (int v = 0; v < V; ++v) {
      const __m512i halves[2] = {_mm512_permutex2var_epi16(lo[v], first, hi[v]),
                                 _mm512_permutex2var_epi16(lo[v], second, hi[v])};
      for (int q = 0; q < 4; ++q) {
        const int64_t left = b.count - c - 64 * v - 16 * q;
        if (left <= 0) break;
        const __mmask16 mq = left >= 16 ? 0xffff : static_cast<__mmask16>((1u << left) - 1);
        int32_t* dst = sums + c + 64 * v + 16 * q;
        // Immediate operands must be literal constants for clang.
        const __m256i words = q % 2 ? _mm512_maskz_extracti64x4_epi64(0xff, halves[q / 2], 1)
                                    : _mm512_maskz_extracti64x4_epi64(0xff, halves[q / 2], 0);
        const __m512i add = _mm512_maskz_cvtepu16_epi32(0xffff, words);
        const __m512i old = done > 0 ? _mm512_maskz_loadu_epi32(mq, dst) : zero;
        _mm512_mask_storeu_epi32(dst, mq, _mm512_add_epi32(old, add));
      }
    }
    done += n;
  }
}

void sums_nhwc(const X8GlobalBlock& b, int32_t* sums) {
  const __m512i bias = _mm512_set1_epi8(b.is_signed ? static_cast<char>(0x80) : 0);
  int64_t c = 0;
  for (; c + 256 <= b.count; c += 256) sums_nhwc_group<4>(b, c, bias, sums);
  for (; c < b.count; c += 64) sums_nhwc_group<1>(b, c, bias, sums);
}

}  // namespace

void x8_global_max_avx512(const X8GlobalBlock& b, uint8_t* out) {
  if (b.nhwc)
    max_nhwc(b, out);
  else
    max_nchw(b, out);
}

void x8_global_sums_avx512(const X8GlobalBlock& b, int32_t* sums) {
  if (b.nhwc)
    sums_nhwc(b, sums);
  else
    sums_nchw(b, sums);
}

// The reference's float steps per lane: int32 -> float, one multiply, clamp,
// round half to even (explicit, whatever MXCSR says), add the zero point.
void x8_global_int_sum_float_avx512(const int32_t* sums, int64_t count, const X8IntSumFloat& q,
                                    uint8_t* out) {
  const __m512i bias = _mm512_set1_epi32(q.bias_total), zp = _mm512_set1_epi32(q.y_zp);
  const __m512 m = _mm512_set1_ps(q.m), lo = _mm512_set1_ps(q.lo), hi = _mm512_set1_ps(q.hi);
  for (int64_t k = 0; k < count; k += 16) {
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
