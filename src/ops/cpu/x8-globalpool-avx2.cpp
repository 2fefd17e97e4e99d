// AVX2 s8/u8 global pool kernels (x8-globalpool.hpp): the AVX-512 kernels'
// scheme with 32-byte registers, four planes per transpose tree. Without
// byte-masked loads a plane's last partial vector is read whole when it stays
// inside x's data (then masked), else from a stack copy.
#include <cstdint>
#include <cstring>

#include "x8-globalpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx2-begin.inc"

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
};
struct SumOp {
  static __m256i merge(__m256i a, __m256i b) { return _mm256_add_epi64(a, b); }
  static __m256i step(__m256i acc, __m256i v) {
    return _mm256_add_epi64(acc, _mm256_sad_epu8(v, _mm256_setzero_si256()));
  }
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
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), tree4<Op>(a));
    for (int64_t k = 0; k < 4 && k0 + k < b.count; ++k) emit(k0 + k, lanes[k]);
  }
}

// The byte maximum of a 64-bit lane.
inline uint8_t max_bytes(uint64_t v) {
  uint8_t m = 0;
  for (int i = 0; i < 8; ++i, v >>= 8) m = static_cast<uint8_t>(v & 0xff) > m ? v & 0xff : m;
  return m;
}

// NHWC: n (<= 32) channels at p, biased, zero in the other lanes.
inline __m256i load_channels(const uint8_t* p, int64_t n, const uint8_t* end, __m256i bias) {
  return n >= 32 ? load_full(p, bias) : load_part(p, n, end, bias);
}

void max_nhwc(const X8GlobalBlock& b, uint8_t* out) {
  const __m256i bias = _mm256_set1_epi8(b.is_signed ? static_cast<char>(0x80) : 0);
  for (int64_t c = 0; c < b.count; c += 32) {
    const int64_t n = b.count - c;
    __m256i acc = _mm256_setzero_si256();
    for (int64_t h = 0; h < b.H; ++h)
      for (int64_t w = 0; w < b.W; ++w)
        acc = _mm256_max_epu8(acc, load_channels(b.x + h * b.sH + w * b.sW + c, n, b.x_end, bias));
    alignas(32) uint8_t tmp[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), _mm256_xor_si256(acc, bias));
    std::memcpy(out + c, tmp, static_cast<size_t>(n < 32 ? n : 32));
  }
}

void sums_nhwc(const X8GlobalBlock& b, int32_t* sums) {
  const __m256i bias = _mm256_set1_epi8(b.is_signed ? static_cast<char>(0x80) : 0);
  for (int64_t c = 0; c < b.count; c += 32) {
    const int64_t n = b.count - c;
    __m256i s32[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                      _mm256_setzero_si256()};
    __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
    int64_t pending = 0;  // positions in the 16-bit sums (255 * 256 < 2^16)
    auto flush = [&] {
      s32[0] = _mm256_add_epi32(s32[0], _mm256_cvtepu16_epi32(_mm256_castsi256_si128(lo)));
      s32[1] = _mm256_add_epi32(s32[1], _mm256_cvtepu16_epi32(_mm256_extracti128_si256(lo, 1)));
      s32[2] = _mm256_add_epi32(s32[2], _mm256_cvtepu16_epi32(_mm256_castsi256_si128(hi)));
      s32[3] = _mm256_add_epi32(s32[3], _mm256_cvtepu16_epi32(_mm256_extracti128_si256(hi, 1)));
      lo = hi = _mm256_setzero_si256();
      pending = 0;
    };
    for (int64_t h = 0; h < b.H; ++h)
      for (int64_t w = 0; w < b.W; ++w) {
        const __m256i v = load_channels(b.x + h * b.sH + w * b.sW + c, n, b.x_end, bias);
        lo = _mm256_add_epi16(lo, _mm256_cvtepu8_epi16(_mm256_castsi256_si128(v)));
        hi = _mm256_add_epi16(hi, _mm256_cvtepu8_epi16(_mm256_extracti128_si256(v, 1)));
        if (++pending == 256) flush();
      }
    flush();
    alignas(32) int32_t tmp[32];
    for (int q = 0; q < 4; ++q) _mm256_store_si256(reinterpret_cast<__m256i*>(tmp + 8 * q), s32[q]);
    std::memcpy(sums + c, tmp, sizeof(int32_t) * static_cast<size_t>(n < 32 ? n : 32));
  }
}

}  // namespace

void x8_global_max_avx2(const X8GlobalBlock& b, uint8_t* out) {
  if (b.nhwc) return max_nhwc(b, out);
  const uint8_t bias = b.is_signed ? 0x80 : 0;
  nchw_groups<MaxOp>(b, [&](int64_t k, uint64_t v) { out[k] = max_bytes(v) ^ bias; });
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
    std::memcpy(in, sums + k, sizeof(int32_t) * static_cast<size_t>(n));
    const __m256i acc =
        _mm256_sub_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(in)), bias);
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), m);
    v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    // Round half to even explicitly; the integral result converts exactly.
    v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    alignas(32) int32_t r[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(r), _mm256_add_epi32(_mm256_cvttps_epi32(v), zp));
    for (int64_t j = 0; j < n; ++j) out[k + j] = static_cast<uint8_t>(r[j]);
  }
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
