// fp32 element-wise unary operators of ONNX (activations and math functions),
// each with the arithmetic ONNX Runtime 1.30's CPU kernels use where npukit
// models it (see docs/semantics.md, "ONNX float operators").
#pragma once

#include <cstdint>

#include "npukit/tensor.hpp"

namespace npukit {

enum class UnaryOp : uint8_t {
  sigmoid,       // 1 / (1 + exp(-x))
  hard_sigmoid,  // max(0, min(1, alpha*x + beta)): product and sum rounded apart
  hard_swish,    // x * hard_sigmoid(x) with alpha 1/6, beta 0.5 (ORT's function body)
  tanh,
  leaky_relu,  // x >= 0 ? x : alpha*x
  erf,
  gelu,       // 0.5 * x * (1 + erf(x * sqrt(1/2))), rounded step by step
  gelu_tanh,  // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
  sqrt,
  exp,
  log,
  neg,
  abs,
  reciprocal,
};

const char* unary_op_name(UnaryOp op);

struct UnaryParams {
  float alpha = 0.0f;  // hard_sigmoid, leaky_relu
  float beta = 0.0f;   // hard_sigmoid
};

// y = op(x) element by element; x and y of one shape (rank 0 to 8, any
// strides; y may be x).
void unary(UnaryOp op, const TensorView& x, const TensorView& y, const UnaryParams& p = {});

namespace ref {
// The scalar definitions (the specification every kernel reproduces).
float unary_scalar(UnaryOp op, float x, const UnaryParams& p);
void unary_f32(UnaryOp op, const TensorView& x, const TensorView& y, const UnaryParams& p);
}  // namespace ref

}  // namespace npukit
