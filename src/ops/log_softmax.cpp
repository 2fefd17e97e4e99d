#include "npukit/ops/log_softmax.hpp"

#include "npukit/error.hpp"

namespace npukit {

void log_softmax(const TensorView& x, const TensorView& y, int64_t axis) {
  constexpr const char* fn = "npukit::log_softmax";
  x.expect_dtype(DType::f32, fn, "x.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  y.expect_shape(x.shape(), fn, "y");
  check(x.rank() >= 1, fn, "x", "a scalar", "rank 1 to 4");
  check_range(fn, "axis", axis, -x.rank(), x.rank() - 1);
  ref::log_softmax_f32(x, y, static_cast<int>(axis < 0 ? axis + x.rank() : axis));
}

}  // namespace npukit
