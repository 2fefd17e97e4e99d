// AVX-512 lanes of the stride-2 fp32 kernel (f32-pool2d-s2.hpp): 16 outputs
// per vector; taps 0 and 1 by one vpermt2ps each from two loads, tap 2 by
// valignd of tap 0 with the next even element broadcast (measured on Zen 5:
// the loads, not the shuffles, bound this loop).
#include "f32-pool2d-s2.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "npukit/parallel.hpp"

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {
namespace f32s2_avx512 {
namespace {

struct S {
  static constexpr int V = 16;
  using F = __m512;
  using M = __mmask16;
  static F zero() { return _mm512_setzero_ps(); }
  static F set1(float v) { return _mm512_set1_ps(v); }
  static F loadu(const float* p) { return _mm512_loadu_ps(p); }
  static F load_skip0(const float* p) { return _mm512_maskz_loadu_ps(0xfffe, p); }
  static F even(F a, F b) {
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
  }
  static F odd(F a, F b) {
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b);
  }
  static F output_order(F v) { return v; }  // even/odd give the outputs in order
  // s, then lanes 0..14 of v.
  static constexpr bool kShiftIn = true;
  static F shift_in(F v, float s) {
    return _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(
        0xffff, _mm512_castps_si512(v), _mm512_castps_si512(_mm512_set1_ps(s)), 15));
  }
  // Lanes 1..15 of t0, then r[2V]. (maskz: GCC 12 warns on the unmasked form.)
  static F tap2(F t0, const float* r) {
    return _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(
        0xffff, _mm512_castps_si512(_mm512_set1_ps(r[2 * V])), _mm512_castps_si512(t0), 1));
  }
  // MAXPS returns its second operand unless the first is greater: a > b ? a : b.
  static F max(F a, F b) { return _mm512_maskz_max_ps(0xffff, a, b); }
  static F nan_to(F m, F v) {
    return _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
  }
  // Inline asm: GCC treats _mm512_add_ps as commutative and may swap the
  // operands, which decides which NaN a NaN + NaN returns.
  static F add(F a, F b) {
    F r;
    asm("vaddps %2, %1, %0" : "=v"(r) : "v"(a), "v"(b));
    return r;
  }
  static F div(F a, F b) { return _mm512_div_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static M lane_mask(uint32_t bits) { return static_cast<M>(bits); }
  static F select(M m, F a, F b) { return _mm512_mask_mov_ps(b, m, a); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static float first(F v) { return _mm512_cvtss_f32(v); }
};

}  // namespace
}  // namespace f32s2_avx512
}  // namespace npukit::cpu

#define NPUKIT_F32S2_NS f32s2_avx512
#include "f32-pool2d-s2.inc"

namespace npukit::cpu {

void pool2d_f32_s2_avx512(const Pool2dProblem& pr) {
  f32s2_avx512::run(pr);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
