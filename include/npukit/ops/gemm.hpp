// fp32 general matrix multiplication, ONNX Gemm:
//   y = alpha * op(a) op(b) + beta * c,   op(t) = t or t transposed,
// with c broadcast (unidirectionally) to (M, N).
#pragma once

#include "npukit/tensor.hpp"

namespace npukit {

struct GemmParams {
  float alpha = 1.0f;
  float beta = 1.0f;
  bool trans_a = false;
  bool trans_b = false;
  // 0: each output's products added in k order, then alpha * sum + beta * c
  // (ref::gemm_f32). Else ONNX Runtime's MLAS SGEMM with a packed (constant)
  // b: y starts as beta * c (nothing without c), then per block of
  // mlas_k_block steps of k an FMA chain from +0 is added to it (y = chain +
  // y; the first chain is y itself without c). Needs alpha = 1. ORT 1.30
  // uses 256 (checked on resnet18's fc layer: 0 of 1,000 logits differ).
  int64_t mlas_k_block = 0;
};

// a (M, K) or (K, M) when trans_a, b (K, N) or (N, K) when trans_b -> (M, N).
Shape gemm_output_shape(const Shape& a, const Shape& b, const GemmParams& p);
// c may be empty (no bias); otherwise of rank 0 to 2, broadcastable to (M, N).
void gemm(const TensorView& a, const TensorView& b, const TensorView& c, const TensorView& y,
          const GemmParams& p = {});

namespace ref {
// a, b already transposed as views; c broadcast to (M, N) or empty. Sums over
// k in order, then alpha * sum + beta * c.
void gemm_f32(const TensorView& a, const TensorView& b, const TensorView& c, const TensorView& y,
              float alpha, float beta);
// GemmParams::mlas_k_block's order (alpha = 1).
void gemm_f32_mlas(const TensorView& a, const TensorView& b, const TensorView& c,
                   const TensorView& y, float beta, int64_t k_block);
}  // namespace ref

}  // namespace npukit
