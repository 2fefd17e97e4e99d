// Planners of the integer operators ONNX Runtime's QDQ fusion creates beyond
// those of ops_quant.cpp: com.microsoft QGemm (on the QLinearConv core, a 1x1
// convolution of (M, K) rows), QLinearMul, QLinearConcat, QLinearLeakyRelu and
// QLinearSigmoid (lookup tables, npukit/ops/qlinear_lookup.hpp). Scales and
// zero points must be constants: they are part of the plan.
#include "npukit/error.hpp"
#include "npukit/ops/binary.hpp"
#include "npukit/ops/layout.hpp"
#include "npukit/ops/qlinear_lookup.hpp"
#include "npukit/ops/qlinear_mul.hpp"
#include "npukit/ops/quantized.hpp"
#include "onnx/attributes.hpp"

namespace npukit::onnx {

namespace {

constexpr auto U8 = Elem::u8;
constexpr auto S8 = Elem::s8;

std::vector<float> const_scales(const PlanContext& c, size_t i, const char* what) {
  const Constant& k = constant_input(c, i, what);
  check(k.elem == Elem::f32 && k.shape.size() <= 1, c.node.op_type.c_str(), what,
        std::string(elem_name(k.elem)) + " " + shape_text(k.shape), "a float scalar or 1-D tensor");
  return k.tensor.to_vector<float>();
}

float const_scale(const PlanContext& c, size_t i, const char* what) {
  const std::vector<float> s = const_scales(c, i, what);
  check(s.size() == 1, c.node.op_type.c_str(), what, std::to_string(s.size()) + " values",
        "one value (per-tensor)");
  return s[0];
}

// Zero points of type `want` (absent: {0}).
std::vector<int32_t> const_zero_points(const PlanContext& c, size_t i, const char* what,
                                       Elem want) {
  if (!present(c, i)) return {0};
  const Constant& k = constant_input(c, i, what);
  check(k.elem == want && k.shape.size() <= 1, c.node.op_type.c_str(), what,
        std::string(elem_name(k.elem)) + " " + shape_text(k.shape),
        std::string(elem_name(want)) + " scalar or 1-D tensor (the quantized tensor's type)");
  std::vector<int32_t> out;
  if (want == U8)
    for (uint8_t v : k.tensor.to_vector<uint8_t>()) out.push_back(v);
  else
    for (int8_t v : k.tensor.to_vector<int8_t>()) out.push_back(v);
  return out;
}

int32_t const_zero_point(const PlanContext& c, size_t i, const char* what, Elem want) {
  const std::vector<int32_t> z = const_zero_points(c, i, what, want);
  check(z.size() == 1, c.node.op_type.c_str(), what, std::to_string(z.size()) + " values",
        "one value (per-tensor)");
  return z[0];
}

// The output element type: the y zero point's when given, else the input's.
Elem output_elem(const PlanContext& c, size_t zp, Elem dflt) {
  return present(c, zp) ? c.in[zp].elem : dflt;
}

// ---- QGemm ----

NodePlan plan_qgemm(const PlanContext& c) {
  expect_attrs(c.node, {"alpha", "transA", "transB"});
  const char* op = "QGemm";
  const Operand& a = operand(c, 0, {U8});
  const Operand& b = operand(c, 3, {U8, S8});
  expect_rank(c, 0, 2, 2);
  expect_rank(c, 3, 2, 2);
  check(attr_int(c.node, "transA", 0) == 0, op, "transA", "1", "0 (A as (M, K))");
  check(attr_float(c.node, "alpha", 1.0f) == 1.0f, op, "alpha",
        std::to_string(attr_float(c.node, "alpha", 1.0f)), "1");
  check(present(c, 7), op, "y_scale", "absent", "a scale (a float output is not supported)");
  check(b.value != nullptr, op, "B", "computed at run time", "a constant (initializer)");
  const bool trans_b = attr_int(c.node, "transB", 0) != 0;
  const int64_t m = a.shape[0], k = a.shape[1];
  const int64_t n = trans_b ? b.shape[0] : b.shape[1];
  check((trans_b ? b.shape[1] : b.shape[0]) == k, op, "B", "shape " + shape_text(b.shape),
        "K = " + std::to_string(k) + " along its " + (trans_b ? "second" : "first") + " axis");
  // The weights as an (N, K, 1, 1) convolution kernel.
  const DType bt = *dtype_of(b.elem);
  Tensor w(bt, {n, k, 1, 1});
  const auto* src = static_cast<const uint8_t*>(b.value->tensor.view().raw());
  auto* dst = static_cast<uint8_t*>(w.view().raw());
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < k; ++i) dst[j * k + i] = trans_b ? src[j * k + i] : src[i * n + j];
  QLinearConvParams p;
  p.x_scale = const_scale(c, 1, "a_scale");
  p.x_zero_point = const_zero_point(c, 2, "a_zero_point", U8);
  p.w.scale = const_scales(c, 4, "b_scale");
  p.w.zero_point = const_zero_points(c, 5, "b_zero_point", b.elem);
  p.w.axis = 0;
  for (size_t s : {p.w.scale.size(), p.w.zero_point.size()})
    check(s == 1 || static_cast<int64_t>(s) == n, op, "b_scale / b_zero_point",
          std::to_string(s) + " values", "1 or N = " + std::to_string(n));
  const Elem ye = output_elem(c, 8, a.elem);
  check(ye == U8, op, "y_zero_point", elem_name(ye), "uint8 (of A's type)");
  p.y_scale = const_scale(c, 7, "y_scale");
  p.y_zero_point = const_zero_point(c, 8, "y_zero_point", ye);
  p.has_bias = present(c, 6);
  if (p.has_bias) {
    const Operand& bias = operand(c, 6, {Elem::s32});
    check(shape_numel(bias.shape) == n &&
              (bias.shape.size() == 1 || (bias.shape.size() == 2 && bias.shape[0] == 1)),
          op, "C", "shape " + shape_text(bias.shape),
          "(N) or (1, N) with N = " + std::to_string(n));
  }
  apply_profile(p, c.profile);
  // QGemm is ONNX Runtime's own operator: its multiplier under every profile.
  p.multiplier = MultiplierOrder::divide_by_y_scale;
  // A constant bias goes into the packed requantization data too.
  const TensorView const_bias =
      p.has_bias && c.in[6].value
          ? TensorView::contiguous(c.in[6].value->tensor.view().raw(), DType::s32, {n})
          : TensorView();
  auto packed = pack_qlinear_conv_weights(w.view(), const_bias, p, DType::u8);
  auto weights = std::make_shared<Tensor>(std::move(w));
  return {{make_operand(ye, {m, n})},
          [p, packed, weights, m, k, n](const auto& in, const auto& out) {
            const TensorView x = TensorView::contiguous(in[0].raw(), DType::u8, {m, k, 1, 1});
            const TensorView y = TensorView::contiguous(out[0].raw(), out[0].dtype(), {m, n, 1, 1});
            const TensorView bias =
                p.has_bias ? TensorView::contiguous(in[6].raw(), DType::s32, {n}) : TensorView();
            qlinear_conv(x, weights->view(), bias, y, p, packed.get());
          }};
}

// ---- QLinearConcat ----

NodePlan plan_qlinear_concat(const PlanContext& c) {
  expect_attrs(c.node, {"axis"});
  const char* op = "QLinearConcat";
  check(has_attr(c.node, "axis"), op, "axis", "absent", "an axis (required)");
  check(c.in.size() >= 5 && (c.in.size() - 2) % 3 == 0, op, "inputs", std::to_string(c.in.size()),
        "2 + 3 per input (tensor, scale, zero point)");
  const int64_t axis = attr_int(c.node, "axis", 0);
  const Operand& first = operand(c, 2, {U8, S8});
  const Elem e = output_elem(c, 1, first.elem);
  check(e == first.elem, op, "y_zero_point", elem_name(e), elem_name(first.elem));
  QLookupParams base;
  base.dtype = *dtype_of(e);
  base.y_scale = const_scale(c, 0, "y_scale");
  base.y_zero_point = const_zero_point(c, 1, "y_zero_point", e);
  apply_profile(base, c.profile);
  std::vector<Shape> shapes;
  std::vector<std::optional<QLookupTable>> tables;
  for (size_t i = 2; i < c.in.size(); i += 3) {
    shapes.push_back(operand(c, i, {e}).shape);
    QLookupParams p = base;
    p.x_scale = const_scale(c, i + 1, "x_scale");
    p.x_zero_point = const_zero_point(c, i + 2, "x_zero_point", e);
    // ORT copies an input whose scale and zero point equal the output's.
    if (p.x_scale == p.y_scale && p.x_zero_point == p.y_zero_point)
      tables.emplace_back();
    else
      tables.emplace_back(qlinear_lookup_table(p));
  }
  const Shape y = concat_shape(shapes, axis);
  return {{make_operand(e, y)}, [tables, axis](const auto& in, const auto& out) {
            std::vector<TensorView> xs;
            for (size_t i = 2; i < in.size(); i += 3) xs.push_back(in[i]);
            qlinear_concat(xs, tables, out[0], axis);
          }};
}

// ---- QLinearLeakyRelu / QLinearSigmoid ----

template <QLookupFunction fn>
NodePlan plan_qlinear_unary_lookup(const PlanContext& c) {
  if (fn == QLookupFunction::leaky_relu)
    expect_attrs(c.node, {"alpha"});
  else
    expect_attrs(c.node, {});
  const Operand& x = operand(c, 0, {U8, S8});
  QLookupParams p;
  p.function = fn;
  p.alpha = attr_float(c.node, "alpha", 0.01f);
  p.dtype = *dtype_of(x.elem);
  p.x_scale = const_scale(c, 1, "X_scale");
  p.x_zero_point = const_zero_point(c, 2, "X_zero_point", x.elem);
  p.y_scale = const_scale(c, 3, "Y_scale");
  p.y_zero_point = const_zero_point(c, 4, "Y_zero_point", x.elem);
  apply_profile(p, c.profile);
  const QLookupTable table = qlinear_lookup_table(p);
  return {{make_operand(x.elem, x.shape)},
          [table](const auto& in, const auto& out) { qlinear_lookup(in[0], out[0], table); }};
}

// ---- QLinearMul ----

NodePlan plan_qlinear_mul(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& a = operand(c, 0, {U8, S8});
  const Operand& b = operand(c, 3, {a.elem});
  QLinearMulParams p;
  p.a_scale = const_scale(c, 1, "A_scale");
  p.a_zero_point = const_zero_point(c, 2, "A_zero_point", a.elem);
  p.b_scale = const_scale(c, 4, "B_scale");
  p.b_zero_point = const_zero_point(c, 5, "B_zero_point", a.elem);
  p.c_scale = const_scale(c, 6, "C_scale");
  p.c_zero_point = const_zero_point(c, 7, "C_zero_point", a.elem);
  apply_profile(p, c.profile);
  const Shape y = broadcast_shape(a.shape, b.shape, "QLinearMul");
  return {{make_operand(a.elem, y)},
          [p](const auto& in, const auto& out) { qlinear_mul(in[0], in[3], out[0], p); }};
}

}  // namespace

const std::vector<OpEntry>& quant_extra_ops() {
  static const std::vector<OpEntry> ops = {
      {"com.microsoft", "QGemm", 8, 9, 1, plan_qgemm},
      {"com.microsoft", "QLinearConcat", 5, -1, 1, plan_qlinear_concat},
      {"com.microsoft", "QLinearMul", 7, 8, 1, plan_qlinear_mul},
      {"com.microsoft", "QLinearLeakyRelu", 4, 5, 1,
       plan_qlinear_unary_lookup<QLookupFunction::leaky_relu>},
      {"com.microsoft", "QLinearSigmoid", 4, 5, 1,
       plan_qlinear_unary_lookup<QLookupFunction::sigmoid>},
  };
  return ops;
}

}  // namespace npukit::onnx
