#include "npukit/ops/broadcast_binary.hpp"

#include "npukit/error.hpp"
#include "npukit/ops/binary.hpp"

namespace npukit {

const char* broadcast_op_name(BroadcastOp op) {
  static const char* names[] = {"sub", "div", "pow", "min", "max"};
  const auto i = static_cast<size_t>(op);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "invalid";
}

namespace {
TensorView as_4d(const TensorView& t) {
  Shape sh(4 - t.rank(), 1), st(4 - t.rank(), 0);
  sh.insert(sh.end(), t.shape().begin(), t.shape().end());
  st.insert(st.end(), t.strides().begin(), t.strides().end());
  return TensorView(t.raw(), t.dtype(), sh, st);
}
}  // namespace

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
  ref::broadcast_binary_f32(op, as_4d(broadcast_view(a, out, fn, "a")),
                            as_4d(broadcast_view(b, out, fn, "b")), as_4d(y), b.numel() == 1);
}

}  // namespace npukit
