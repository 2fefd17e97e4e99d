// Planners of the quantized operators: ONNX's QuantizeLinear,
// DequantizeLinear, QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger and
// ONNX Runtime's com.microsoft QLinearAveragePool, QLinearGlobalAveragePool
// and QLinearAdd. Scales and zero points must be constants (initializers or
// Constant nodes): they are part of the plan. The arithmetic is the core's
// (npukit/ops/quantized.hpp) under the node's profile.
#include <cstring>

#include "npukit/error.hpp"
#include "npukit/ops/conv2d.hpp"
#include "npukit/ops/matmul.hpp"
#include "npukit/ops/quantized.hpp"
#include "onnx/attributes.hpp"
#include "ops/qlinear_conv_call.hpp"

namespace npukit::onnx {

namespace {

constexpr auto F = Elem::f32;
constexpr auto U8 = Elem::u8;
constexpr auto S8 = Elem::s8;

// A constant scale input: one value, or one per index of an axis.
// A scale or zero point fed as a graph input (ONNX's backend tests do so) is
// checked here by type and shape and read by the kernel at run time; the
// plan holds a placeholder of the right length.
bool at_run_time(const PlanContext& c, size_t i) {
  return present(c, i) && c.in[i].value == nullptr;
}

uint32_t run_time_mask(const PlanContext& c) {
  uint32_t m = 0;
  for (size_t i = 0; i < c.in.size() && i < 32; ++i)
    if (at_run_time(c, i)) m |= 1u << i;
  return m;
}

std::vector<float> read_floats(const TensorView& t) {
  const float* v = t.data<float>();
  return {v, v + t.numel()};
}

std::vector<int32_t> read_ints(const TensorView& t) {
  std::vector<int32_t> out;
  for (int64_t i = 0; i < t.numel(); ++i)
    out.push_back(t.dtype() == DType::u8   ? t.data<uint8_t>()[i]
                  : t.dtype() == DType::s8 ? t.data<int8_t>()[i]
                                           : t.data<int32_t>()[i]);
  return out;
}

std::vector<float> scales(const PlanContext& c, size_t i, const char* what) {
  if (at_run_time(c, i)) {
    const Operand& o = operand(c, i, {F});
    check(o.shape.size() <= 1, c.node.op_type.c_str(), what, "shape " + shape_text(o.shape),
          "a scalar or a 1-D tensor");
    return std::vector<float>(static_cast<size_t>(shape_numel(o.shape)), 1.0f);
  }
  const Constant& k = constant_input(c, i, what);
  check(k.elem == F, c.node.op_type.c_str(), what, elem_name(k.elem), "float");
  check(k.shape.size() <= 1, c.node.op_type.c_str(), what, "shape " + shape_text(k.shape),
        "a scalar or a 1-D tensor");
  return k.tensor.to_vector<float>();
}

// A constant zero point (absent: zeros of type `dflt`); its type is returned in `elem`.
std::vector<int32_t> zero_points(const PlanContext& c, size_t i, const char* what, Elem& elem,
                                 std::initializer_list<Elem> allowed) {
  if (!present(c, i)) return {0};
  if (at_run_time(c, i)) {
    const Operand& o = operand(c, i, allowed);
    check(o.shape.size() <= 1, c.node.op_type.c_str(), what, "shape " + shape_text(o.shape),
          "a scalar or a 1-D tensor");
    elem = o.elem;
    return std::vector<int32_t>(static_cast<size_t>(shape_numel(o.shape)), 0);
  }
  const Constant& k = constant_input(c, i, what);
  bool ok = false;
  for (Elem e : allowed) ok = ok || k.elem == e;
  check(ok && k.elem != Elem::s64, c.node.op_type.c_str(), what, elem_name(k.elem),
        "uint8 or int8 (of the quantized tensor's type)");
  check(k.shape.size() <= 1, c.node.op_type.c_str(), what, "shape " + shape_text(k.shape),
        "a scalar or a 1-D tensor");
  elem = k.elem;
  std::vector<int32_t> out;
  if (k.elem == U8)
    for (uint8_t v : k.tensor.to_vector<uint8_t>()) out.push_back(v);
  else if (k.elem == S8)
    for (int8_t v : k.tensor.to_vector<int8_t>()) out.push_back(v);
  else
    for (int32_t v : k.tensor.to_vector<int32_t>()) out.push_back(v);
  return out;
}

float scalar_scale(const PlanContext& c, size_t i, const char* what) {
  const std::vector<float> s = scales(c, i, what);
  check(s.size() == 1, c.node.op_type.c_str(), what, std::to_string(s.size()) + " values",
        "one value (per-tensor)");
  return s[0];
}

int32_t scalar_zp(const PlanContext& c, size_t i, const char* what, Elem want) {
  Elem e = want;
  const std::vector<int32_t> z = zero_points(c, i, what, e, {U8, S8});
  check(z.size() == 1, c.node.op_type.c_str(), what, std::to_string(z.size()) + " values",
        "one value (per-tensor)");
  check(e == want, c.node.op_type.c_str(), what, elem_name(e),
        std::string(elem_name(want)) + " (the type of the tensor it quantizes)");
  return z[0];
}

int64_t norm_axis(const PlanContext& c, int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  check_range(c.node.op_type.c_str(), "axis", axis, -r, r - 1);
  return axis < 0 ? axis + r : axis;
}

// ---- QuantizeLinear / DequantizeLinear ----

NodePlan plan_quantize(const PlanContext& c) {
  expect_attrs(c.node, {"axis", "saturate", "block_size", "output_dtype"});
  check(attr_int(c.node, "block_size", 0) == 0, "QuantizeLinear", "block_size",
        std::to_string(attr_int(c.node, "block_size", 0)),
        "0 (blocked quantization is not supported)");
  const Operand& x = operand(c, 0, {F});
  Elem ye = U8;
  QuantizeParams p;
  p.q.scale = scales(c, 1, "y_scale");
  p.q.zero_point = zero_points(c, 2, "y_zero_point", ye, {U8, S8});
  if (has_attr(c.node, "output_dtype") && attr_int(c.node, "output_dtype", 0) != 0) {
    const auto od = elem_from_onnx(static_cast<int32_t>(attr_int(c.node, "output_dtype", 0)));
    check(od && (*od == U8 || *od == S8) && (!present(c, 2) || *od == ye), "QuantizeLinear",
          "output_dtype", std::to_string(attr_int(c.node, "output_dtype", 0)),
          "uint8 (2) or int8 (3), matching y_zero_point");
    ye = *od;
  }
  if (p.q.scale.size() > 1 || p.q.zero_point.size() > 1)
    p.q.axis = norm_axis(c, attr_int(c.node, "axis", 1), x.shape.size());
  apply_profile(p, c.profile);
  return {{make_operand(ye, x.shape)}, [p, m = run_time_mask(c)](const auto& in, const auto& out) {
            QuantizeParams q = p;
            if (m & 2u) q.q.scale = read_floats(in[1]);
            if (m & 4u) q.q.zero_point = read_ints(in[2]);
            quantize_linear(in[0], out[0], q);
          }};
}

NodePlan plan_dequantize(const PlanContext& c) {
  expect_attrs(c.node, {"axis", "block_size"});
  check(attr_int(c.node, "block_size", 0) == 0, "DequantizeLinear", "block_size",
        std::to_string(attr_int(c.node, "block_size", 0)),
        "0 (blocked quantization is not supported)");
  const Operand& x = operand(c, 0, {U8, S8, Elem::s32});
  Elem ze = x.elem;
  QuantParams q;
  q.scale = scales(c, 1, "x_scale");
  q.zero_point = zero_points(c, 2, "x_zero_point", ze, {U8, S8, Elem::s32});
  check(ze == x.elem, "DequantizeLinear", "x_zero_point", elem_name(ze), elem_name(x.elem));
  if (q.scale.size() > 1 || q.zero_point.size() > 1)
    q.axis = norm_axis(c, attr_int(c.node, "axis", 1), x.shape.size());
  return {{make_operand(F, x.shape)}, [q, m = run_time_mask(c)](const auto& in, const auto& out) {
            QuantParams r = q;
            if (m & 2u) r.scale = read_floats(in[1]);
            if (m & 4u) r.zero_point = read_ints(in[2]);
            dequantize_linear(in[0], out[0], r);
          }};
}

// ---- QLinearConv / ConvInteger ----

// The node's call validated once, when every input but x is a constant (the
// run then skips qlinear_conv's per-call checks); null when something is fed
// at run time or the checks fail (the run then raises qlinear_conv's error).
std::shared_ptr<const QLinearConvCall> planned_call(
    const PlanContext& c, const QLinearConvParams& p,
    const std::shared_ptr<const QConvPackedWeights>& packed, uint32_t run_time) {
  const Operand& x = c.in[0];
  const Operand& w = c.in[3];
  if ((run_time & ~1u) != 0 || w.value == nullptr) return nullptr;
  const TensorView bias = p.has_bias ? c.in[8].value->tensor.view() : TensorView();
  try {
    return std::make_shared<const QLinearConvCall>(*dtype_of(x.elem), x.shape,
                                                   w.value->tensor.view(), bias, p, packed);
  } catch (const Error&) {
    return nullptr;
  }
}

NodePlan plan_qlinear_conv(const PlanContext& c) {
  expect_attrs(c.node, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  const Operand& x = operand(c, 0, {U8, S8});
  const Operand& w = operand(c, 3, {U8, S8});
  expect_rank(c, 0, 4, 4);
  expect_rank(c, 3, 4, 4);
  QLinearConvParams p;
  p.window = onnx_window(c, x.shape, &w.shape, false);
  p.groups = attr_int(c.node, "group", 1);
  p.x_scale = scalar_scale(c, 1, "x_scale");
  p.x_zero_point = scalar_zp(c, 2, "x_zero_point", x.elem);
  p.w.scale = scales(c, 4, "w_scale");
  Elem we = w.elem;
  p.w.zero_point = zero_points(c, 5, "w_zero_point", we, {U8, S8});
  check(we == w.elem, "QLinearConv", "w_zero_point", elem_name(we), elem_name(w.elem));
  p.w.axis = 0;
  p.y_scale = scalar_scale(c, 6, "y_scale");
  const Elem ye = present(c, 7) ? c.in[7].elem : x.elem;
  p.y_zero_point = scalar_zp(c, 7, "y_zero_point", ye);
  p.has_bias = present(c, 8);
  if (p.has_bias) {
    operand(c, 8, {Elem::s32});
    expect_rank(c, 8, 1, 1);
  }
  apply_profile(p, c.profile);
  const Shape y = qlinear_conv_output_shape(x.shape, w.shape, p);
  // Constant weights are packed once here for every run of the plan.
  std::shared_ptr<const QConvPackedWeights> packed;
  // With a constant bias and constant scales and zero points, the per-channel
  // requantization data is built here too.
  if (w.value) {
    const TensorView bias =
        p.has_bias && c.in[8].value ? c.in[8].value->tensor.view() : TensorView();
    packed = pack_qlinear_conv_weights(w.value->tensor.view(), bias, p, *dtype_of(x.elem));
  }
  const uint32_t m = run_time_mask(c);
  const std::shared_ptr<const QLinearConvCall> call = planned_call(c, p, packed, m);
  return {{make_operand(ye, y)}, [p, packed, m, call](const auto& in, const auto& out) {
            const TensorView bias = p.has_bias ? in[8] : TensorView();
            if (call) {  // validated at plan time
              call->run(in[0], in[3], bias, out[0]);
              return;
            }
            if ((m & (2u | 4u | 16u | 32u | 64u | 128u)) == 0) {  // no per-call copy of p
              qlinear_conv(in[0], in[3], bias, out[0], p, packed.get());
              return;
            }
            QLinearConvParams q = p;
            if (m & 2u) q.x_scale = read_floats(in[1])[0];
            if (m & 4u) q.x_zero_point = read_ints(in[2])[0];
            if (m & 16u) q.w.scale = read_floats(in[4]);
            if (m & 32u) q.w.zero_point = read_ints(in[5]);
            if (m & 64u) q.y_scale = read_floats(in[6])[0];
            if (m & 128u) q.y_zero_point = read_ints(in[7])[0];
            qlinear_conv(in[0], in[3], bias, out[0], q, packed.get());
          }};
}

NodePlan plan_conv_integer(const PlanContext& c) {
  expect_attrs(c.node, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  const Operand& x = operand(c, 0, {U8, S8});
  const Operand& w = operand(c, 1, {U8, S8});
  expect_rank(c, 0, 4, 4);
  expect_rank(c, 1, 4, 4);
  ConvIntegerParams p;
  p.window = onnx_window(c, x.shape, &w.shape, false);
  p.groups = attr_int(c.node, "group", 1);
  if (present(c, 2)) p.x_zero_point = scalar_zp(c, 2, "x_zero_point", x.elem);
  Elem we = w.elem;
  p.w_zero_point = zero_points(c, 3, "w_zero_point", we, {U8, S8});
  check(we == w.elem, "ConvInteger", "w_zero_point", elem_name(we), elem_name(w.elem));
  Conv2dParams shape_p;
  shape_p.window = p.window;
  shape_p.groups = p.groups;
  const Shape y = conv2d_output_shape(x.shape, w.shape, shape_p);
  std::shared_ptr<const QConvPackedWeights> packed;
  if (w.value) packed = pack_conv_integer_weights(w.value->tensor.view(), p, *dtype_of(x.elem));
  return {{make_operand(Elem::s32, y)},
          [p, packed, m = run_time_mask(c)](const auto& in, const auto& out) {
            ConvIntegerParams q = p;
            if (m & 4u) q.x_zero_point = read_ints(in[2])[0];
            if (m & 8u) q.w_zero_point = read_ints(in[3]);
            conv_integer(in[0], in[1], out[0], q, packed.get());
          }};
}

// ---- QLinearMatMul / MatMulInteger ----

NodePlan plan_qlinear_matmul(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& a = operand(c, 0, {U8, S8});
  const Operand& b = operand(c, 3, {U8, S8});
  QLinearMatMulParams p;
  p.a_scale = scalar_scale(c, 1, "a_scale");
  p.a_zero_point = scalar_zp(c, 2, "a_zero_point", a.elem);
  p.b.scale = scales(c, 4, "b_scale");
  Elem be = b.elem;
  p.b.zero_point = zero_points(c, 5, "b_zero_point", be, {U8, S8});
  check(be == b.elem, "QLinearMatMul", "b_zero_point", elem_name(be), elem_name(b.elem));
  p.b.axis = static_cast<int64_t>(b.shape.size()) - 1;
  p.y_scale = scalar_scale(c, 6, "y_scale");
  const Elem ye = present(c, 7) ? c.in[7].elem : a.elem;
  p.y_zero_point = scalar_zp(c, 7, "y_zero_point", ye);
  apply_profile(p, c.profile);
  const Shape y = matmul_broadcast_shape(a.shape, b.shape);
  // A constant 2-D b is packed once here for every run of the plan.
  std::shared_ptr<const QConvPackedWeights> packed;
  if (b.value && b.shape.size() == 2)
    packed = pack_qlinear_matmul_weights(b.value->tensor.view(), p, *dtype_of(a.elem));
  return {{make_operand(ye, y)},
          [p, packed, m = run_time_mask(c)](const auto& in, const auto& out) {
            QLinearMatMulParams q = p;
            if (m & 2u) q.a_scale = read_floats(in[1])[0];
            if (m & 4u) q.a_zero_point = read_ints(in[2])[0];
            if (m & 16u) q.b.scale = read_floats(in[4]);
            if (m & 32u) q.b.zero_point = read_ints(in[5]);
            if (m & 64u) q.y_scale = read_floats(in[6])[0];
            if (m & 128u) q.y_zero_point = read_ints(in[7])[0];
            qlinear_matmul(in[0], in[3], out[0], q, packed.get());
          }};
}

NodePlan plan_matmul_integer(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& a = operand(c, 0, {U8, S8});
  const Operand& b = operand(c, 1, {U8, S8});
  MatMulIntegerParams p;
  if (present(c, 2)) p.a_zero_point = scalar_zp(c, 2, "a_zero_point", a.elem);
  Elem be = b.elem;
  p.b_zero_point = zero_points(c, 3, "b_zero_point", be, {U8, S8});
  check(be == b.elem, "MatMulInteger", "b_zero_point", elem_name(be), elem_name(b.elem));
  apply_profile(p, c.profile);  // u8 x s8 accumulation (ORT's MLAS kernel)
  const Shape y = matmul_broadcast_shape(a.shape, b.shape);
  return {{make_operand(Elem::s32, y)}, [p, m = run_time_mask(c)](const auto& in, const auto& out) {
            MatMulIntegerParams q = p;
            if (m & 4u) q.a_zero_point = read_ints(in[2])[0];
            if (m & 8u) q.b_zero_point = read_ints(in[3]);
            matmul_integer(in[0], in[1], out[0], q);
          }};
}

// ---- com.microsoft QLinearAveragePool / QLinearGlobalAveragePool / QLinearAdd ----

// With channels_last the ONNX tensor is (N, H, W, C); the core takes logical
// (N, C, H, W) views whatever the strides.
TensorView nchw_view(const TensorView& t, bool channels_last) {
  if (!channels_last) return t;
  return TensorView(t.raw(), t.dtype(), {t.dim(0), t.dim(3), t.dim(1), t.dim(2)},
                    {t.stride(0), t.stride(3), t.stride(1), t.stride(2)});
}

template <bool global>
NodePlan plan_qlinear_avg_pool(const PlanContext& c) {
  if (global)
    expect_attrs(c.node, {"channels_last"});
  else
    expect_attrs(c.node, {"auto_pad", "ceil_mode", "channels_last", "count_include_pad",
                          "kernel_shape", "pads", "strides"});
  const Operand& x = operand(c, 0, {U8, S8});
  expect_rank(c, 0, 4, 4);
  const bool cl = attr_int(c.node, "channels_last", 0) != 0;
  const Shape nchw = cl ? Shape{x.shape[0], x.shape[3], x.shape[1], x.shape[2]} : x.shape;
  QLinearAvgPoolParams p;
  if (global) {
    p.window.kernel_h = nchw[2];
    p.window.kernel_w = nchw[3];
  } else {
    const int64_t ceil_mode = attr_int(c.node, "ceil_mode", 0);
    check_range(c.node.op_type.c_str(), "ceil_mode", ceil_mode, 0, 1);
    p.window = onnx_window(c, nchw, nullptr, ceil_mode != 0);
    p.count_include_pad =
        onnx_count_include_pad(c.node.op_type.c_str(), attr_int(c.node, "count_include_pad", 0));
  }
  for (size_t i = 1; i < c.in.size();
       ++i)  // only the convolutions and matmuls read them at run time
    if (present(c, i)) constant_input(c, i, "a scale or zero point");
  p.x_scale = scalar_scale(c, 1, "x_scale");
  p.x_zero_point = scalar_zp(c, 2, "x_zero_point", x.elem);
  p.y_scale = scalar_scale(c, 3, "y_scale");
  p.y_zero_point = scalar_zp(c, 4, "y_zero_point", x.elem);
  apply_profile(p, c.profile);
  const Shape y = qlinear_average_pool_output_shape(nchw, p);
  const Shape ys = cl ? Shape{y[0], y[2], y[3], y[1]} : y;
  return {{make_operand(x.elem, ys)}, [p, cl](const auto& in, const auto& out) {
            if (global)
              qlinear_global_average_pool(nchw_view(in[0], cl), nchw_view(out[0], cl), p);
            else
              qlinear_average_pool(nchw_view(in[0], cl), nchw_view(out[0], cl), p);
          }};
}

NodePlan plan_qlinear_add(const PlanContext& c) {
  expect_attrs(c.node, {});
  const Operand& a = operand(c, 0, {U8, S8});
  const Operand& b = operand(c, 3, {a.elem});
  QLinearAddParams p;
  for (size_t i : {1, 2, 4, 5, 6, 7})
    if (present(c, i)) constant_input(c, i, "a scale or zero point");
  p.a_scale = scalar_scale(c, 1, "A_scale");
  p.a_zero_point = scalar_zp(c, 2, "A_zero_point", a.elem);
  p.b_scale = scalar_scale(c, 4, "B_scale");
  p.b_zero_point = scalar_zp(c, 5, "B_zero_point", a.elem);
  p.c_scale = scalar_scale(c, 6, "C_scale");
  p.c_zero_point = scalar_zp(c, 7, "C_zero_point", a.elem);
  apply_profile(p, c.profile);
  const Shape y = broadcast_shape(a.shape, b.shape, "QLinearAdd");
  return {{make_operand(a.elem, y)},
          [p](const auto& in, const auto& out) { qlinear_add(in[0], in[3], out[0], p); }};
}

}  // namespace

const std::vector<OpEntry>& quant_ops() {
  static const std::vector<OpEntry> ops = {
      {"", "QuantizeLinear", 2, 3, 1, plan_quantize},
      {"", "DequantizeLinear", 2, 3, 1, plan_dequantize},
      {"", "QLinearConv", 8, 9, 1, plan_qlinear_conv},
      {"", "ConvInteger", 2, 4, 1, plan_conv_integer},
      {"", "QLinearMatMul", 8, 8, 1, plan_qlinear_matmul},
      {"", "MatMulInteger", 2, 4, 1, plan_matmul_integer},
      {"com.microsoft", "QLinearAveragePool", 4, 5, 1, plan_qlinear_avg_pool<false>},
      {"com.microsoft", "QLinearGlobalAveragePool", 5, 5, 1, plan_qlinear_avg_pool<true>},
      {"com.microsoft", "QLinearAdd", 7, 8, 1, plan_qlinear_add},
  };
  return ops;
}

}  // namespace npukit::onnx
