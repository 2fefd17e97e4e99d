// The fp32 Gemm family: y = alpha * (a b) + beta * c with each output's
// products added in k order (one rounded product, one rounded addition), then
// alpha * acc and + beta * c rounded separately, as ref::gemm_f32. Lanes hold
// consecutive output columns; a block of columns of b is first copied into a
// k-major buffer so that one load gives the 16 (or 8) weights of step k.
#pragma once

#include "npukit/ops/gemm.hpp"
#include "ops/kernel_list.hpp"

namespace npukit::cpu {

struct GemmProblem {
  TensorView a, b, c, y;  // a (M, K), b (K, N) after transposition, c broadcast to (M, N) or empty
  float alpha = 1.0f, beta = 1.0f;
  int64_t mlas_k_block = 0;  // GemmParams::mlas_k_block (alpha is then 1)
};

// Columns [n0, n0 + cols) of y for every row, from a block of b whose step k
// holds the lanes' weights at packed + k * pitch (packed[k * pitch + l] =
// b(k, n0 + l)); cols <= lanes, every lane of a step readable. pitch is the
// lanes for a packed copy, or b's row stride when b is read in place.
void f32_gemm_block_avx512(const GemmProblem& p, const float* packed, int64_t pitch, int64_t n0,
                           int64_t cols);
void f32_gemm_block_avx2(const GemmProblem& p, const float* packed, int64_t pitch, int64_t n0,
                         int64_t cols);

// Columns [n0, n0 + kGemmWideColumns) of y, every row, reading b (rows
// contiguous, stride(1) == 1) in place; n0 + kGemmWideColumns <= N.
inline constexpr int64_t kGemmWideColumns = 128;
void f32_gemm_wide_avx512(const GemmProblem& p, int64_t n0);

// mlas_k_block's order (f32-gemm-mlas-*): columns [n0, n0 + 4 vectors) of
// every row, b's rows contiguous (stride(1) == 1), cols valid of them.
inline constexpr int64_t kGemmMlasVectors = 4;
void f32_gemm_mlas_avx512(const GemmProblem& p, int64_t n0, int64_t cols);
void f32_gemm_mlas_avx2(const GemmProblem& p, int64_t n0, int64_t cols);
// The same with b's rows streamed (f32-gemm-mlas.inc, gemm_mlas_rows):
// cols <= kGemmMlasRowColumns.
inline constexpr int64_t kGemmMlasRowColumns = 1024;
void f32_gemm_mlas_rows_avx512(const GemmProblem& p, int64_t n0, int64_t cols);
void f32_gemm_mlas_rows_avx2(const GemmProblem& p, int64_t n0, int64_t cols);

// f32-gemm-{avx512, avx2}, f32-gemm-mlas-{avx512, avx2}, then the reference.
const KernelList<GemmProblem>& gemm_kernels();

}  // namespace npukit::cpu
