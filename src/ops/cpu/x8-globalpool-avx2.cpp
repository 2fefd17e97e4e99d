// AVX2 s8/u8 global pool kernels (x8-globalpool.hpp): the AVX-512 kernels'
// scheme with 32-byte registers, four planes per transpose tree. Without
// byte-masked loads a plane's last partial vector is read whole when it stays
// inside x's data (then masked), else from a stack copy.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "x8-globalpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {

namespace {

// Lane shim of x8-globalmax-nchw.inc: 32 planes per pass, 16-byte halves.
struct GmaxVec {
  using V = __m256i;
  static constexpr int64_t kLanes = 32;
  static constexpr int kFirstLevel = 1;
  using Half = __m128i;
  static Half load_half(const uint8_t* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  }
  template <class T>
  static Half max_half(Half a, Half b) {
    return std::is_signed_v<T> ? _mm_max_epi8(a, b) : _mm_max_epu8(a, b);
  }
  static V join(Half a, Half b) { return _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1); }
  template <class T>
  static V max(V a, V b) {
    return std::is_signed_v<T> ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b);
  }
  template <int Level>
  static void merge_parts(V a, V b, V& lo, V& hi) {
    static_assert(Level >= 1);
    if constexpr (Level == 1) {  // 64-bit halves of each 128-bit lane
      lo = _mm256_unpacklo_epi64(a, b);
      hi = _mm256_unpackhi_epi64(a, b);
    } else if constexpr (Level == 2) {  // even / odd dwords
      lo = _mm256_castps_si256(
          _mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), 0x88));
      hi = _mm256_castps_si256(
          _mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), 0xdd));
    } else if constexpr (Level == 3) {  // low / high words of each dword
      const V m = _mm256_set1_epi32(0xffff);
      lo = _mm256_packus_epi32(_mm256_and_si256(a, m), _mm256_and_si256(b, m));
      hi = _mm256_packus_epi32(_mm256_srli_epi32(a, 16), _mm256_srli_epi32(b, 16));
    } else {  // low / high bytes of each word
      const V m = _mm256_set1_epi16(0xff);
      lo = _mm256_packus_epi16(_mm256_and_si256(a, m), _mm256_and_si256(b, m));
      hi = _mm256_packus_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
    }
  }
  static void store_part(uint8_t* p, V v, int64_t n) {
    alignas(32) uint8_t tmp[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), v);
    std::memcpy(p, tmp, static_cast<size_t>(n));
  }
};

}  // namespace
}  // namespace npukit::cpu

#include "ops/cpu/x8-globalmax-nchw.inc"

namespace npukit::cpu {
namespace {

// kFirst + 32 - n: a mask of n leading 0xff bytes.
alignas(64) const uint8_t kFirst[64] = {
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

// n (< 32) codes at p, biased, zero in the other lanes.
inline __m256i load_part(const uint8_t* p, int64_t n, const uint8_t* end, __m256i bias) {
  __m256i raw;
  if (p + 32 <= end) {
    raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  } else {
    alignas(32) uint8_t copy[32] = {};
    std::memcpy(copy, p, static_cast<size_t>(n));
    raw = _mm256_load_si256(reinterpret_cast<const __m256i*>(copy));
  }
  const __m256i keep = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kFirst + 32 - n));
  return _mm256_and_si256(_mm256_xor_si256(raw, bias), keep);
}

inline __m256i load_full(const uint8_t* p, __m256i bias) {
  return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), bias);
}

struct MaxOp {
  static __m256i merge(__m256i a, __m256i b) { return _mm256_max_epu8(a, b); }
  static __m256i step(__m256i acc, __m256i v) { return _mm256_max_epu8(acc, v); }
  // Each 64-bit lane's byte maximum into its low byte.
  static __m256i finish(__m256i t) {
    t = _mm256_max_epu8(t, _mm256_srli_epi64(t, 32));
    t = _mm256_max_epu8(t, _mm256_srli_epi64(t, 16));
    return _mm256_max_epu8(t, _mm256_srli_epi64(t, 8));
  }
};
struct SumOp {
  static __m256i merge(__m256i a, __m256i b) { return _mm256_add_epi64(a, b); }
  static __m256i step(__m256i acc, __m256i v) {
    return _mm256_add_epi64(acc, _mm256_sad_epu8(v, _mm256_setzero_si256()));
  }
  static __m256i finish(__m256i t) { return t; }
};

template <class Op>
inline __m256i plane(const uint8_t* p, int64_t n, const uint8_t* end, __m256i bias) {
  __m256i acc = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) acc = Op::step(acc, load_full(p + i, bias));
  if (i < n) acc = Op::step(acc, load_part(p + i, n - i, end, bias));
  return acc;
}

// 64-bit lane k of the result merges all of a[k].
template <class Op>
inline __m256i tree4(const __m256i* a) {
  const __m256i p0 =
      Op::merge(_mm256_unpacklo_epi64(a[0], a[1]), _mm256_unpackhi_epi64(a[0], a[1]));
  const __m256i p1 =
      Op::merge(_mm256_unpacklo_epi64(a[2], a[3]), _mm256_unpackhi_epi64(a[2], a[3]));
  return Op::merge(_mm256_permute2x128_si256(p0, p1, 0x20),
                   _mm256_permute2x128_si256(p0, p1, 0x31));
}

template <class Op, class Emit>
void nchw_groups(const X8GlobalBlock& b, const Emit& emit) {
  const int64_t n = b.H * b.W;
  const __m256i bias = _mm256_set1_epi8(b.is_signed ? static_cast<char>(0x80) : 0);
  for (int64_t k0 = 0; k0 < b.count; k0 += 4) {
    __m256i a[4];
    for (int64_t k = 0; k < 4; ++k) {
      const int64_t c = k0 + k < b.count ? k0 + k : b.count - 1;
      a[k] = plane<Op>(b.x + c * b.sC, n, b.x_end, bias);
    }
    alignas(32) uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), Op::finish(tree4<Op>(a)));
    for (int64_t k = 0; k < 4 && k0 + k < b.count; ++k) emit(k0 + k, lanes[k]);
  }
}

// NHWC: n (<= 32) channels at p, biased, zero in the other lanes.
inline __m256i load_channels(const uint8_t* p, int64_t n, const uint8_t* end, __m256i bias) {
  return n >= 32 ? load_full(p, bias) : load_part(p, n, end, bias);
}

// V registers (32 channels each) per position, so that each position's read
// is one contiguous run.
template <int V>
void max_nhwc_group(const X8GlobalBlock& b, int64_t c, __m256i bias, uint8_t* out) {
  const int64_t n = b.count - c;  // channels left (V*32 or fewer in the last group)
  __m256i acc[V];
  for (int v = 0; v < V; ++v) acc[v] = _mm256_setzero_si256();
  for (int64_t h = 0; h < b.H; ++h)
    for (int64_t w = 0; w < b.W; ++w) {
      const uint8_t* p = b.x + h * b.sH + w * b.sW + c;
      for (int v = 0; v < V; ++v)
        acc[v] = _mm256_max_epu8(acc[v], load_channels(p + 32 * v, n - 32 * v, b.x_end, bias));
    }
  for (int v = 0; v < V && n - 32 * v > 0; ++v) {
    alignas(32) uint8_t tmp[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), _mm256_xor_si256(acc[v], bias));
    std::memcpy(out + c + 32 * v, tmp, static_cast<size_t>(std::min<int64_t>(32, n - 32 * v)));
  }
}

void max_nhwc(const X8GlobalBlock& b, uint8_t* out) {
  const __m256i bias = _mm256_set1_epi8(b.is_signed ? static_cast<char>(0x80) : 0);
  int64_t c = 0;
  for (; c + 128 <= b.count; c += 128) max_nhwc_group<4>(b, c, bias, out);
  for (; c < b.count; c += 32) max_nhwc_group<1>(b, c, bias, out);
}

// Sums: 16-bit lanes added into the int32 sums every 256 positions (255 * 256
// < 2^16); V registers (32 channels each) per position. No lambda captures the
// accumulators, so they stay in registers.
template <int V>
void sums_nhwc_group(const X8GlobalBlock& b, int64_t c, __m256i bias, int32_t* sums) {
  const int64_t n = b.count - c;
  const int64_t total = b.H * b.W;
  int64_t h = 0, w = 0;
  for (int64_t done = 0; done < total;) {
    const int64_t run = total - done < 256 ? total - done : 256;
    __m256i lo[V], hi[V];
    for (int v = 0; v < V; ++v) lo[v] = hi[v] = _mm256_setzero_si256();
    for (int64_t i = 0; i < run; ++i) {
      const uint8_t* p = b.x + h * b.sH + w * b.sW + c;
      for (int v = 0; v < V; ++v) {
        const __m256i x = load_channels(p + 32 * v, n - 32 * v, b.x_end, bias);
        lo[v] = _mm256_add_epi16(lo[v], _mm256_cvtepu8_epi16(_mm256_castsi256_si128(x)));
        hi[v] = _mm256_add_epi16(hi[v], _mm256_cvtepu8_epi16(_mm256_extracti128_si256(x, 1)));
      }
      if (++w == b.W) w = 0, ++h;
    }
    for (int v = 0; v < V && n - 32 * v > 0; ++v) {
      alignas(32) int32_t part[32];
      const __m128i words[4] = {_mm256_castsi256_si128(lo[v]), _mm256_extracti128_si256(lo[v], 1),
                                _mm256_castsi256_si128(hi[v]), _mm256_extracti128_si256(hi[v], 1)};
      for (int q = 0; q < 4; ++q)
        _mm256_store_si256(reinterpret_cast<__m256i*>(part + 8 * q),
                           _mm256_cvtepu16_epi32(words[q]));
      int32_t* dst = sums + c + 32 * v;
      const int64_t m = std::min<int64_t>(32, n - 32 * v);
      for (int64_t j = 0; j < m; ++j) dst[j] = (done > 0 ? dst[j] : 0) + part[j];
    }
    done += run;
  }
}

void sums_nhwc(const X8GlobalBlock& b, int32_t* sums) {
  const __m256i bias = _mm256_set1_epi8(b.is_signed ? static_cast<char>(0x80) : 0);
  int64_t c = 0;
  for (; c + 64 <= b.count; c += 64) sums_nhwc_group<2>(b, c, bias, sums);
  for (; c < b.count; c += 32) sums_nhwc_group<1>(b, c, bias, sums);
}

}  // namespace

void x8_global_max_avx2(const X8GlobalBlock& b, uint8_t* out) {
  if (b.nhwc) return max_nhwc(b, out);
  if (gmax_small_planes(b.H * b.W)) {  // a vector of planes per pass
    if (b.is_signed)
      gmax_nchw_small<int8_t>(b, out);
    else
      gmax_nchw_small<uint8_t>(b, out);
    return;
  }
  const uint8_t bias = b.is_signed ? 0x80 : 0;
  nchw_groups<MaxOp>(
      b, [&](int64_t k, uint64_t v) { out[k] = static_cast<uint8_t>(v & 0xff) ^ bias; });
}

void x8_global_sums_avx2(const X8GlobalBlock& b, int32_t* sums) {
  if (b.nhwc) return sums_nhwc(b, sums);
  nchw_groups<SumOp>(b, [&](int64_t k, uint64_t v) { sums[k] = static_cast<int32_t>(v); });
}

void x8_global_int_sum_float_avx2(const int32_t* sums, int64_t count, const X8IntSumFloat& q,
                                  uint8_t* out) {
  const __m256i bias = _mm256_set1_epi32(q.bias_total), zp = _mm256_set1_epi32(q.y_zp);
  const __m256 m = _mm256_set1_ps(q.m), lo = _mm256_set1_ps(q.lo), hi = _mm256_set1_ps(q.hi);
  for (int64_t k = 0; k < count; k += 8) {
    const int64_t n = count - k < 8 ? count - k : 8;
    alignas(32) int32_t in[8] = {};
    const int32_t* src = sums + k;
    if (n < 8) {
      std::memcpy(in, sums + k, sizeof(int32_t) * static_cast<size_t>(n));
      src = in;
    }
    const __m256i acc =
        _mm256_sub_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)), bias);
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), m);
    v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    // Round half to even explicitly; the integral result converts exactly.
    v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i r = _mm256_add_epi32(_mm256_cvttps_epi32(v), zp);
    // The low byte of each 32-bit lane, in order, as 8 bytes.
    const __m256i picked = _mm256_shuffle_epi8(
        r, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8,
                            12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
    const __m128i bytes =
        _mm_unpacklo_epi32(_mm256_castsi256_si128(picked), _mm256_extracti128_si256(picked, 1));
    if (n == 8) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + k), bytes);
    } else {
      alignas(16) uint8_t tmp[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(tmp), bytes);
      std::memcpy(out + k, tmp, static_cast<size_t>(n));
    }
  }
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
