// AVX-512 (BW) s8/u8 max pooling, several planes per pass
// (x8-maxpool2d-same.hpp): 64 lanes, one 64-bit mask word per vector.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "npukit/parallel.hpp"
#include "x8-maxpool2d-same.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {
namespace {

struct Vec {
  using V = __m512i;
  using M = __mmask64;
  static constexpr int64_t kLanes = 64;
  static V load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  static void store(uint8_t* p, V v) { _mm512_storeu_si512(p, v); }
  static void store_part(uint8_t* p, V v, int64_t n) {
    _mm512_mask_storeu_epi8(p, (uint64_t{1} << n) - 1, v);
  }
  static V zero() { return _mm512_setzero_si512(); }
  template <class T>
  static V max_masked(V a, M m, V b) {
    return std::is_signed_v<T> ? _mm512_mask_max_epi8(a, m, a, b)
                               : _mm512_mask_max_epu8(a, m, a, b);
  }
  static std::vector<M> masks(const X8SamePlan& pl) { return {pl.bits.begin(), pl.bits.end()}; }
};

}  // namespace
}  // namespace npukit::cpu

#include "ops/cpu/x8-maxpool2d-same.inc"

namespace npukit::cpu {

void max_pool2d_x8_same_avx512(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::s8)
    run<int8_t>(pr);
  else
    run<uint8_t>(pr);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
