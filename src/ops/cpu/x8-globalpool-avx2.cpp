// AVX2 s8/u8 global pool kernels (x8-globalpool.hpp): the AVX-512 kernels'
// scheme with 32-byte registers, four planes per transpose tree. Without
// byte-masked loads a plane's last partial vector is read whole when it stays
// inside x's data (then masked), else from a stack copy.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

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
  static constexpr bool kUnpackTree = false;  // an AVX-512 pass only
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
  static V load(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  template <class T>
  static V merge_halves(V a, V b) {
    return max<T>(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
  }
  template <int Level, class T>
  static V merge(V a, V b) {
    V lo, hi;
    merge_parts<Level>(a, b, lo, hi);
    return max<T>(lo, hi);
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
  // Byte j of the result = byte plane_of_slot[j] of v (a permute across the
  // two 128-bit lanes: pshufb of each lane broadcast, then a blend).
  static V to_plane_order(V v, const uint8_t* plane_of_slot) {
    const V idx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(plane_of_slot));
    const V from_lo = _mm256_shuffle_epi8(_mm256_permute2x128_si256(v, v, 0x00), idx);
    const V from_hi = _mm256_shuffle_epi8(_mm256_permute2x128_si256(v, v, 0x11), idx);
    return _mm256_blendv_epi8(from_lo, from_hi, _mm256_cmpgt_epi8(idx, _mm256_set1_epi8(15)));
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

// Lane shim of x8-globalpool.inc: 32 codes per register. Without byte-masked
// loads a partial register is read whole when it stays inside x's data (then
// masked), else from a stack copy.
struct GVec {
  using V = __m256i;
  static constexpr int64_t kLanes = 32;
  static constexpr bool kAlignedWindows = false;
  static constexpr int kSumRegs = 4;
  static V zero() { return _mm256_setzero_si256(); }
  static V bias(bool is_signed) {
    return _mm256_set1_epi8(is_signed ? static_cast<char>(0x80) : 0);
  }
  static V xor_(V a, V b) { return _mm256_xor_si256(a, b); }
  static V max_u8(V a, V b) { return _mm256_max_epu8(a, b); }
  static V add64(V a, V b) { return _mm256_add_epi64(a, b); }
  template <int K>
  static V srli64(V a) {
    return _mm256_srli_epi64(a, K);
  }
  static V sad(V a) { return _mm256_sad_epu8(a, _mm256_setzero_si256()); }
  static V load_full(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  struct Tail {
    int64_t n;
    V keep;  // n leading 0xff bytes
  };
  static Tail tail(int64_t n, V) {
    return {n, _mm256_loadu_si256(
                   reinterpret_cast<const __m256i*>(kFirst + 32 - std::min<int64_t>(n, 32)))};
  }
  static V load_tail_inside(const uint8_t* p, const Tail& t, V bias) {
    return _mm256_and_si256(_mm256_xor_si256(load_full(p), bias), t.keep);
  }
  static V load_tail(const uint8_t* p, const Tail& t, const uint8_t* end, V bias) {
    if (t.n >= 32) return _mm256_xor_si256(load_full(p), bias);
    V raw;
    if (p + 32 <= end) {
      raw = load_full(p);
    } else {
      alignas(32) uint8_t copy[32] = {};
      std::memcpy(copy, p, static_cast<size_t>(t.n));
      raw = _mm256_load_si256(reinterpret_cast<const __m256i*>(copy));
    }
    const V keep = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kFirst + 32 - t.n));
    return _mm256_and_si256(_mm256_xor_si256(raw, bias), keep);
  }
  // Four registers of four 64-bit partial results.
  template <class Op>
  static V tree(const V* a) {
    const V p0 = Op::merge(_mm256_unpacklo_epi64(a[0], a[1]), _mm256_unpackhi_epi64(a[0], a[1]));
    const V p1 = Op::merge(_mm256_unpacklo_epi64(a[2], a[3]), _mm256_unpackhi_epi64(a[2], a[3]));
    return Op::merge(_mm256_permute2x128_si256(p0, p1, 0x20),
                     _mm256_permute2x128_si256(p0, p1, 0x31));
  }
  static void store_codes(uint8_t* out, V t, int64_t m, V bias) {
    alignas(32) uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_xor_si256(t, bias));
    for (int64_t k = 0; k < m; ++k) out[k] = static_cast<uint8_t>(lanes[k] & 0xff);
  }
  static void store_sums(int32_t* sums, V t, int64_t m) {
    alignas(32) uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), t);
    for (int64_t k = 0; k < m; ++k) sums[k] = static_cast<int32_t>(lanes[k]);
  }
  static void store_channels(uint8_t* out, V acc, const Tail& t, V bias) {
    alignas(32) uint8_t tmp[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), _mm256_xor_si256(acc, bias));
    std::memcpy(out, tmp, static_cast<size_t>(std::min<int64_t>(32, t.n)));
  }
  // Even channels' codes into lo, odd ones' into hi, as 16-bit sums (and /
  // shift, no shuffles); flush puts them back in order.
  static void widen_add(V x, V& lo, V& hi) {
    lo = _mm256_add_epi16(lo, _mm256_and_si256(x, _mm256_set1_epi16(0xff)));
    hi = _mm256_add_epi16(hi, _mm256_srli_epi16(x, 8));
  }
  static void flush(V lo, V hi, int32_t* dst, int64_t m, bool add) {
    // Word j of lo / hi: channel 2j / 2j + 1; interleaved per 128-bit lane
    // they give channels 0-7, 8-15 (lane 0) and 16-23, 24-31 (lane 1).
    const V a = _mm256_unpacklo_epi16(lo, hi), b = _mm256_unpackhi_epi16(lo, hi);
    const __m128i eights[4] = {_mm256_castsi256_si128(a), _mm256_castsi256_si128(b),
                               _mm256_extracti128_si256(a, 1), _mm256_extracti128_si256(b, 1)};
    for (int q = 0; q < 4 && 8 * q < m; ++q) {
      const V sum = _mm256_cvtepu16_epi32(eights[q]);
      int32_t* d = dst + 8 * q;
      if (m - 8 * q >= 8) {
        const V old =
            add ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d)) : _mm256_setzero_si256();
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm256_add_epi32(old, sum));
      } else {
        alignas(32) int32_t tmp[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), sum);
        for (int64_t j = 0; j < m - 8 * q; ++j) d[j] = (add ? d[j] : 0) + tmp[j];
      }
    }
  }
};

}  // namespace
}  // namespace npukit::cpu

#define X8G_NHWC_MAX_INLINE
#include "ops/cpu/x8-globalpool.inc"
#undef X8G_NHWC_MAX_INLINE

namespace npukit::cpu {

void x8_global_max_avx2(const X8GlobalBlock& b, uint8_t* out) {
  global_max(b, out);
}

void x8_global_sums_avx2(const X8GlobalBlock& b, int32_t* sums) {
  global_sums(b, sums);
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
