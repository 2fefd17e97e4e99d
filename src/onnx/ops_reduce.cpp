// Planners of ReduceSum / ReduceMean / ReduceMax / ReduceMin / ReduceL2: axes as an
// attribute (before opset 13 for ReduceSum, 18 for the others) or as a
// constant int64 input (since), keepdims, noop_with_empty_axes.
#include <cmath>

#include "npukit/error.hpp"
#include "npukit/ops/reduce.hpp"
#include "onnx/attributes.hpp"
#include "onnx/math_planners.hpp"

namespace npukit::onnx {

namespace {

NodePlan plan_reduce(const PlanContext& c, ReduceOp op, int64_t axes_input_since) {
  expect_onnxruntime_profile(c);
  const char* fn = c.node.op_type.c_str();
  const bool axes_as_input = c.node.opset >= axes_input_since;
  ReduceParams p;
  p.order = ReduceOrder::onnxruntime;  // the only profile the planner accepts
  if (axes_as_input) {
    expect_attrs(c.node, {"keepdims", "noop_with_empty_axes"});
    if (present(c, 1)) p.axes = constant_ints(c, 1, "axes");
  } else {
    expect_attrs(c.node, {"keepdims", "axes"});
    check(!present(c, 1), fn, "input 1", "present",
          "absent before opset " + std::to_string(axes_input_since) + " (axes is an attribute)");
    p.axes = attr_ints(c.node, "axes");
  }
  const int64_t keepdims = attr_int(c.node, "keepdims", 1);
  check_range(fn, "keepdims", keepdims, 0, 1);
  const int64_t noop = attr_int(c.node, "noop_with_empty_axes", 0);
  check_range(fn, "noop_with_empty_axes", noop, 0, 1);
  p.keepdims = keepdims != 0;
  const Operand& x = operand(c, 0, {Elem::f32});
  if (p.axes.empty() && noop != 0) {
    // ONNX Runtime still applies ReduceL2's per-element steps: sqrt(x * x).
    if (op == ReduceOp::l2)
      return {{make_operand(Elem::f32, x.shape)}, [](const auto& in, const auto& out) {
                Tensor t(DType::f32, in[0].shape());
                copy(in[0], t.view());
                float* y = static_cast<float*>(t.view().raw());
                for (int64_t i = 0; i < t.view().numel(); ++i) y[i] = std::sqrt(y[i] * y[i]);
                copy(t.view(), out[0]);
              }};
    return {{make_operand(Elem::f32, x.shape)},
            [](const auto& in, const auto& out) { copy(in[0], out[0]); }};
  }
  Shape y = reduce_output_shape(x.shape, p, fn);
  return {{make_operand(Elem::f32, y)},
          [op, p](const auto& in, const auto& out) { reduce(op, in[0], out[0], p); }};
}

}  // namespace

NodePlan plan_reduce_sum(const PlanContext& c) {
  return plan_reduce(c, ReduceOp::sum, 13);
}
NodePlan plan_reduce_mean(const PlanContext& c) {
  return plan_reduce(c, ReduceOp::mean, 18);
}
NodePlan plan_reduce_max(const PlanContext& c) {
  return plan_reduce(c, ReduceOp::max, 18);
}
NodePlan plan_reduce_min(const PlanContext& c) {
  return plan_reduce(c, ReduceOp::min, 18);
}
NodePlan plan_reduce_l2(const PlanContext& c) {
  return plan_reduce(c, ReduceOp::l2, 18);
}

}  // namespace npukit::onnx
