// AVX2 stride-2 s8/u8 max pooling of NCHW rows (x8-maxpool2d-s2.hpp): 16
// outputs per register. Without byte-masked loads an edge load reads its 32
// bytes whole when they lie inside x's data (lanes off the row then replaced
// by their fill), else from a stack copy of its valid bytes.
#include <cstdint>
#include <cstring>

#include "x8-maxpool2d-s2.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

// Every header the driver (.inc) uses, before the target region opens (clang
// would apply the target attribute to their declarations).
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "npukit/parallel.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {
namespace x8s2_avx2 {
namespace {

struct S {
  static constexpr int64_t VB = 32;
  using B = __m256i;
  struct Edge {      // plain bytes: chunks live in a std::vector built outside this target
    int32_t lo, hi;  // valid lanes
    alignas(32) uint8_t keep[32];  // 0xff in the valid lanes
    alignas(32) uint8_t fill[32];  // 0 in the valid lanes
  };
  struct Fill {
    int32_t lo, hi;
    __m256i keep, fill;
  };
  static B set1(uint8_t v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  template <class T>
  static B max(B a, B b) {
    return std::is_signed_v<T> ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b);
  }
  template <class T>
  static B fold(B v) {
    return max<T>(v, _mm256_srli_epi16(v, 8));
  }
  static void store_out(uint8_t* p, B v, int64_t n) {
    const __m256i low = _mm256_and_si256(v, _mm256_set1_epi16(0xff));
    // packus per 128-bit lane, then the two lanes' first quadwords together.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi16(low, low), 0x08);
    const __m128i bytes = _mm256_castsi256_si128(packed);
    if (n == 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), bytes);
      return;
    }
    alignas(16) uint8_t tmp[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(tmp), bytes);
    std::memcpy(p, tmp, static_cast<size_t>(n));
  }
  static Edge make_edge(int64_t valid_lo, int64_t valid_hi, int64_t pad_lo, int64_t pad_hi,
                        uint8_t pad, uint8_t lowest) {
    Edge e;
    e.lo = static_cast<int32_t>(valid_lo);
    e.hi = static_cast<int32_t>(std::max(valid_lo, valid_hi));
    for (int64_t j = 0; j < 32; ++j) {
      const bool valid = j >= e.lo && j < e.hi;
      e.keep[j] = valid ? 0xff : 0;
      e.fill[j] = valid ? 0 : (j >= pad_lo && j < pad_hi ? pad : lowest);
    }
    return e;
  }
  static Fill fill_of(const Edge& e) {
    return {e.lo, e.hi, _mm256_load_si256(reinterpret_cast<const __m256i*>(e.keep)),
            _mm256_load_si256(reinterpret_cast<const __m256i*>(e.fill))};
  }
  static B load(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  static B load_edge(const uint8_t* p, const Fill& f, const uint8_t* x_begin,
                     const uint8_t* x_end) {
    B raw;
    if (p >= x_begin && p + 32 <= x_end) {
      raw = load(p);
    } else {
      alignas(32) uint8_t copy[32] = {};
      if (f.hi > f.lo) std::memcpy(copy + f.lo, p + f.lo, static_cast<size_t>(f.hi - f.lo));
      raw = _mm256_load_si256(reinterpret_cast<const __m256i*>(copy));
    }
    return _mm256_or_si256(_mm256_and_si256(raw, f.keep), f.fill);
  }
};

}  // namespace
}  // namespace x8s2_avx2
}  // namespace npukit::cpu

#define NPUKIT_X8S2_NS x8s2_avx2
#include "x8-maxpool2d-s2.inc"

namespace npukit::cpu {

void max_pool2d_x8_s2_avx2(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::s8)
    x8s2_avx2::run<x8s2_avx2::S, int8_t>(pr);
  else
    x8s2_avx2::run<x8s2_avx2::S, uint8_t>(pr);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
