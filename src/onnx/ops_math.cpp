// Planners of the element-wise float math operators (activations, unary math
// functions, Sub/Div/Pow/Min/Max with broadcasting, Dropout at inference) and
// the family's table, which also lists the reductions (ops_reduce.cpp) and
// LayerNormalization (ops_norm.cpp). No arithmetic here.
#include <cstring>

#include "npukit/error.hpp"
#include "npukit/ops/binary.hpp"
#include "npukit/ops/broadcast_binary.hpp"
#include "npukit/ops/log_softmax.hpp"
#include "npukit/ops/softmax_onnxruntime.hpp"
#include "npukit/ops/unary.hpp"
#include "onnx/attributes.hpp"
#include "onnx/math_planners.hpp"

namespace npukit::onnx {

void expect_onnxruntime_profile(const PlanContext& c) {
  check(semantics_base(c.profile) == Profile::onnxruntime, c.node.op_type.c_str(), "profile",
        profile_name(c.profile), "onnxruntime (the float math operators model ONNX Runtime only)");
}

namespace {

constexpr auto F = Elem::f32;

NodePlan unary_plan(const PlanContext& c, UnaryOp op, const UnaryParams& p) {
  const Operand& x = operand(c, 0, {F});
  return {{make_operand(F, x.shape)},
          [op, p](const auto& in, const auto& out) { unary(op, in[0], out[0], p); }};
}

template <UnaryOp op>
NodePlan plan_unary(const PlanContext& c) {
  expect_onnxruntime_profile(c);
  expect_attrs(c.node, {});
  return unary_plan(c, op, {});
}

NodePlan plan_hard_sigmoid(const PlanContext& c) {
  expect_onnxruntime_profile(c);
  expect_attrs(c.node, {"alpha", "beta"});
  return unary_plan(c, UnaryOp::hard_sigmoid,
                    {attr_float(c.node, "alpha", 0.2f), attr_float(c.node, "beta", 0.5f)});
}

NodePlan plan_leaky_relu(const PlanContext& c) {
  expect_onnxruntime_profile(c);
  expect_attrs(c.node, {"alpha"});
  return unary_plan(c, UnaryOp::leaky_relu, {attr_float(c.node, "alpha", 0.01f), 0.0f});
}

// ONNX Gelu (opset 20): approximate "none" (erf) or "tanh".
NodePlan plan_gelu(const PlanContext& c) {
  expect_onnxruntime_profile(c);
  expect_attrs(c.node, {"approximate"});
  const std::string a = attr_string(c.node, "approximate", "none");
  check(a == "none" || a == "tanh", "Gelu", "approximate", "'" + a + "'", "'none' or 'tanh'");
  return unary_plan(c, a == "tanh" ? UnaryOp::gelu_tanh : UnaryOp::gelu, {});
}

template <BroadcastOp op>
NodePlan plan_broadcast(const PlanContext& c) {
  expect_onnxruntime_profile(c);
  expect_attrs(c.node, {});
  const Operand& a = operand(c, 0, {F});
  const Operand& b = operand(c, 1, {F});
  Shape y = broadcast_shape(a.shape, b.shape, c.node.op_type.c_str());
  return {{make_operand(F, y)},
          [](const auto& in, const auto& out) { broadcast_binary(op, in[0], in[1], out[0]); }};
}

// Min / Max: one or more inputs, folded left to right with broadcasting.
template <BroadcastOp op>
NodePlan plan_variadic(const PlanContext& c) {
  expect_onnxruntime_profile(c);
  expect_attrs(c.node, {});
  const char* fn = c.node.op_type.c_str();
  std::vector<Shape> partial{operand(c, 0, {F}).shape};
  for (size_t i = 1; i < c.in.size(); ++i)
    partial.push_back(broadcast_shape(partial.back(), operand(c, i, {F}).shape, fn));
  const Shape y = partial.back();
  return {{make_operand(F, y)}, [partial](const auto& in, const auto& out) {
            if (in.size() == 1) {
              copy(in[0], out[0]);
              return;
            }
            // Intermediate results live in the output, viewed at their own shape.
            TensorView acc = in[0];
            std::vector<Tensor> tmp;
            for (size_t i = 1; i < in.size(); ++i) {
              TensorView dst = out[0];
              if (partial[i] != out[0].shape()) {
                tmp.emplace_back(DType::f32, partial[i]);
                dst = tmp.back().view();
              }
              broadcast_binary(op, acc, in[i], dst);
              acc = dst;
            }
          }};
}

// Dropout at inference: the identity; the optional mask (bool) is all true,
// as ONNX defines it outside training.
NodePlan plan_dropout(const PlanContext& c) {
  expect_onnxruntime_profile(c);
  expect_attrs(c.node, {"seed", "ratio", "is_test"});
  const Operand& x = operand(c, 0, {F});
  const bool mask = c.node.outputs.size() >= 2 && !c.node.outputs[1].empty();
  if (present(c, 2)) {
    const Constant& t = constant_input(c, 2, "training_mode");
    check(t.tensor.view().numel() == 1 || !t.ints.empty(), "Dropout", "training_mode",
          "shape " + shape_text(t.shape), "a scalar");
    const bool training = t.ints.empty()
                              ? t.tensor.view().raw() != nullptr &&
                                    *static_cast<const uint8_t*>(t.tensor.view().raw()) != 0
                              : t.ints[0] != 0;
    // Training with ratio 0 drops nothing (torch exports swin_t's attention so).
    float ratio = 0.5f;  // ONNX's default
    if (present(c, 1)) {
      const Constant& r = constant_input(c, 1, "ratio");
      check(r.elem == F && r.tensor.view().numel() == 1, "Dropout", "ratio",
            "shape " + shape_text(r.shape), "a float scalar");
      ratio = *static_cast<const float*>(r.tensor.view().raw());
    }
    check(!training || ratio == 0.0f, "Dropout", "training_mode", "true",
          "false (inference), or true with ratio 0 (the identity)");
  }
  if (present(c, 1)) operand(c, 1, {F});
  std::vector<Operand> outs{make_operand(F, x.shape)};
  if (mask) outs.push_back(make_operand(Elem::b8, x.shape));
  return {outs, [mask](const auto& in, const auto& out) {
            copy(in[0], out[0]);
            if (mask)  // the runner's buffers are contiguous
              std::memset(out[1].raw(), 1, static_cast<size_t>(out[1].numel()));
          }};
}

// LogSoftmax: one axis since opset 13; before, the input coerced to 2-D at
// `axis` and normalised over all trailing axes at once.
NodePlan plan_log_softmax(const PlanContext& c) {
  expect_onnxruntime_profile(c);
  expect_attrs(c.node, {"axis"});
  const Operand& x = operand(c, 0, {F});
  const auto rank = static_cast<int64_t>(x.shape.size());
  check(rank >= 1, "LogSoftmax", "input", "a scalar", "rank 1 to 4");
  if (c.node.opset >= 13) {
    const int64_t axis = attr_int(c.node, "axis", -1);
    check_range("LogSoftmax", "axis", axis, -rank, rank - 1);
    return {{make_operand(F, x.shape)}, [axis](const auto& in, const auto& out) {
              softmax_onnxruntime(in[0], out[0], axis, true);
            }};
  }
  int64_t axis = attr_int(c.node, "axis", 1);
  check_range("LogSoftmax", "axis", axis, -rank, rank - 1);
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= x.shape[static_cast<size_t>(i)];
  return {{make_operand(F, x.shape)}, [outer, inner](const auto& in, const auto& out) {
            softmax_onnxruntime(TensorView::contiguous(in[0].raw(), DType::f32, {outer, inner}),
                                TensorView::contiguous(out[0].raw(), DType::f32, {outer, inner}), 1,
                                true);
          }};
}

}  // namespace

const std::vector<OpEntry>& math_ops() {
  static const std::vector<OpEntry> ops = {
      {"", "Sigmoid", 1, 1, 1, plan_unary<UnaryOp::sigmoid>},
      {"", "HardSigmoid", 1, 1, 1, plan_hard_sigmoid},
      {"", "HardSwish", 1, 1, 1, plan_unary<UnaryOp::hard_swish>},
      {"", "Tanh", 1, 1, 1, plan_unary<UnaryOp::tanh>},
      {"", "LeakyRelu", 1, 1, 1, plan_leaky_relu},
      {"", "Erf", 1, 1, 1, plan_unary<UnaryOp::erf>},
      {"", "Gelu", 1, 1, 1, plan_gelu},
      {"com.microsoft", "Gelu", 1, 1, 1, plan_unary<UnaryOp::gelu>},
      {"", "Sqrt", 1, 1, 1, plan_unary<UnaryOp::sqrt>},
      {"", "Exp", 1, 1, 1, plan_unary<UnaryOp::exp>},
      {"", "Log", 1, 1, 1, plan_unary<UnaryOp::log>},
      {"", "Neg", 1, 1, 1, plan_unary<UnaryOp::neg>},
      {"", "Abs", 1, 1, 1, plan_unary<UnaryOp::abs>},
      {"", "Reciprocal", 1, 1, 1, plan_unary<UnaryOp::reciprocal>},
      {"", "Sub", 2, 2, 1, plan_broadcast<BroadcastOp::sub>},
      {"", "Div", 2, 2, 1, plan_broadcast<BroadcastOp::div>},
      {"", "Pow", 2, 2, 1, plan_broadcast<BroadcastOp::pow>},
      {"", "Min", 1, -1, 1, plan_variadic<BroadcastOp::min>},
      {"", "Max", 1, -1, 1, plan_variadic<BroadcastOp::max>},
      {"", "Dropout", 1, 3, 2, plan_dropout},
      {"", "LogSoftmax", 1, 1, 1, plan_log_softmax},
      {"", "ReduceSum", 1, 2, 1, plan_reduce_sum},
      {"", "ReduceMean", 1, 2, 1, plan_reduce_mean},
      {"", "ReduceMax", 1, 2, 1, plan_reduce_max},
      {"", "ReduceMin", 1, 2, 1, plan_reduce_min},
      {"", "ReduceL2", 1, 2, 1, plan_reduce_l2},
      {"", "LayerNormalization", 2, 3, 3, plan_layer_norm},
      {"", "Einsum", 1, -1, 1, plan_einsum},
  };
  return ops;
}

}  // namespace npukit::onnx
