// Element-wise kernels for AVX-512: 16 lanes, a masked last vector. Selects
// use ordered compares, so NaN takes the same branch as in the reference.
#include <immintrin.h>

#include "elementwise_fast.hpp"

#define NPUKIT_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

namespace npukit::cpu {

namespace {

// Lanes of the vector at i that are below n.
NPUKIT_AVX512 inline __mmask16 lanes(int64_t i, int64_t n) {
  return n - i >= 16 ? static_cast<__mmask16>(0xffff)
                     : static_cast<__mmask16>((1u << (n - i)) - 1u);
}

}  // namespace

NPUKIT_AVX512 void f32_elementwise_avx512(const EwProblem& p, const EwArrays& r) {
  const float* a = r.a;
  const float* b = r.b;
  float* y = r.y;
  const int64_t n = r.n;
  const __m512 zero = _mm512_setzero_ps();
  switch (p.op) {
    case EwOp::relu: {
      const bool nan_zero = p.relu.relu_nan == ReluNaN::zero, add = p.relu.result_add;
      for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = lanes(i, n);
        const __m512 v = _mm512_maskz_loadu_ps(m, a + i);
        // zero: v > 0 ? v : +0; propagate: v < 0 ? +0 : v.
        const __m512 q = nan_zero
                             ? _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, zero, _CMP_GT_OQ), v)
                             : _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), zero);
        const __m512 out = add ? _mm512_add_ps(_mm512_maskz_loadu_ps(m, y + i), q) : q;
        _mm512_mask_storeu_ps(y + i, m, out);
      }
      return;
    }
    case EwOp::clip: {
      const __m512 lo = _mm512_set1_ps(p.clip.min), hi = _mm512_set1_ps(p.clip.max);
      for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = lanes(i, n);
        __m512 v = _mm512_maskz_loadu_ps(m, a + i);
        v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), lo);
        v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), hi);
        _mm512_mask_storeu_ps(y + i, m, v);
      }
      return;
    }
    case EwOp::add:
    case EwOp::mul: {
      const bool is_add = p.op == EwOp::add;
      for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = lanes(i, n);
        const __m512 u = _mm512_maskz_loadu_ps(m, a + i), v = _mm512_maskz_loadu_ps(m, b + i);
        _mm512_mask_storeu_ps(y + i, m, is_add ? _mm512_add_ps(u, v) : _mm512_mul_ps(u, v));
      }
      return;
    }
  }
}

}  // namespace npukit::cpu
