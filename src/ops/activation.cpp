#include "npukit/ops/activation.hpp"

#include "npukit/error.hpp"
#include "ops/cpu/elementwise_fast.hpp"
#include "ops/elementwise_blocks.hpp"

namespace npukit {

void clip(const TensorView& x, const TensorView& y, const ClipParams& p) {
  constexpr const char* fn = "npukit::clip";
  x.expect_dtype(DType::f32, fn, "x.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  if (x.rank() > kMaxRank) fail(fn, "x", "shape " + shape_text(x.shape()), "rank 0 to 8");
  y.expect_shape(x.shape(), fn, "y");
  if (x.numel() == 0) return;
  // Any rank up to 8 runs the 4-D kernels block by block (same bits per element).
  for_each_4d_block({x, y}, [&p](const std::vector<TensorView>& v) {
    cpu::EwProblem e;
    e.op = cpu::EwOp::clip;
    e.a = v[0];
    e.y = v[1];
    e.clip = p;
    cpu::clip_kernels().run(e);
  });
}

void softmax(const TensorView& x, const TensorView& y, int64_t axis) {
  constexpr const char* fn = "npukit::softmax";
  x.expect_dtype(DType::f32, fn, "x.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  y.expect_shape(x.shape(), fn, "y");
  check_range(fn, "axis", axis, -x.rank(), x.rank() - 1);
  check(x.rank() >= 1, fn, "x", "a scalar", "rank 1 to 4");
  ref::softmax_f32(x, y, static_cast<int>(axis < 0 ? axis + x.rank() : axis));
}

}  // namespace npukit
