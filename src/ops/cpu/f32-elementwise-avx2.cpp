// Element-wise kernels for AVX2: 8 lanes, the last partial vector in scalar
// code with the same operations. Selects use ordered compares, so NaN takes
// the same branch as in the reference.
#include <immintrin.h>

#include "elementwise_fast.hpp"

#define NPUKIT_AVX2 __attribute__((target("avx2")))

namespace npukit::cpu {

NPUKIT_AVX2 void f32_elementwise_avx2(const EwProblem& p, const EwArrays& r) {
  const float* a = r.a;
  const float* b = r.b;
  float* y = r.y;
  const int64_t n = r.n, full = n / 8 * 8;
  const __m256 zero = _mm256_setzero_ps();
  switch (p.op) {
    case EwOp::relu: {
      const bool nan_zero = p.relu.relu_nan == ReluNaN::zero, add = p.relu.result_add;
      for (int64_t i = 0; i < full; i += 8) {
        const __m256 v = _mm256_loadu_ps(a + i);
        // zero: v > 0 ? v : +0; propagate: v < 0 ? +0 : v.
        const __m256 q = nan_zero ? _mm256_and_ps(_mm256_cmp_ps(v, zero, _CMP_GT_OQ), v)
                                  : _mm256_blendv_ps(v, zero, _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
        _mm256_storeu_ps(y + i, add ? _mm256_add_ps(_mm256_loadu_ps(y + i), q) : q);
      }
      break;
    }
    case EwOp::clip: {
      const __m256 lo = _mm256_set1_ps(p.clip.min), hi = _mm256_set1_ps(p.clip.max);
      for (int64_t i = 0; i < full; i += 8) {
        __m256 v = _mm256_loadu_ps(a + i);
        v = _mm256_blendv_ps(v, lo, _mm256_cmp_ps(v, lo, _CMP_LT_OQ));
        v = _mm256_blendv_ps(v, hi, _mm256_cmp_ps(v, hi, _CMP_GT_OQ));
        _mm256_storeu_ps(y + i, v);
      }
      break;
    }
    case EwOp::add:
    case EwOp::mul: {
      const bool is_add = p.op == EwOp::add;
      for (int64_t i = 0; i < full; i += 8) {
        const __m256 u = _mm256_loadu_ps(a + i), v = _mm256_loadu_ps(b + i);
        _mm256_storeu_ps(y + i, is_add ? _mm256_add_ps(u, v) : _mm256_mul_ps(u, v));
      }
      break;
    }
  }
  if (full < n) f32_elementwise_portable(p, {a + full, b ? b + full : nullptr, y + full, n - full});
}

}  // namespace npukit::cpu
