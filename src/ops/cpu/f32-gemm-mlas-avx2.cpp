// f32-gemm-mlas-avx2: GemmParams::mlas_k_block's order, 8 columns per vector
// (body: f32-gemm-mlas.inc).
#include <immintrin.h>

#include <algorithm>

#include "gemm_fast.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {

namespace {

struct Lanes {
  using Vec = __m256;
  static constexpr int64_t kLanes = 8;
  // All-ones in lanes [0, n).
  static __m256i mask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec set1(float x) { return _mm256_set1_ps(x); }
  static Vec load_n(const float* p, int64_t n) { return _mm256_maskload_ps(p, mask(n)); }
  // VMASKMOVPS stores cost ~12 cycles on Zen 2/3: whole vectors store plainly.
  static void store_n(float* p, Vec v, int64_t n) {
    if (n == kLanes)
      _mm256_storeu_ps(p, v);
    else
      _mm256_maskstore_ps(p, mask(n), v);
  }
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
};

#include "ops/cpu/f32-gemm-mlas.inc"

}  // namespace

void f32_gemm_mlas_avx2(const GemmProblem& p, int64_t n0, int64_t cols) {
  gemm_mlas_columns(p, n0, cols);
}
void f32_gemm_mlas_rows_avx2(const GemmProblem& p, int64_t n0, int64_t cols) {
  gemm_mlas_rows(p, n0, cols);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
