// f32-gemm-mlas-avx512: GemmParams::mlas_k_block's order, 16 columns per
// vector (body: f32-gemm-mlas.inc).
#include <immintrin.h>

#include <algorithm>

#include "gemm_fast.hpp"

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {

namespace {

struct Lanes {
  using Vec = __m512;
  static constexpr int64_t kLanes = 16;
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec set1(float x) { return _mm512_set1_ps(x); }
  static __mmask16 mask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static Vec load_n(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static void store_n(float* p, Vec v, int64_t n) { _mm512_mask_storeu_ps(p, mask(n), v); }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
};

#include "ops/cpu/f32-gemm-mlas.inc"

}  // namespace

void f32_gemm_mlas_avx512(const GemmProblem& p, int64_t n0, int64_t cols) {
  gemm_mlas_columns(p, n0, cols);
}
void f32_gemm_mlas_rows_avx512(const GemmProblem& p, int64_t n0, int64_t cols) {
  gemm_mlas_rows(p, n0, cols);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
