// Planners of the tensor operators of any dtype: shapes (Shape, Size,
// Unsqueeze, Squeeze, Expand, ConstantOfShape), Pad, Split, Cast, Where,
// comparisons and logic. Shape-valued inputs (axes, pads, shapes) must be
// known when the node is planned: initializers, Constants, or values the
// executor folded (Shape -> Gather -> Concat chains of torch.onnx.export).
#include <algorithm>

#include "npukit/error.hpp"
#include "npukit/ops/layout.hpp"
#include "npukit/ops/tensor_ops.hpp"
#include "onnx/attributes.hpp"
#include "onnx/tensor_inputs.hpp"

namespace npukit::onnx {

namespace {

NodePlan plan_shape(const PlanContext& c) {
  expect_attrs(c.node, {"start", "end"});
  const Operand& x = operand(c, 0, kAnyElem);
  const auto r = static_cast<int64_t>(x.shape.size());
  // Opset 15: [start, end) of the axes, negative from the end, clamped.
  int64_t start = attr_int(c.node, "start", 0), end = attr_int(c.node, "end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  const std::vector<int64_t> dims(x.shape.begin() + start, x.shape.begin() + end);
  auto value = constant_from(Tensor::from<int64_t>({end - start}, dims));
  NodePlan p{{make_operand(Elem::s64, {end - start})}, {}, {value}};
  p.run = [value](const auto&, const auto& out) { copy(value->tensor.view(), out[0]); };
  return p;
}

NodePlan plan_size(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& x = operand(c, 0, kAnyElem);
  auto value = constant_from(Tensor::from<int64_t>({}, {shape_numel(x.shape)}));
  NodePlan p{{make_operand(Elem::s64, {})}, {}, {value}};
  p.run = [value](const auto&, const auto& out) { copy(value->tensor.view(), out[0]); };
  return p;
}

// Axes of Unsqueeze / Squeeze: an attribute before opset 13, an input since.
std::vector<int64_t> axes_of(const PlanContext& c, bool required) {
  if (c.node.opset < 13) {
    expect_attrs(c.node, {"axes"});
    check(!required || has_attr(c.node, "axes"), c.node.op_type.c_str(), "axes", "absent",
          "a list of axes (required)");
    return attr_ints(c.node, "axes");
  }
  expect_attrs(c.node, {});
  check(!required || present(c, 1), c.node.op_type.c_str(), "axes", "absent",
        "an axes input (required)");
  return present(c, 1) ? known_ints(c, 1, "axes") : std::vector<int64_t>{};
}

NodePlan plan_unsqueeze(const PlanContext& c) {
  const Operand& x = operand(c, 0, kAnyElem);
  std::vector<int64_t> axes = axes_of(c, true);
  const auto r = static_cast<int64_t>(x.shape.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(r), false);
  for (int64_t a : axes) {
    check_range("Unsqueeze", "axes", a, -r, r - 1);
    const auto i = static_cast<size_t>(a < 0 ? a + r : a);
    check(!inserted[i], "Unsqueeze", "axes", shape_text(axes), "distinct axes");
    inserted[i] = true;
  }
  Shape y;
  size_t k = 0;
  for (size_t i = 0; i < inserted.size(); ++i) y.push_back(inserted[i] ? 1 : x.shape[k++]);
  return {{make_operand(x.elem, y)}, copy_as_output_shape};
}

NodePlan plan_squeeze(const PlanContext& c) {
  const Operand& x = operand(c, 0, kAnyElem);
  std::vector<int64_t> axes = axes_of(c, false);
  const auto r = static_cast<int64_t>(x.shape.size());
  std::vector<bool> drop(x.shape.size(), false);
  if (axes.empty())
    for (size_t i = 0; i < x.shape.size(); ++i) drop[i] = x.shape[i] == 1;
  for (int64_t a : axes) {
    check_range("Squeeze", "axes", a, -r, r - 1);
    const auto i = static_cast<size_t>(a < 0 ? a + r : a);
    check(x.shape[i] == 1, "Squeeze", "axes", shape_text(axes),
          "axes of size 1 (input " + shape_text(x.shape) + ")");
    drop[i] = true;
  }
  Shape y;
  for (size_t i = 0; i < x.shape.size(); ++i)
    if (!drop[i]) y.push_back(x.shape[i]);
  return {{make_operand(x.elem, y)}, copy_as_output_shape};
}

NodePlan plan_expand(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& x = operand(c, 0, kAnyElem);
  const std::vector<int64_t> shape = known_ints(c, 1, "shape");
  for (int64_t d : shape) check(d >= 0, "Expand", "shape", shape_text(shape), "sizes >= 0");
  const Shape y = broadcast_shapes({x.shape, shape}, "Expand");
  return {{make_operand(x.elem, y)},
          [](const auto& in, const auto& out) { expand(in[0], out[0]); }};
}

NodePlan plan_constant_of_shape(const PlanContext& c) {
  expect_attrs(c.node, {"value"});
  const std::vector<int64_t> shape = known_ints(c, 0, "input");
  for (int64_t d : shape)
    check(d >= 0, "ConstantOfShape", "input", shape_text(shape), "sizes >= 0");
  std::shared_ptr<Constant> value;
  if (auto it = c.node.attrs.find("value"); it != c.node.attrs.end()) {
    check(it->second.kind == Attr::Kind::tensor && it->second.tensor &&
              shape_numel(it->second.tensor->shape) == 1,
          "ConstantOfShape", "value", "an attribute that is not a one-element tensor",
          "a one-element tensor");
    value = it->second.tensor;
  } else {
    value = constant_from(Tensor::from<float>({}, {0.0f}));
  }
  return {{make_operand(value->elem, shape)},
          [value](const auto&, const auto& out) { fill(out[0], value->tensor.view()); }};
}

NodePlan plan_pad(const PlanContext& c) {
  const Operand& x = operand(c, 0, kAnyElem);
  const auto r = static_cast<int64_t>(x.shape.size());
  const PadMode mode = pad_mode_from_name(attr_string(c.node, "mode", "constant"), "Pad");
  std::vector<int64_t> pads;
  bool has_value = false;
  float attr_value = 0.0f;
  if (c.node.opset < 11) {
    expect_attrs(c.node, {"mode", "pads", "value"});
    check(has_attr(c.node, "pads"), "Pad", "pads", "absent", "2 values per axis (required)");
    pads = attr_ints(c.node, "pads");
    attr_value = attr_float(c.node, "value", 0.0f);
    check(x.elem == Elem::f32 || attr_value == 0.0f, "Pad", "value", std::to_string(attr_value),
          "0 for a non-float input");
  } else {
    expect_attrs(c.node, {"mode"});
    const std::vector<int64_t> p = known_ints(c, 1, "pads");
    has_value = present(c, 2);
    if (has_value) {
      operand(c, 2, {x.elem});
      check(shape_numel(c.in[2].shape) == 1, "Pad", "constant_value",
            "shape " + shape_text(c.in[2].shape), "one element");
    }
    // Opset 18: the axes the pads apply to (others get 0).
    if (present(c, 3)) {
      const std::vector<int64_t> axes = known_ints(c, 3, "axes");
      check(p.size() == 2 * axes.size(), "Pad", "pads", shape_text(p),
            std::to_string(2 * axes.size()) + " values (2 per axis in axes)");
      pads.assign(static_cast<size_t>(2 * r), 0);
      for (size_t k = 0; k < axes.size(); ++k) {
        int64_t a = axes[k];
        check_range("Pad", "axes", a, -r, r - 1);
        if (a < 0) a += r;
        pads[static_cast<size_t>(a)] = p[k];
        pads[static_cast<size_t>(a + r)] = p[k + axes.size()];
      }
    } else {
      pads = p;
    }
  }
  const Shape y = pad_shape(x.shape, pads, mode);
  std::shared_ptr<Constant> fixed;
  if (!has_value && attr_value != 0.0f)
    fixed = constant_from(Tensor::from<float>({}, {attr_value}));
  return {
      {make_operand(x.elem, y)}, [pads, mode, has_value, fixed](const auto& in, const auto& out) {
        const TensorView value = has_value ? in[2] : fixed ? fixed->tensor.view() : TensorView();
        pad(in[0], value, out[0], pads, mode);
      }};
}

NodePlan plan_split(const PlanContext& c) {
  const Operand& x = operand(c, 0, kAnyElem);
  const auto r = static_cast<int64_t>(x.shape.size());
  int64_t axis = attr_int(c.node, "axis", 0);
  check(r >= 1, "Split", "input 0", "a scalar", "rank 1 or more");
  check_range("Split", "axis", axis, -r, r - 1);
  if (axis < 0) axis += r;
  const auto outputs = static_cast<int64_t>(c.node.outputs.size());
  const int64_t dim = x.shape[static_cast<size_t>(axis)];
  std::vector<int64_t> sizes;
  if (c.node.opset < 13) {
    expect_attrs(c.node, {"axis", "split"});
    sizes = attr_ints(c.node, "split");
  } else {
    expect_attrs(c.node, {"axis", "num_outputs"});
    if (present(c, 1)) sizes = known_ints(c, 1, "split");
  }
  if (sizes.empty()) {
    // Equal parts; opset 18's num_outputs allows a smaller last part.
    const int64_t n = attr_int(c.node, "num_outputs", outputs);
    check(n == outputs, "Split", "num_outputs", std::to_string(n),
          std::to_string(outputs) + " (the node's outputs)");
    const int64_t part = (dim + n - 1) / n;
    check(has_attr(c.node, "num_outputs") || dim % n == 0, "Split", "input 0",
          "shape " + shape_text(x.shape),
          "an axis divisible into " + std::to_string(n) + " equal parts");
    for (int64_t k = 0, left = dim; k < n; ++k, left -= part)
      sizes.push_back(std::min(part, std::max<int64_t>(left, 0)));
  }
  check(static_cast<int64_t>(sizes.size()) == outputs, "Split", "split", shape_text(sizes),
        std::to_string(outputs) + " sizes (one per output)");
  int64_t total = 0;
  for (int64_t s : sizes) {
    check(s >= 0, "Split", "split", shape_text(sizes), "sizes >= 0");
    total += s;
  }
  check(total == dim, "Split", "split", shape_text(sizes),
        "sizes adding up to " + std::to_string(dim) + " (axis " + std::to_string(axis) + ")");
  NodePlan p;
  std::vector<std::vector<SliceAxis>> parts;
  int64_t start = 0;
  for (int64_t s : sizes) {
    std::vector<SliceAxis> a = slice_axes(x.shape, {start}, {start + s}, {axis}, {});
    p.outputs.push_back(make_operand(x.elem, slice_shape(a)));
    parts.push_back(a);
    start += s;
  }
  // The executor passes views of the named outputs only: every output is named.
  for (const std::string& o : c.node.outputs)
    check(!o.empty(), "Split", "outputs", "an unnamed output", "every output named");
  p.run = [parts](const auto& in, const auto& out) {
    for (size_t k = 0; k < out.size(); ++k) slice(in[0], out[k], parts[k]);
  };
  return p;
}

NodePlan plan_cast(const PlanContext& c) {
  expect_attrs(c.node, {"to", "saturate"});
  const Operand& x = operand(c, 0, kAnyElem);
  check(has_attr(c.node, "to"), "Cast", "to", "absent", "a type (required)");
  const int64_t to = attr_int(c.node, "to", 0);
  const auto e = elem_from_onnx(static_cast<int32_t>(to));
  check(e.has_value(), "Cast", "to", onnx_type_name(static_cast<int32_t>(to)),
        "float, uint8, int8, int32, int64 or bool");
  return {{make_operand(*e, x.shape)},
          [](const auto& in, const auto& out) { cast(in[0], out[0]); }};
}

NodePlan plan_where(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& cond = operand(c, 0, {Elem::b8});
  const Operand& a = operand(c, 1, kAnyElem);
  const Operand& b = operand(c, 2, {a.elem});
  const Shape y = broadcast_shapes({cond.shape, a.shape, b.shape}, "Where");
  return {{make_operand(a.elem, y)},
          [](const auto& in, const auto& out) { where(in[0], in[1], in[2], out[0]); }};
}

template <CompareOp op>
NodePlan plan_compare(const PlanContext& c) {
  expect_attrs(c.node, {});
  // Equal takes bool too; the ordered comparisons numbers only.
  const Operand& a = op == CompareOp::equal
                         ? operand(c, 0, kAnyElem)
                         : operand(c, 0, {Elem::f32, Elem::u8, Elem::s8, Elem::s32, Elem::s64});
  const Operand& b = operand(c, 1, {a.elem});
  const Shape y = broadcast_shapes({a.shape, b.shape}, c.node.op_type.c_str());
  return {{make_operand(Elem::b8, y)},
          [](const auto& in, const auto& out) { compare(op, in[0], in[1], out[0]); }};
}

template <LogicOp op>
NodePlan plan_logic(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& a = operand(c, 0, {Elem::b8});
  const Operand& b = operand(c, 1, {Elem::b8});
  const Shape y = broadcast_shapes({a.shape, b.shape}, c.node.op_type.c_str());
  return {{make_operand(Elem::b8, y)},
          [](const auto& in, const auto& out) { logic(op, in[0], in[1], out[0]); }};
}

NodePlan plan_not(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& x = operand(c, 0, {Elem::b8});
  return {{make_operand(Elem::b8, x.shape)},
          [](const auto& in, const auto& out) { logic_not(in[0], out[0]); }};
}

template <IntOp op>
NodePlan plan_int_arith(const PlanContext& c) {
  expect_attrs(c.node, op == IntOp::mod ? std::initializer_list<const char*>{"fmod"}
                                        : std::initializer_list<const char*>{});
  check(attr_int(c.node, "fmod", 0) == 0, "Mod", "fmod",
        std::to_string(attr_int(c.node, "fmod", 0)), "0 for integers");
  const Operand& a = operand(c, 0, {Elem::s64, Elem::s32});
  const Operand& b = operand(c, 1, {a.elem});
  const Shape y = broadcast_shapes({a.shape, b.shape}, c.node.op_type.c_str());
  return {{make_operand(a.elem, y)},
          [](const auto& in, const auto& out) { int_arith(op, in[0], in[1], out[0]); }};
}

// Neg of known integers (the negative axes of ONNX's LayerNormalization
// function body): 0 - x, wrapping like the other integer operators.
NodePlan plan_int_neg(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& x = operand(c, 0, {Elem::s64, Elem::s32});
  return {{make_operand(x.elem, x.shape)}, [](const auto& in, const auto& out) {
            const Tensor zero(in[0].dtype(), Shape{});
            int_arith(IntOp::sub, zero.view(), in[0], out[0]);
          }};
}

}  // namespace

Planner known_int_arith_planner(const Node& n, const std::vector<Operand>& in) {
  if (!n.domain.empty() || in.empty() || in.size() > 2) return nullptr;
  for (const Operand& o : in)
    if (!o.present || !o.value || (o.elem != Elem::s64 && o.elem != Elem::s32)) return nullptr;
  if (in.size() == 1) return n.op_type == "Neg" ? plan_int_neg : nullptr;
  if (n.op_type == "Add") return plan_int_arith<IntOp::add>;
  if (n.op_type == "Sub") return plan_int_arith<IntOp::sub>;
  if (n.op_type == "Mul") return plan_int_arith<IntOp::mul>;
  if (n.op_type == "Div") return plan_int_arith<IntOp::div>;
  if (n.op_type == "Mod") return plan_int_arith<IntOp::mod>;
  return nullptr;
}

const std::vector<OpEntry>& tensor_ops() {
  static const std::vector<OpEntry> ops = {
      {"", "Shape", 1, 1, 1, plan_shape},
      {"", "Size", 1, 1, 1, plan_size},
      {"", "Unsqueeze", 1, 2, 1, plan_unsqueeze},
      {"", "Squeeze", 1, 2, 1, plan_squeeze},
      {"", "Expand", 2, 2, 1, plan_expand},
      {"", "ConstantOfShape", 1, 1, 1, plan_constant_of_shape},
      {"", "Pad", 1, 4, 1, plan_pad},
      {"", "Split", 1, 2, 64, plan_split},
      {"", "Cast", 1, 1, 1, plan_cast},
      {"", "Where", 3, 3, 1, plan_where},
      {"", "Equal", 2, 2, 1, plan_compare<CompareOp::equal>},
      {"", "Less", 2, 2, 1, plan_compare<CompareOp::less>},
      {"", "Greater", 2, 2, 1, plan_compare<CompareOp::greater>},
      {"", "LessOrEqual", 2, 2, 1, plan_compare<CompareOp::less_equal>},
      {"", "GreaterOrEqual", 2, 2, 1, plan_compare<CompareOp::greater_equal>},
      {"", "And", 2, 2, 1, plan_logic<LogicOp::and_>},
      {"", "Or", 2, 2, 1, plan_logic<LogicOp::or_>},
      {"", "Xor", 2, 2, 1, plan_logic<LogicOp::xor_>},
      {"", "Not", 1, 1, 1, plan_not},
      // Integer Mod (fmod 0) at run time too; float Mod (fmod 1) is refused.
      {"", "Mod", 2, 2, 1, plan_int_arith<IntOp::mod>},
  };
  return ops;
}

}  // namespace npukit::onnx
