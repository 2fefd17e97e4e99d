// AVX-512 f32 global max over NCHW planes (f32-globalpool.hpp): the lane shim
// of f32-globalmax-nchw-body.inc, 16 planes per pass.
#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <limits>

#include "f32-globalpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {
namespace {

struct GfVec {
  using F = __m512;
  static constexpr int64_t kLanes = 16;
  static constexpr int kDepth = 4;
  static F loadu(const float* p) { return _mm512_loadu_ps(p); }
  static F load_first(const float* p, int64_t n) {
    const __mmask16 m = static_cast<__mmask16>((1u << n) - 1);
    return _mm512_mask_loadu_ps(_mm512_set1_ps(-std::numeric_limits<float>::infinity()), m, p);
  }
  using Mask = __mmask16;
  static Mask make_mask(uint32_t bits) { return static_cast<__mmask16>(bits); }
  static F load_masked(const float* p, Mask m) {
    return _mm512_mask_loadu_ps(_mm512_set1_ps(-std::numeric_limits<float>::infinity()), m, p);
  }
  static F max_masked(F a, F b, Mask m) { return _mm512_mask_max_ps(a, m, a, b); }
  static F set1(float v) { return _mm512_set1_ps(v); }
  static F max(F a, F b) { return _mm512_max_ps(a, b); }
  static constexpr int kNanChains = 4;
  static F nan_acc(F acc, F v) { return _mm512_fmadd_ps(v, _mm512_setzero_ps(), acc); }
  static uint32_t nan_bits(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }
  template <int Level>
  static void merge_parts(F a, F b, F& lo, F& hi) {
    if constexpr (Level == 0) {  // 256-bit halves
      lo = _mm512_shuffle_f32x4(a, b, 0x44);
      hi = _mm512_shuffle_f32x4(a, b, 0xee);
    } else if constexpr (Level == 1) {  // 128-bit blocks
      lo = _mm512_shuffle_f32x4(a, b, 0x88);
      hi = _mm512_shuffle_f32x4(a, b, 0xdd);
    } else if constexpr (Level == 2) {  // 64-bit halves of each block
      lo = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
      hi = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
    } else {  // even / odd floats
      lo = _mm512_shuffle_ps(a, b, 0x88);
      hi = _mm512_shuffle_ps(a, b, 0xdd);
    }
  }
  static uint32_t order_bits(F v, bool flush) {
    if (flush) return _mm512_cmp_ps_mask(_mm512_abs_ps(v), _mm512_set1_ps(FLT_MIN), _CMP_LT_OQ);
    return _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_EQ_OQ);
  }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
};

}  // namespace
}  // namespace npukit::cpu

#include "ops/cpu/f32-globalmax-nchw-body.inc"

namespace npukit::cpu {

void f32_global_max_avx512(const F32GlobalPlanes& b, const F32GlobalMaxRule& r, float* out,
                           uint32_t* redo) {
  gf_planes(b, r, out, redo);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
