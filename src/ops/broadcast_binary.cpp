#include "npukit/ops/broadcast_binary.hpp"

#include "npukit/error.hpp"
#include "npukit/ops/binary.hpp"
#include "ops/elementwise_blocks.hpp"

namespace npukit {

const char* broadcast_op_name(BroadcastOp op) {
  static const char* names[] = {"sub", "div", "pow", "min", "max"};
  const auto i = static_cast<size_t>(op);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "invalid";
}

void broadcast_binary(BroadcastOp op, const TensorView& a, const TensorView& b,
                      const TensorView& y) {
  constexpr const char* fn = "npukit::broadcast_binary";
  check(static_cast<size_t>(op) <= static_cast<size_t>(BroadcastOp::max), fn, "op",
        std::to_string(static_cast<int>(op)), "a BroadcastOp value");
  a.expect_dtype(DType::f32, fn, "a.dtype");
  b.expect_dtype(DType::f32, fn, "b.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  const Shape out = broadcast_shape(a.shape(), b.shape(), fn);
  y.expect_shape(out, fn, "y");
  const bool scalar_b = b.numel() == 1;
  for_each_4d_block({broadcast_view(a, out, fn, "a"), broadcast_view(b, out, fn, "b"), y},
                    [op, scalar_b](const std::vector<TensorView>& v) {
                      ref::broadcast_binary_f32(op, v[0], v[1], v[2], scalar_b);
                    });
}

}  // namespace npukit
