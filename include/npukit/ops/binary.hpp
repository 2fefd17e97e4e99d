// fp32 element-wise binary operators with numpy / ONNX multidirectional
// broadcasting (ONNX Add, Mul).
#pragma once

#include <cstdint>

#include "npukit/tensor.hpp"

namespace npukit {

enum class BinaryOp : uint8_t { add, mul };

const char* binary_op_name(BinaryOp op);

// The broadcast shape of a and b (ranks up to 8): axes are aligned from the
// right and each pair must be equal or contain a 1.
Shape broadcast_shape(const Shape& a, const Shape& b, const char* function = "npukit::binary");

// y = a op b, element by element, after broadcasting; y has broadcast_shape(a, b).
void binary(BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& y);
inline void add(const TensorView& a, const TensorView& b, const TensorView& y) {
  binary(BinaryOp::add, a, b, y);
}
inline void mul(const TensorView& a, const TensorView& b, const TensorView& y) {
  binary(BinaryOp::mul, a, b, y);
}

// A view of t with the shape `shape` (t broadcast to it): size-1 axes and
// missing leading axes get stride 0. t's shape must broadcast to `shape`.
TensorView broadcast_view(const TensorView& t, const Shape& shape, const char* function,
                          const char* parameter);

namespace ref {
// a and b already broadcast to y's 4-D shape (stride 0 on broadcast axes).
void binary_f32(BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& y);
}  // namespace ref

}  // namespace npukit
