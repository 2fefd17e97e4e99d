// Planners of the data-movement operators (any runtime dtype): Identity,
// Flatten and Reshape copy (a buffer per value keeps the executor simple),
// Transpose and Concat call the core's layout operators.
#include "npukit/error.hpp"
#include "npukit/ops/layout.hpp"
#include "onnx/attributes.hpp"

namespace npukit::onnx {

namespace {

constexpr std::initializer_list<Elem> kAny = {Elem::f32, Elem::u8,  Elem::s8,
                                              Elem::s32, Elem::s64, Elem::b8};

void copy_same_bytes(const TensorView& in, const TensorView& out) {
  // Same element count, both contiguous: a reshape of the data.
  copy(TensorView::contiguous(in.raw(), in.dtype(), out.shape()), out);
}

NodePlan plan_identity(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& x = operand(c, 0, kAny);
  return {{make_operand(x.elem, x.shape)},
          [](const auto& in, const auto& out) { copy(in[0], out[0]); }};
}

NodePlan plan_flatten(const PlanContext& c) {
  expect_attrs(c.node, {"axis"});
  const Operand& x = operand(c, 0, kAny);
  const auto rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = attr_int(c.node, "axis", 1);
  check_range("Flatten", "axis", axis, -rank, rank);
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= x.shape[static_cast<size_t>(i)];
  return {{make_operand(x.elem, {outer, inner})},
          [](const auto& in, const auto& out) { copy_same_bytes(in[0], out[0]); }};
}

NodePlan plan_reshape(const PlanContext& c) {
  expect_attrs(c.node, {"allowzero"});
  const Operand& x = operand(c, 0, kAny);
  const std::vector<int64_t> want = constant_ints(c, 1, "shape");
  const bool allowzero = attr_int(c.node, "allowzero", 0) != 0;
  Shape out;
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    int64_t d = want[i];
    if (d == 0 && !allowzero) {
      check(i < x.shape.size(), "Reshape", "shape", shape_text(want),
            "0 only where the input has that axis (input " + shape_text(x.shape) + ")");
      d = x.shape[i];
    }
    if (d == -1) {
      check(infer < 0, "Reshape", "shape", shape_text(want), "at most one -1");
      infer = static_cast<int64_t>(i);
      d = 1;
    } else {
      check(d >= 0, "Reshape", "shape", shape_text(want), "sizes >= -1");
    }
    out.push_back(d);
    check(!__builtin_mul_overflow(known, d, &known), "Reshape", "shape", shape_text(want),
          "sizes whose product fits in 64 bits");
  }
  const int64_t numel = shape_numel(x.shape);
  if (infer >= 0) {
    check(known > 0 && numel % known == 0, "Reshape", "shape", shape_text(want),
          "a shape whose -1 can be inferred for input " + shape_text(x.shape));
    out[static_cast<size_t>(infer)] = numel / known;
  }
  check(shape_numel(out) == numel, "Reshape", "shape", shape_text(want),
        std::to_string(numel) + " elements as in input " + shape_text(x.shape));
  check(out.size() <= static_cast<size_t>(kMaxRank), "Reshape", "shape", shape_text(out),
        "rank up to 8");
  return {{make_operand(x.elem, out)},
          [](const auto& in, const auto& out_) { copy_same_bytes(in[0], out_[0]); }};
}

NodePlan plan_transpose(const PlanContext& c) {
  expect_attrs(c.node, {"perm"});
  const Operand& x = operand(c, 0, kAny);
  std::vector<int64_t> perm = attr_ints(c.node, "perm");
  Shape y = transpose_shape(x.shape, perm);
  return {{make_operand(x.elem, y)},
          [perm](const auto& in, const auto& out) { transpose(in[0], out[0], perm); }};
}

NodePlan plan_concat(const PlanContext& c) {
  expect_attrs(c.node, {"axis"});
  check(has_attr(c.node, "axis"), "Concat", "axis", "absent", "an axis (required)");
  const int64_t axis = attr_int(c.node, "axis", 0);
  std::vector<Shape> shapes;
  const Elem e = operand(c, 0, kAny).elem;
  for (size_t i = 0; i < c.in.size(); ++i) {
    shapes.push_back(operand(c, i, {e}).shape);
  }
  Shape y = concat_shape(shapes, axis);
  return {{make_operand(e, y)},
          [axis](const auto& in, const auto& out) { concat(in, out[0], axis); }};
}

// Constant nodes are folded by the loader and never planned.
NodePlan plan_constant(const PlanContext& c) {
  fail(c.node.op_type, "node", "Constant", "folded at load time");
}

}  // namespace

bool is_renaming_op(const Node& n) {
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  return n.op_type == "Flatten" || n.op_type == "Reshape" || n.op_type == "Squeeze" ||
         n.op_type == "Unsqueeze" || n.op_type == "Identity";
}

const std::vector<OpEntry>& shape_ops() {
  static const std::vector<OpEntry> ops = {
      {"", "Identity", 1, 1, 1, plan_identity}, {"", "Flatten", 1, 1, 1, plan_flatten},
      {"", "Reshape", 2, 2, 1, plan_reshape},   {"", "Transpose", 1, 1, 1, plan_transpose},
      {"", "Concat", 1, -1, 1, plan_concat},    {"", "Constant", 0, 0, 1, plan_constant},
  };
  return ops;
}

}  // namespace npukit::onnx
