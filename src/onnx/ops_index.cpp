// Planners of the indexing operators: Gather (indices at run time or known)
// and Slice (starts/ends/axes/steps known when planning: attributes before
// opset 10, inputs since).
#include "npukit/error.hpp"
#include "npukit/ops/tensor_ops.hpp"
#include "onnx/attributes.hpp"
#include "onnx/tensor_inputs.hpp"

namespace npukit::onnx {

namespace {

NodePlan plan_gather(const PlanContext& c) {
  expect_attrs(c.node, {"axis"});
  const Operand& x = operand(c, 0, kAnyElem);
  const Operand& idx = operand(c, 1, {Elem::s64, Elem::s32});
  const int64_t axis = attr_int(c.node, "axis", 0);
  const Shape y = gather_shape(x.shape, idx.shape, axis);
  // Known indices are checked now, so that a bad model fails at load.
  if (idx.value) {
    const int64_t n =
        x.shape[static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(x.shape.size()) : axis)];
    for (int64_t k : known_ints(c, 1, "indices")) check_range("Gather", "indices", k, -n, n - 1);
  }
  return {{make_operand(x.elem, y)},
          [axis](const auto& in, const auto& out) { gather(in[0], in[1], out[0], axis); }};
}

NodePlan plan_slice(const PlanContext& c) {
  const Operand& x = operand(c, 0, kAnyElem);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.node.opset < 10) {
    expect_attrs(c.node, {"starts", "ends", "axes"});
    check(has_attr(c.node, "starts") && has_attr(c.node, "ends"), "Slice", "starts", "absent",
          "starts and ends (required)");
    starts = attr_ints(c.node, "starts");
    ends = attr_ints(c.node, "ends");
    axes = attr_ints(c.node, "axes");
  } else {
    expect_attrs(c.node, {});
    starts = known_ints(c, 1, "starts");
    ends = known_ints(c, 2, "ends");
    if (present(c, 3)) axes = known_ints(c, 3, "axes");
    if (present(c, 4)) steps = known_ints(c, 4, "steps");
    for (size_t i = 2; i < 5 && present(c, i); ++i)
      check(c.in[i].elem == c.in[1].elem, "Slice", "input types", elem_name(c.in[i].elem),
            std::string(elem_name(c.in[1].elem)) + " as starts");
  }
  // An empty axes input means "all axes" only when absent: a given empty list is 0 axes.
  const std::vector<SliceAxis> a = slice_axes(x.shape, starts, ends, axes, steps);
  return {{make_operand(x.elem, slice_shape(a))},
          [a](const auto& in, const auto& out) { slice(in[0], out[0], a); }};
}

NodePlan plan_scatter_nd(const PlanContext& c) {
  expect_attrs(c.node, {"reduction"});
  const std::string reduction = attr_string(c.node, "reduction", "none");
  check(reduction == "none", "ScatterND", "reduction", "'" + reduction + "'", "none");
  const Operand& data = operand(c, 0, kAnyElem);
  const Operand& idx = operand(c, 1, {Elem::s64});
  const Operand& upd = operand(c, 2, {data.elem});
  const auto q = idx.shape.size();
  check(q >= 1 && idx.shape[q - 1] >= 1 &&
            idx.shape[q - 1] <= static_cast<int64_t>(data.shape.size()),
        "ScatterND", "indices", "shape " + shape_text(idx.shape),
        "a last axis from 1 to the rank of data " + shape_text(data.shape));
  Shape want(idx.shape.begin(), idx.shape.end() - 1);
  want.insert(want.end(), data.shape.begin() + idx.shape[q - 1], data.shape.end());
  check(upd.shape == want, "ScatterND", "updates", "shape " + shape_text(upd.shape),
        "shape " + shape_text(want));
  return {{make_operand(data.elem, data.shape)},
          [](const auto& in, const auto& out) { scatter_nd(in[0], in[1], in[2], out[0]); }};
}

// Range: the length depends on the values, which must be known when planning.
NodePlan plan_range(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& s = operand(c, 0, {Elem::f32, Elem::s32, Elem::s64});
  for (size_t i = 1; i < 3; ++i) operand(c, i, {s.elem});
  const Constant& start = constant_input(c, 0, "start");
  const Constant& limit = constant_input(c, 1, "limit");
  const Constant& delta = constant_input(c, 2, "delta");
  const int64_t n = range_count(start.tensor, limit.tensor, delta.tensor);
  return {{make_operand(s.elem, {n})},
          [](const auto& in, const auto& out) { range(in[0], in[2], out[0]); }};
}

}  // namespace

const std::vector<OpEntry>& index_ops() {
  static const std::vector<OpEntry> ops = {
      {"", "Gather", 2, 2, 1, plan_gather},
      {"", "Slice", 1, 5, 1, plan_slice},
      {"", "Range", 3, 3, 1, plan_range},
      {"", "ScatterND", 3, 3, 1, plan_scatter_nd},
  };
  return ops;
}

}  // namespace npukit::onnx
