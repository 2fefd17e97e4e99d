// AVX2 NHWC s8/u8 max pooling (x8-maxpool2d-nhwc.hpp): 32 channels per
// register; the last partial register is read whole when it lies inside x's
// data (other lanes then replaced by the lowest value), else from a copy.
#include <cstdint>
#include <cstring>

#include "x8-maxpool2d-nhwc.hpp"

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
namespace x8nhwc_avx2 {
namespace {

struct S {
  static constexpr int64_t VB = 32;
  using B = __m256i;
  struct Part {
    int64_t n;
    __m256i keep, fill;  // keep: 0xff in the valid lanes; fill: lowest elsewhere
  };
  static B set1(uint8_t v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  template <class T>
  static B max(B a, B b) {
    return std::is_signed_v<T> ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b);
  }
  static B load(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  static Part part(int64_t n, uint8_t lowest) {
    alignas(32) uint8_t keep[32], fill[32];
    for (int64_t j = 0; j < 32; ++j) {
      keep[j] = j < n ? 0xff : 0;
      fill[j] = j < n ? 0 : lowest;
    }
    return {n, load(keep), load(fill)};
  }
  static B load_part(const uint8_t* p, const Part& part, const uint8_t* x_begin,
                     const uint8_t* x_end) {
    B raw;
    if (p >= x_begin && p + 32 <= x_end) {
      raw = load(p);
    } else {
      alignas(32) uint8_t copy[32] = {};
      std::memcpy(copy, p, static_cast<size_t>(part.n));
      raw = load(copy);
    }
    return _mm256_or_si256(_mm256_and_si256(raw, part.keep), part.fill);
  }
  static void store(uint8_t* p, B v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static void store_part(uint8_t* p, B v, int64_t n) {
    alignas(32) uint8_t tmp[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), v);
    std::memcpy(p, tmp, static_cast<size_t>(n));
  }
};

}  // namespace
}  // namespace x8nhwc_avx2
}  // namespace npukit::cpu

#define NPUKIT_X8NHWC_NS x8nhwc_avx2
#include "x8-maxpool2d-nhwc.inc"

namespace npukit::cpu {

void max_pool2d_x8_nhwc_avx2(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::s8)
    x8nhwc_avx2::run<x8nhwc_avx2::S, int8_t>(pr);
  else
    x8nhwc_avx2::run<x8nhwc_avx2::S, uint8_t>(pr);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
