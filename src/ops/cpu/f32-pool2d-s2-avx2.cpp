// AVX2 lanes of the stride-2 fp32 kernel (f32-pool2d-s2.hpp): 8 outputs per
// vector; even/odd taps by vshufps alone (the sums run with the outputs in
// vshufps's order, put in order by one 64-bit lane permute per store), tap 2
// as the odd taps of the loads one element further on.
#include "f32-pool2d-s2.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "npukit/parallel.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {
namespace f32s2_avx2 {
namespace {

struct S {
  static constexpr int V = 8;
  using F = __m256;
  using M = __m256i;
  static F zero() { return _mm256_setzero_ps(); }
  static F set1(float v) { return _mm256_set1_ps(v); }
  static F loadu(const float* p) { return _mm256_loadu_ps(p); }
  static F load_skip0(const float* p) {
    return _mm256_maskload_ps(p, _mm256_setr_epi32(0, -1, -1, -1, -1, -1, -1, -1));
  }
  // Kernel order [a0 a2 b0 b2 | a4 a6 b4 b6]: outputs 0 1 4 5 | 2 3 6 7. Every
  // tap comes out in this order, so the sums run in it and one lane-crossing
  // permute per stored vector (output_order) replaces one per tap.
  static F even(F a, F b) { return _mm256_shuffle_ps(a, b, 0x88); }
  static F odd(F a, F b) { return _mm256_shuffle_ps(a, b, 0xdd); }
  static F output_order(F v) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xd8));
  }
  // s, then the outputs of v moved up by one, in kernel order: output j's
  // lane takes output j - 1's (lanes 0 1 2 3 4 5 6 7 hold outputs
  // 0 1 4 5 2 3 6 7).
  static constexpr bool kShiftIn = true;
  static F shift_in(F v, float s) {
    const F m = _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(0, 0, 5, 2, 1, 4, 3, 6));
    return _mm256_blend_ps(m, _mm256_set1_ps(s), 1);
  }
  static F tap2(F, const float* r) { return odd(loadu(r + 1), loadu(r + V + 1)); }
  // MAXPS returns its second operand unless the first is greater: a > b ? a : b.
  static F max(F a, F b) { return _mm256_max_ps(a, b); }
  static F nan_to(F m, F v) { return _mm256_blendv_ps(m, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)); }
  // Inline asm: GCC treats _mm256_add_ps as commutative and may swap the
  // operands, which decides which NaN a NaN + NaN returns.
  static F add(F a, F b) {
    F r;
    asm("vaddps %2, %1, %0" : "=x"(r) : "x"(a), "x"(b));
    return r;
  }
  static F div(F a, F b) { return _mm256_div_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static M lane_mask(uint32_t bits) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits)), bit),
                              bit);
  }
  static F select(M m, F a, F b) { return _mm256_blendv_ps(b, a, _mm256_castsi256_ps(m)); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static float first(F v) { return _mm256_cvtss_f32(v); }
};

}  // namespace
}  // namespace f32s2_avx2
}  // namespace npukit::cpu

#define NPUKIT_F32S2_NS f32s2_avx2
#include "f32-pool2d-s2.inc"

namespace npukit::cpu {

void pool2d_f32_s2_avx2(const Pool2dProblem& pr) {
  f32s2_avx2::run(pr);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
