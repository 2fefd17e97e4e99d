// AVX-512 NHWC s8/u8 max pooling (x8-maxpool2d-nhwc.hpp): 64 channels per
// register; the last partial register is a zero-masked load OR-ed with the
// lowest value in its other lanes.
#include <cstdint>

#include "x8-maxpool2d-nhwc.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

// Every header the driver (.inc) uses, before the target region opens (clang
// would apply the target attribute to their declarations).
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "npukit/parallel.hpp"

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {
namespace x8nhwc_avx512 {
namespace {

struct S {
  static constexpr int64_t VB = 64;
  using B = __m512i;
  struct Part {
    __mmask64 valid;
    __m512i fill;  // the lowest value outside the valid lanes
  };
  static B set1(uint8_t v) { return _mm512_set1_epi8(static_cast<char>(v)); }
  template <class T>
  static B max(B a, B b) {
    return std::is_signed_v<T> ? _mm512_max_epi8(a, b) : _mm512_max_epu8(a, b);
  }
  static B load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  static Part part(int64_t n, uint8_t lowest) {
    const __mmask64 m = n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
    return {m, _mm512_maskz_mov_epi8(~m, set1(lowest))};
  }
  static B load_part(const uint8_t* p, const Part& part, const uint8_t*, const uint8_t*) {
    return _mm512_or_si512(_mm512_maskz_loadu_epi8(part.valid, p), part.fill);
  }
  static void store(uint8_t* p, B v) { _mm512_storeu_si512(p, v); }
  static void store_part(uint8_t* p, B v, int64_t n) {
    _mm512_mask_storeu_epi8(p, (uint64_t{1} << n) - 1, v);
  }
};

}  // namespace
}  // namespace x8nhwc_avx512
}  // namespace npukit::cpu

#define NPUKIT_X8NHWC_NS x8nhwc_avx512
#include "x8-maxpool2d-nhwc.inc"

namespace npukit::cpu {

void max_pool2d_x8_nhwc_avx512(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::s8)
    x8nhwc_avx512::run<x8nhwc_avx512::S, int8_t>(pr);
  else
    x8nhwc_avx512::run<x8nhwc_avx512::S, uint8_t>(pr);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
