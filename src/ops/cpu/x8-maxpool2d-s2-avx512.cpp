// AVX-512 stride-2 s8/u8 max pooling of NCHW rows (x8-maxpool2d-s2.hpp):
// 32 outputs per register; edge loads are zero-masked (no fault, and faster
// than merge-masking on AMD) and OR-ed with their fill.
#include <cstdint>

#include "x8-maxpool2d-s2.hpp"

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
namespace x8s2_avx512 {
namespace {

struct S {
  static constexpr int64_t VB = 64;
  using B = __m512i;
  struct Edge {  // plain bytes: chunks live in a std::vector built outside this target
    __mmask64 valid;
    alignas(64) uint8_t fill[64];  // 0 in the valid lanes
  };
  static B set1(uint8_t v) { return _mm512_set1_epi8(static_cast<char>(v)); }
  template <class T>
  static B max(B a, B b) {
    return std::is_signed_v<T> ? _mm512_max_epi8(a, b) : _mm512_max_epu8(a, b);
  }
  template <class T>
  static B fold(B v) {
    return max<T>(v, _mm512_srli_epi16(v, 8));
  }
  static void store_out(uint8_t* p, B v, int64_t n) {
    const __m256i bytes = _mm512_cvtepi16_epi8(v);
    if (n == 32)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), bytes);
    else
      _mm256_mask_storeu_epi8(p, static_cast<__mmask32>((uint64_t{1} << n) - 1), bytes);
  }
  static __mmask64 range(int64_t lo, int64_t hi) {
    const uint64_t below_hi = hi >= 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
    const uint64_t below_lo = lo >= 64 ? ~uint64_t{0} : (uint64_t{1} << lo) - 1;
    return hi > lo ? below_hi & ~below_lo : 0;
  }
  static Edge make_edge(int64_t valid_lo, int64_t valid_hi, int64_t pad_lo, int64_t pad_hi,
                        uint8_t pad, uint8_t lowest) {
    Edge e;
    e.valid = range(valid_lo, valid_hi);
    const __mmask64 padded = range(pad_lo, pad_hi) & ~e.valid;
    const __m512i fill = _mm512_mask_blend_epi8(padded, set1(lowest), set1(pad));
    _mm512_store_si512(e.fill, _mm512_maskz_mov_epi8(~e.valid, fill));
    return e;
  }
  static B load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  struct Fill {
    __mmask64 valid;
    __m512i fill;
  };
  static Fill fill_of(const Edge& e) { return {e.valid, _mm512_load_si512(e.fill)}; }
  static B load_edge(const uint8_t* p, const Fill& f, const uint8_t*, const uint8_t*) {
    return _mm512_or_si512(_mm512_maskz_loadu_epi8(f.valid, p), f.fill);
  }
};

}  // namespace
}  // namespace x8s2_avx512
}  // namespace npukit::cpu

#define NPUKIT_X8S2_NS x8s2_avx512
#include "x8-maxpool2d-s2.inc"

namespace npukit::cpu {

void max_pool2d_x8_s2_avx512(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::s8)
    x8s2_avx512::run<x8s2_avx512::S, int8_t>(pr);
  else
    x8s2_avx512::run<x8s2_avx512::S, uint8_t>(pr);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
