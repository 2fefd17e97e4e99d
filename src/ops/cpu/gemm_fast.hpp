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
};

// Columns [n0, n0 + cols) of y for every row, from the packed b block
// (packed[k * lanes + l] = b(k, n0 + l)); cols <= lanes.
void f32_gemm_block_avx512(const GemmProblem& p, const float* packed, int64_t n0, int64_t cols);
void f32_gemm_block_avx2(const GemmProblem& p, const float* packed, int64_t n0, int64_t cols);

// f32-gemm-{avx512, avx2}, then the reference.
const KernelList<GemmProblem>& gemm_kernels();

}  // namespace npukit::cpu
