// AVX2 f32 global max over NCHW planes (f32-globalpool.hpp): the lane shim of
// f32-globalmax-nchw-body.inc, 8 planes per pass.
#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <limits>

#include "f32-globalpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {
namespace {

#if !defined(__clang__)
// The tree run once on constant plane numbers (GfOrder) lets GCC 12 see the
// undefined source operand inside its unmasked intrinsics: a false positive,
// as the begin.inc says for -Wmaybe-uninitialized (popped at isa-end).
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
struct GfVec {
  using F = __m256;
  static constexpr int64_t kLanes = 8;
  static constexpr int kDepth = 3;
  static F loadu(const float* p) { return _mm256_loadu_ps(p); }
  static F load_first(const float* p, int64_t n) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane);
    const F v = _mm256_maskload_ps(p, m);  // masked lanes are not read
    return _mm256_blendv_ps(_mm256_set1_ps(-std::numeric_limits<float>::infinity()), v,
                            _mm256_castsi256_ps(m));
  }
  using Mask = __m256;  // all-ones lanes
  static Mask make_mask(uint32_t bits) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i b = _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits)), bit);
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(b, bit));
  }
  static F load_masked(const float* p, Mask m) {  // p's vector is inside the tensor
    return _mm256_blendv_ps(_mm256_set1_ps(-std::numeric_limits<float>::infinity()),
                            _mm256_loadu_ps(p), m);
  }
  static F max_masked(F a, F b, Mask m) { return _mm256_blendv_ps(a, _mm256_max_ps(a, b), m); }
  static F set1(float v) { return _mm256_set1_ps(v); }
  static F max(F a, F b) { return _mm256_max_ps(a, b); }
  static uint32_t nan_bits(F a, F b) {
    return static_cast<uint32_t>(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_UNORD_Q)));
  }
  template <int Level>
  static void merge_parts(F a, F b, F& lo, F& hi) {
    if constexpr (Level == 0) {  // 128-bit halves
      lo = _mm256_permute2f128_ps(a, b, 0x20);
      hi = _mm256_permute2f128_ps(a, b, 0x31);
    } else if constexpr (Level == 1) {  // 64-bit halves of each 128-bit half
      lo = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(a), _mm256_castps_pd(b)));
      hi = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(a), _mm256_castps_pd(b)));
    } else {  // even / odd floats
      lo = _mm256_shuffle_ps(a, b, 0x88);
      hi = _mm256_shuffle_ps(a, b, 0xdd);
    }
  }
  static uint32_t order_bits(F v, bool flush) {
    if (flush) {
      const F abs = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
      return static_cast<uint32_t>(
          _mm256_movemask_ps(_mm256_cmp_ps(abs, _mm256_set1_ps(FLT_MIN), _CMP_LT_OQ)));
    }
    return static_cast<uint32_t>(
        _mm256_movemask_ps(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_EQ_OQ)));
  }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
};

}  // namespace
}  // namespace npukit::cpu

#include "ops/cpu/f32-globalmax-nchw-body.inc"

namespace npukit::cpu {

void f32_global_max_avx2(const F32GlobalPlanes& b, const F32GlobalMaxRule& r, float* out,
                         uint32_t* redo) {
  gf_planes(b, r, out, redo);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
