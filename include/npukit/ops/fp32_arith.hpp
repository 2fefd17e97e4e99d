// fp32 element-wise binary and unary arithmetic of the NPU faces (the BDC's fp32 unary/binary
// families): y = a op b, with b broadcast by stride-0 views for constants.
#pragma once

#include "npukit/ops/elementwise.hpp"
#include "npukit/tensor.hpp"

namespace npukit {

enum class ArithOp : uint8_t {
  add,
  sub,
  mul,
  div,
  max,  // a > b ? a : b (strict: a NaN a gives b)
  min,  // a < b ? a : b
  mac,  // y + a*b, two roundings (the old y is the accumulator)
};
enum class ArithUnaryOp : uint8_t { neg, reciprocal, sqrt, rsqrt, exp, sigmoid, tanh };

const char* arith_op_name(ArithOp op);

// a, b, y: 4-D f32 of one shape (any strides; stride 0 broadcasts).
// ElementwiseParams::flush_denormals applies to operands and results.
void arith_binary(ArithOp op, const TensorView& a, const TensorView& b, const TensorView& y,
                  const ElementwiseParams& p = {});
// Correctly rounded where the C library is (neg, reciprocal, sqrt); rsqrt is
// 1/sqrt (two roundings); exp, sigmoid, tanh use the C library functions.
void arith_unary(ArithUnaryOp op, const TensorView& x, const TensorView& y,
                 const ElementwiseParams& p = {});

}  // namespace npukit
