// Planner of LayerNormalization (opset 17): outputs Y and, when asked, Mean
// and InvStdDev; scale and bias must hold x.shape[axis:] elements (ONNX
// Runtime's CPU kernel does not broadcast them).
#include "npukit/error.hpp"
#include "npukit/ops/layer_norm.hpp"
#include "onnx/attributes.hpp"
#include "onnx/math_planners.hpp"

namespace npukit::onnx {

NodePlan plan_layer_norm(const PlanContext& c) {
  expect_onnxruntime_profile(c);
  expect_attrs(c.node, {"axis", "epsilon", "stash_type"});
  const Operand& x = operand(c, 0, {Elem::f32});
  const auto rank = static_cast<int64_t>(x.shape.size());
  check(rank >= 1, "LayerNormalization", "X", "a scalar", "rank 1 to 4");
  LayerNormParams p{attr_int(c.node, "axis", -1), attr_float(c.node, "epsilon", 1e-5f)};
  check_range("LayerNormalization", "axis", p.axis, -rank, rank - 1);
  check(attr_int(c.node, "stash_type", 1) == 1, "LayerNormalization", "stash_type",
        std::to_string(attr_int(c.node, "stash_type", 1)), "1 (float)");
  const int64_t axis = p.axis < 0 ? p.axis + rank : p.axis;
  int64_t n = 1;
  Shape stat = x.shape;
  for (int64_t i = axis; i < rank; ++i) {
    n *= x.shape[static_cast<size_t>(i)];
    stat[static_cast<size_t>(i)] = 1;
  }
  for (size_t i = 1; i < 3; ++i)
    if (present(c, i)) {
      const Operand& s = operand(c, i, {Elem::f32});
      check(shape_numel(s.shape) == n, "LayerNormalization", i == 1 ? "Scale" : "B",
            "shape " + shape_text(s.shape),
            std::to_string(n) + " elements (X.shape[axis:] of " + shape_text(x.shape) + ")");
    }
  const bool has_bias = present(c, 2);
  auto wanted = [&](size_t k) { return c.node.outputs.size() > k && !c.node.outputs[k].empty(); };
  const bool want_mean = wanted(1), want_inv = wanted(2);
  return {{make_operand(Elem::f32, x.shape), make_operand(Elem::f32, stat),
           make_operand(Elem::f32, stat)},
          [p, has_bias, want_mean, want_inv](const auto& in, const auto& out) {
            size_t k = 1;
            const TensorView mean = want_mean ? out[k++] : TensorView();
            const TensorView inv = want_inv ? out[k++] : TensorView();
            layer_norm(in[0], in[1], has_bias ? in[2] : TensorView(), out[0], mean, inv, p);
          }};
}

}  // namespace npukit::onnx
