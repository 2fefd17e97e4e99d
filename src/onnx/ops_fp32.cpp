// Planners of the float operators: each checks its node, computes its output
// shape with the core's own shape function and returns a kernel that calls
// the core operator. No arithmetic here.
#include <limits>
#include <memory>

#include "npukit/error.hpp"
#include "npukit/ops/activation.hpp"
#include "npukit/ops/batchnorm.hpp"
#include "npukit/ops/binary.hpp"
#include "npukit/ops/conv2d.hpp"
#include "npukit/ops/elementwise.hpp"
#include "npukit/ops/gemm.hpp"
#include "npukit/ops/matmul.hpp"
#include "npukit/ops/pool2d.hpp"
#include "npukit/ops/softmax_onnxruntime.hpp"
#include "onnx/attributes.hpp"
#include "onnx/op_families.hpp"
#include "ops/conv2d_call.hpp"
#include "ops/gemm_call.hpp"

namespace npukit::onnx {

namespace {

constexpr auto F = Elem::f32;

// com.microsoft FusedConv's activation (what fuse_conv_activation writes, and
// ONNX Runtime's optimized models hold): Relu, or Clip with its [min, max] in
// activation_params, applied as npukit's Clip to the finished output.
ClipParams fused_activation(const Node& n) {
  if (!has_attr(n, "activation")) return {};  // a fused Add alone (input Z)
  const std::string kind = attr_string(n, "activation", "");
  if (kind == "Relu") {
    check(!has_attr(n, "activation_params"), "FusedConv", "activation_params", "present",
          "absent for Relu");
    return {0.0f, std::numeric_limits<float>::infinity()};
  }
  check(kind == "Clip", "FusedConv", "activation", "'" + kind + "'", "Relu or Clip");
  auto it = n.attrs.find("activation_params");
  const bool two =
      it != n.attrs.end() && it->second.kind == Attr::Kind::floats && it->second.floats.size() == 2;
  check(two, "FusedConv", "activation_params",
        it == n.attrs.end() ? "absent" : std::to_string(it->second.floats.size()) + " floats",
        "[min, max] for Clip");
  return {it->second.floats[0], it->second.floats[1]};
}

NodePlan plan_conv_or_fused(const PlanContext& c, bool fused) {
  if (fused)
    expect_attrs(c.node, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides",
                          "activation", "activation_params"});
  else
    expect_attrs(c.node, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  const Operand& x = operand(c, 0, {F});
  const Operand& w = operand(c, 1, {F});
  expect_rank(c, 0, 4, 4);
  expect_rank(c, 1, 4, 4);
  Conv2dParams p;
  p.window = onnx_window(c, x.shape, &w.shape, false);
  p.groups = attr_int(c.node, "group", 1);
  // The BM1684's interleaved accumulation is modelled for dense convolutions;
  // the runner gives grouped ones ONNX Runtime's semantics under fallback and
  // refuses them without it, before planning (node_semantics).
  if (const std::string gap = runner_gap(c.node, c.profile); !gap.empty())
    fail(c.node.op_type, "profile", profile_name(c.profile), gap);
  apply_profile(p, c.profile);  // the BM1684's interleaved accumulators and FTZ/DAZ
  p.has_bias = present(c, 2);
  if (p.has_bias) {
    operand(c, 2, {F});
    expect_rank(c, 2, 1, 1);
  }
  if (fused) p.clip = fused_activation(c.node);
  Shape y = conv2d_output_shape(x.shape, w.shape, p);
  // Constant weights are packed here, once, for the kernels that read them
  // packed (nullptr where none would).
  std::shared_ptr<const cpu::ConvPackedWeights> packed;
  // FusedConv's Z (conv_add_fusion.hpp): y starts as Z; under MLAS's orders
  // the chains are added to it (residual_first), else Z is added last.
  const bool sum = fused && present(c, 3);
  if (sum) {
    const Operand& z = operand(c, 3, {F});
    check(z.shape == y, "FusedConv", "Z", "shape " + shape_text(z.shape),
          "the output's shape " + shape_text(y));
    p.result_add = true;
    p.residual_first = mlas_nchwc_block(p.accumulation) != 0;
  }
  if (w.value != nullptr) packed = conv2d_pack_weights(w.value->tensor.view(), p, y[2], y[3]);
  // When Z is dead after this node the memory plan may give y Z's bytes
  // (allocate.cpp's join_in_place): y then holds Z already, no copy.
  // The checks and the kernel choice once per views, not on every run (Conv2dCall).
  NodePlan plan{{make_operand(F, y)},
                [has_bias = p.has_bias, sum, call = Conv2dCall(p, packed, w.value != nullptr)](
                    const auto& in, const auto& out) mutable {
                  if (sum && in[3].raw() != out[0].raw()) copy(in[3], out[0]);
                  call(in[0], in[1], has_bias ? in[2] : TensorView(), out[0]);
                }};
  if (sum) plan.in_place_input = 3;
  return plan;
}

NodePlan plan_conv(const PlanContext& c) {
  return plan_conv_or_fused(c, false);
}
NodePlan plan_fused_conv(const PlanContext& c) {
  return plan_conv_or_fused(c, true);
}

NodePlan plan_relu(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& x = operand(c, 0, {F});
  ElementwiseParams p;
  apply_profile(p, c.profile);  // the BM1684's relu maps NaN and -0 to +0
  return {{make_operand(F, x.shape)},
          [p](const auto& in, const auto& out) { relu(in[0], out[0], p); }};
}

// Clip: attributes before opset 11, optional scalar inputs since. An absent
// bound is ONNX Runtime's numeric_limits lowest()/max() (so -inf/+inf become
// -FLT_MAX/FLT_MAX), but no bound at all for PyTorch's clamp.
NodePlan plan_clip(const PlanContext& c) {
  const Operand& x = operand(c, 0, {F});
  ClipParams p;
  if (semantics_base(c.profile) == Profile::onnxruntime) {
    p.min = std::numeric_limits<float>::lowest();
    p.max = std::numeric_limits<float>::max();
  }
  if (c.node.opset < 11) {
    expect_attrs(c.node, {"min", "max"});
    p.min = attr_float(c.node, "min", p.min);
    p.max = attr_float(c.node, "max", p.max);
  } else {
    expect_attrs(c.node, {});
    for (size_t i = 1; i < 3; ++i)
      if (present(c, i)) {
        operand(c, i, {F});
        check(c.in[i].shape.empty() || c.in[i].shape == Shape{1}, "Clip", i == 1 ? "min" : "max",
              "shape " + shape_text(c.in[i].shape), "a scalar");
      }
  }
  const bool has_min = present(c, 1), has_max = present(c, 2);
  return {{make_operand(F, x.shape)}, [p, has_min, has_max](const auto& in, const auto& out) {
            ClipParams q = p;  // bounds given as inputs are read at run time
            if (has_min) q.min = *static_cast<const float*>(in[1].raw());
            if (has_max) q.max = *static_cast<const float*>(in[2].raw());
            clip(in[0], out[0], q);
          }};
}

template <BinaryOp op>
NodePlan plan_binary(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& a = operand(c, 0, {F});
  const Operand& b = operand(c, 1, {F});
  Shape y = broadcast_shape(a.shape, b.shape, c.node.op_type.c_str());
  return {{make_operand(F, y)},
          [](const auto& in, const auto& out) { binary(op, in[0], in[1], out[0]); }};
}

// MaxPool / AveragePool (float; integer MaxPool too, whose semantics no profile changes).
template <PoolMode mode>
NodePlan plan_pool(const PlanContext& c) {
  const bool is_max = mode == PoolMode::max;
  if (is_max)
    expect_attrs(c.node, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads",
                          "storage_order", "strides"});
  else
    expect_attrs(c.node, {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape",
                          "pads", "strides"});
  const Operand& x = is_max ? operand(c, 0, {F, Elem::u8, Elem::s8}) : operand(c, 0, {F});
  expect_rank(c, 0, 4, 4);
  Pool2dParams p;
  p.mode = mode;
  const int64_t ceil_mode = attr_int(c.node, "ceil_mode", 0);
  check_range(c.node.op_type.c_str(), "ceil_mode", ceil_mode, 0, 1);
  p.window = onnx_window(c, x.shape, nullptr, ceil_mode != 0);
  const bool cip =
      onnx_count_include_pad(c.node.op_type.c_str(), attr_int(c.node, "count_include_pad", 0));
  // count_include_pad means nothing to MaxPool: keep the value every profile accepts.
  p.count_include_pad = is_max || cip;
  p.opset = c.node.opset;
  if (x.elem == F) apply_profile(p, c.profile);
  Shape y = pool2d_output_shape(x.shape, p);
  return {{make_operand(x.elem, y)},
          [p](const auto& in, const auto& out) { pool2d(in[0], out[0], p); }};
}

template <PoolMode mode>
NodePlan plan_global_pool(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& x = operand(c, 0, {F});
  expect_rank(c, 0, 4, 4);
  Pool2dParams p = global_pool2d_params(x.shape, mode);
  apply_global_profile(p, c.profile);
  if (!c.ort_nchwc) p.nchwc_block = 0;  // ONNX Runtime keeps its plain global pool
  Shape y = pool2d_output_shape(x.shape, p);
  return {{make_operand(F, y)}, [p](const auto& in, const auto& out) { pool2d(in[0], out[0], p); }};
}

NodePlan plan_batchnorm(const PlanContext& c) {
  expect_attrs(c.node, {"epsilon", "momentum", "training_mode", "spatial", "is_test"});
  check(attr_int(c.node, "training_mode", 0) == 0, "BatchNormalization", "training_mode", "1",
        "0 (inference)");
  check(attr_int(c.node, "spatial", 1) == 1, "BatchNormalization", "spatial", "0", "1");
  const Operand& x = operand(c, 0, {F});
  expect_rank(c, 0, 2, 4);
  for (size_t i = 1; i < 5; ++i) {
    operand(c, i, {F});
    check(c.in[i].shape == Shape{x.shape[1]}, "BatchNormalization",
          ("input " + std::to_string(i)).c_str(), "shape " + shape_text(c.in[i].shape),
          "shape " + shape_text({x.shape[1]}) + " (one value per channel)");
  }
  BatchNormParams p{attr_float(c.node, "epsilon", 1e-5f)};
  return {{make_operand(F, x.shape)}, [p](const auto& in, const auto& out) {
            batch_norm(in[0], in[1], in[2], in[3], in[4], out[0], p);
          }};
}

NodePlan plan_softmax(const PlanContext& c) {
  expect_attrs(c.node, {"axis"});
  const Operand& x = operand(c, 0, {F});
  const auto rank = static_cast<int64_t>(x.shape.size());
  check(rank >= 1, "Softmax", "input", "a scalar", "rank 1 to 4");
  // ONNX Runtime's MLAS softmax under onnxruntime (its lane orders and exp, any
  // rank up to 8); the other profiles' softmax takes rank 1 to 4.
  const bool ort = semantics_base(c.profile) == Profile::onnxruntime;
  check(ort || rank <= 4, "Softmax", "input", "shape " + shape_text(x.shape), "rank 1 to 4");
  if (c.node.opset >= 13) {
    const int64_t axis = attr_int(c.node, "axis", -1);
    check_range("Softmax", "axis", axis, -rank, rank - 1);
    return {{make_operand(F, x.shape)}, [axis, ort](const auto& in, const auto& out) {
              if (ort)
                softmax_onnxruntime(in[0], out[0], axis, false);
              else
                softmax(in[0], out[0], axis);
            }};
  }
  // Before opset 13 the input is coerced to 2-D at `axis` and normalised over
  // all the trailing axes at once.
  int64_t axis = attr_int(c.node, "axis", 1);
  check_range("Softmax", "axis", axis, -rank, rank);
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= x.shape[static_cast<size_t>(i)];
  return {{make_operand(F, x.shape)}, [outer, inner, ort](const auto& in, const auto& out) {
            const TensorView a = TensorView::contiguous(in[0].raw(), DType::f32, {outer, inner});
            const TensorView b = TensorView::contiguous(out[0].raw(), DType::f32, {outer, inner});
            if (ort)
              softmax_onnxruntime(a, b, 1, false);
            else
              softmax(a, b, 1);
          }};
}

// A 2-D f32 tensor's transpose, contiguous.
Tensor transposed(const Tensor& t) {
  const TensorView& v = t.view();
  const int64_t rows = v.dim(0), cols = v.dim(1);
  Tensor out(DType::f32, {cols, rows});
  float* d = static_cast<float*>(out.view().raw());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < cols; ++col) d[col * rows + r] = v.at2<float>(r, col);
  return out;
}

NodePlan plan_gemm(const PlanContext& c) {
  expect_attrs(c.node, {"alpha", "beta", "transA", "transB", "broadcast"});
  const Operand& a = operand(c, 0, {F});
  const Operand& b = operand(c, 1, {F});
  expect_rank(c, 0, 2, 2);
  expect_rank(c, 1, 2, 2);
  GemmParams p{attr_float(c.node, "alpha", 1.0f), attr_float(c.node, "beta", 1.0f),
               attr_int(c.node, "transA", 0) != 0, attr_int(c.node, "transB", 0) != 0};
  // ONNX Runtime prepacks a constant b and runs MLAS's SGEMM (with its FMA
  // kernels: the hosts where the conv order is MLAS's too), alpha = 1.
  Conv2dParams order;
  apply_profile(order, c.profile);
  if (semantics_base(c.profile) == Profile::onnxruntime && b.value != nullptr && p.alpha == 1.0f &&
      mlas_nchwc_block(order.accumulation) != 0)
    p.mlas_k_block = 256;
  Shape y = gemm_output_shape(a.shape, b.shape, p);
  const bool has_c = present(c, 2);
  if (has_c) {
    operand(c, 2, {F});
    expect_rank(c, 2, 0, 2);
    broadcast_view(TensorView(reinterpret_cast<void*>(64), DType::f32, c.in[2].shape,
                              contiguous_strides(c.in[2].shape)),
                   y, "Gemm", "C");
  }
  // A constant transposed b (the FC weights of torchvision's exports) is
  // transposed back once here: the fast kernels then read its rows in place
  // instead of gathering a column per output lane on every run.
  std::shared_ptr<const Tensor> b_rows;
  if (p.trans_b && b.value != nullptr)
    b_rows = std::make_shared<const Tensor>(transposed(b.value->tensor));
  if (b_rows) {
    GemmParams q = p;
    q.trans_b = false;
    return {{make_operand(F, y)},
            [call = GemmCall(q), has_c, b_rows](const auto& in, const auto& out) mutable {
              call(in[0], b_rows->view(), has_c ? in[2] : TensorView(), out[0]);
            }};
  }
  // The checks, views and kernel choice once per views, not on every run (GemmCall).
  return {{make_operand(F, y)},
          [call = GemmCall(p), has_c](const auto& in, const auto& out) mutable {
            call(in[0], in[1], has_c ? in[2] : TensorView(), out[0]);
          }};
}

NodePlan plan_matmul(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& a = operand(c, 0, {F});
  const Operand& b = operand(c, 1, {F});
  Shape y = matmul_broadcast_shape(a.shape, b.shape);
  return {{make_operand(F, y)},
          [](const auto& in, const auto& out) { matmul_broadcast(in[0], in[1], out[0]); }};
}

}  // namespace

const std::vector<OpEntry>& fp32_ops() {
  static const std::vector<OpEntry> ops = {
      {"", "Conv", 2, 3, 1, plan_conv},
      {"com.microsoft", "FusedConv", 2, 4, 1, plan_fused_conv},
      {"", "Relu", 1, 1, 1, plan_relu},
      {"", "Clip", 1, 3, 1, plan_clip},
      {"", "Add", 2, 2, 1, plan_binary<BinaryOp::add>},
      {"", "Mul", 2, 2, 1, plan_binary<BinaryOp::mul>},
      {"", "AveragePool", 1, 1, 1, plan_pool<PoolMode::avg>},
      {"", "MaxPool", 1, 1, 1, plan_pool<PoolMode::max>},
      {"", "GlobalAveragePool", 1, 1, 1, plan_global_pool<PoolMode::avg>},
      {"", "GlobalMaxPool", 1, 1, 1, plan_global_pool<PoolMode::max>},
      {"", "BatchNormalization", 5, 5, 1, plan_batchnorm},
      {"", "Softmax", 1, 1, 1, plan_softmax},
      {"", "Gemm", 2, 3, 1, plan_gemm},
      {"", "MatMul", 2, 2, 1, plan_matmul},
  };
  return ops;
}

}  // namespace npukit::onnx
