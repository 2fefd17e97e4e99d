// Unary kernels for AVX2 + FMA: 8 lanes, the same operations as the scalar
// models in src/ops/reference (each std::fma one vfmadd). Max/min are
// compare + blend so that NaN takes the reference's branch.
#include <immintrin.h>

#include "ops/cpu/unary_kernels.hpp"

#define NPUKIT_AVX2 __attribute__((target("avx2,fma")))

namespace npukit::cpu {

namespace {

// a > b ? a : b and a < b ? a : b, ordered (NaN gives b).
NPUKIT_AVX2 inline __m256 vmax(__m256 a, __m256 b) {
  return _mm256_blendv_ps(b, a, _mm256_cmp_ps(a, b, _CMP_GT_OQ));
}
NPUKIT_AVX2 inline __m256 vmin(__m256 a, __m256 b) {
  return _mm256_blendv_ps(b, a, _mm256_cmp_ps(a, b, _CMP_LT_OQ));
}
NPUKIT_AVX2 inline __m256 c(float v) {
  return _mm256_set1_ps(v);
}

NPUKIT_AVX2 __m256 logistic8(__m256 x) {
  const __m256 v = vmin(c(18.0f), vmax(c(-18.0f), x));
  const __m256 x2 = _mm256_mul_ps(v, v);
  __m256 p = _mm256_fmadd_ps(x2, c(4.37031012579801e-11f), c(1.15627324459942e-07f));
  p = _mm256_fmadd_ps(x2, p, c(6.08574864600143e-05f));
  p = _mm256_fmadd_ps(x2, p, c(8.51377133304701e-03f));
  p = _mm256_fmadd_ps(x2, p, c(2.48287947061529e-01f));
  __m256 q = _mm256_fmadd_ps(x2, c(6.10247389755681e-13f), c(5.76102136993427e-09f));
  q = _mm256_fmadd_ps(x2, q, c(6.29106785017040e-06f));
  q = _mm256_fmadd_ps(x2, q, c(1.70198817374094e-03f));
  q = _mm256_fmadd_ps(x2, q, c(1.16817656904453e-01f));
  q = _mm256_fmadd_ps(x2, q, c(9.93151921023180e-01f));
  p = _mm256_mul_ps(v, p);
  return vmax(_mm256_setzero_ps(), _mm256_add_ps(_mm256_div_ps(p, q), c(0.5f)));
}

NPUKIT_AVX2 __m256 tanh8(__m256 x) {
  const __m256 v = vmin(c(9.0f), vmax(c(-9.0f), x));
  const __m256 x2 = _mm256_mul_ps(v, v);
  __m256 p = _mm256_fmadd_ps(x2, c(-2.76076847742355e-16f), c(2.00018790482477e-13f));
  p = _mm256_fmadd_ps(x2, p, c(-8.60467152213735e-11f));
  p = _mm256_fmadd_ps(x2, p, c(5.12229709037114e-08f));
  p = _mm256_fmadd_ps(x2, p, c(1.48572235717979e-05f));
  p = _mm256_fmadd_ps(x2, p, c(6.37261928875436e-04f));
  p = _mm256_fmadd_ps(x2, p, c(4.89352455891786e-03f));
  __m256 q = _mm256_fmadd_ps(x2, c(1.19825839466702e-06f), c(1.18534705686654e-04f));
  q = _mm256_fmadd_ps(x2, q, c(2.26843463243900e-03f));
  q = _mm256_fmadd_ps(x2, q, c(4.89352518554385e-03f));
  return _mm256_div_ps(_mm256_mul_ps(v, p), q);
}

// min(1, .) then max(0, .) of a*x + b, product and sum rounded apart.
NPUKIT_AVX2 __m256 hard_sigmoid8(__m256 x, __m256 a, __m256 b) {
  const __m256 v = _mm256_add_ps(_mm256_mul_ps(a, x), b);
  return vmax(_mm256_setzero_ps(), vmin(c(1.0f), v));
}

}  // namespace

NPUKIT_AVX2 void f32_unary_avx2(UnaryOp op, const UnaryParams& p, const float* x, float* y,
                                int64_t n) {
  const int64_t full = n / 8 * 8;
  const __m256 alpha = c(p.alpha), beta = c(p.beta);
  for (int64_t i = 0; i < full; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    __m256 r;
    switch (op) {
      case UnaryOp::sigmoid:
        r = logistic8(v);
        break;
      case UnaryOp::tanh:
        r = tanh8(v);
        break;
      case UnaryOp::hard_sigmoid:
        r = hard_sigmoid8(v, alpha, beta);
        break;
      default:  // hard_swish
        r = _mm256_mul_ps(v, hard_sigmoid8(v, c(1.0f / 6.0f), c(0.5f)));
        break;
    }
    _mm256_storeu_ps(y + i, r);
  }
  for (int64_t i = full; i < n; ++i) y[i] = ref::unary_scalar(op, x[i], p);
}

}  // namespace npukit::cpu
