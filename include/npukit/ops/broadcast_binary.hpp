// fp32 binary operators of ONNX beyond Add and Mul (Sub, Div, Pow, Min, Max),
// with numpy / ONNX multidirectional broadcasting.
#pragma once

#include <cstdint>

#include "npukit/tensor.hpp"

namespace npukit {

enum class BroadcastOp : uint8_t {
  sub,
  div,
  pow,  // std::pow, except an exponent tensor of one element equal to 2 (x*x) or 3 (x*x*x)
  min,  // NaN in either operand gives NaN (ONNX Runtime 1.30, numpy.minimum)
  max,  // likewise
};

const char* broadcast_op_name(BroadcastOp op);

// y = a op b after broadcasting (shapes as npukit::broadcast_shape, ranks 0 to 8).
void broadcast_binary(BroadcastOp op, const TensorView& a, const TensorView& b,
                      const TensorView& y);

namespace ref {
float broadcast_scalar(BroadcastOp op, float a, float b, bool b_is_scalar);
// a, b already broadcast to y's 4-D shape (stride 0 on broadcast axes).
void broadcast_binary_f32(BroadcastOp op, const TensorView& a, const TensorView& b,
                          const TensorView& y, bool b_is_scalar);
}  // namespace ref

}  // namespace npukit
