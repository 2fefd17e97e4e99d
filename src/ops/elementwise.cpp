#include "npukit/ops/elementwise.hpp"

#include "npukit/error.hpp"
#include "ops/cpu/elementwise_fast.hpp"
#include "ops/elementwise_blocks.hpp"

namespace npukit {

namespace {

// Checks a per-channel operand and returns its element stride.
int64_t channel_stride(const TensorView& t, int64_t c, const char* fn, const char* name) {
  t.expect_dtype(DType::f32, fn, (std::string(name) + ".dtype").c_str());
  const bool ok =
      (t.rank() == 1 && t.dim(0) == c) || (t.rank() == 4 && t.shape() == Shape{1, c, 1, 1});
  check(ok, fn, name, "shape " + shape_text(t.shape()),
        "shape [" + std::to_string(c) + "] or [1, " + std::to_string(c) + ", 1, 1]");
  return t.stride(t.rank() == 1 ? 0 : 1);
}

void check_xy(const TensorView& x, const TensorView& y, const char* fn, bool four_d) {
  x.expect_dtype(DType::f32, fn, "x.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  if (four_d) x.expect_rank(4, fn, "x");
  if (x.rank() > kMaxRank) fail(fn, "x", "shape " + shape_text(x.shape()), "rank 0 to 8");
  for (int64_t d : x.shape())
    check(d >= 1, fn, "x", "shape " + shape_text(x.shape()), "sizes of at least 1");
  y.expect_shape(x.shape(), fn, "y");
}

}  // namespace

void apply_profile(ElementwiseParams& p, Profile profile) {
  switch (semantics_base(profile)) {
    case Profile::bm1684:
      p.relu_nan = ReluNaN::zero;
      p.flush_denormals = true;
      p.scale_adds_zero = true;
      return;
    case Profile::onnxruntime:
    case Profile::pytorch:
      p.relu_nan = ReluNaN::propagate;
      p.flush_denormals = false;
      p.scale_adds_zero = false;
      return;
    default:
      fail("npukit::apply_profile", "profile", profile_name(profile),
           "onnxruntime, pytorch or bm1684 for fp32 element-wise operators");
  }
}

void relu(const TensorView& x, const TensorView& y, const ElementwiseParams& p) {
  check_xy(x, y, "npukit::relu", false);
  // Ranks above 4 run the 4-D kernels block by block (same bits per element).
  for_each_4d_block({x, y}, [&p](const std::vector<TensorView>& v) {
    cpu::EwProblem e;
    e.op = cpu::EwOp::relu;
    e.a = v[0];
    e.y = v[1];
    e.relu = p;
    cpu::relu_kernels().run(e);
  });
}

void bias(const TensorView& x, const TensorView& b, const TensorView& y,
          const ElementwiseParams& p) {
  constexpr const char* fn = "npukit::bias";
  check_xy(x, y, fn, true);
  const int64_t bs = channel_stride(b, x.dim(1), fn, "b");
  ref::channel_op_f32(ref::ChannelOp::bias, x, nullptr, 0, static_cast<const float*>(b.raw()), bs,
                      y, p);
}

void scale(const TensorView& x, const TensorView& s, const TensorView& y,
           const ElementwiseParams& p) {
  constexpr const char* fn = "npukit::scale";
  check_xy(x, y, fn, true);
  const int64_t ss = channel_stride(s, x.dim(1), fn, "s");
  ref::channel_op_f32(ref::ChannelOp::scale, x, static_cast<const float*>(s.raw()), ss, nullptr, 0,
                      y, p);
}

void scale_bias(const TensorView& x, const TensorView& s, const TensorView& b, const TensorView& y,
                const ElementwiseParams& p) {
  constexpr const char* fn = "npukit::scale_bias";
  check_xy(x, y, fn, true);
  const int64_t ss = channel_stride(s, x.dim(1), fn, "s");
  const int64_t bs = channel_stride(b, x.dim(1), fn, "b");
  ref::channel_op_f32(ref::ChannelOp::scale_bias, x, static_cast<const float*>(s.raw()), ss,
                      static_cast<const float*>(b.raw()), bs, y, p);
}

}  // namespace npukit
