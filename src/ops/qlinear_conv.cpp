// QLinearConv / ConvInteger: validation, profiles, requantization.
#include <cstdlib>
#include <utility>

#include "npukit/error.hpp"
#include "npukit/ops/conv2d.hpp"
#include "npukit/ops/quantized.hpp"
#include "ops/cpu/qconv_problem.hpp"
#include "ops/quantized_common.hpp"

namespace npukit {

namespace {

// Geometry (the fp32 convolution's rules) plus the int32 accumulator bound.
Shape checked_output_shape(const TensorView& x, const TensorView& w, const Window2d& window,
                           int64_t groups, const char* fn) {
  detail::expect_code_dtype(x, fn, "x.dtype");
  detail::expect_code_dtype(w, fn, "w.dtype");
  Conv2dParams cp;
  cp.window = window;
  cp.groups = groups;
  Shape out = conv2d_output_shape(x.shape(), w.shape(), cp);
  // (The message is built only on failure: this runs on every call.)
  if (window.ins_h != 0 || window.ins_w != 0)
    fail(fn, "ins", std::to_string(window.ins_h) + "x" + std::to_string(window.ins_w), "0x0");
  // Each output sums K = C/groups*KH*KW products of magnitude <= 255*255.
  check_range(fn, "C/groups*KH*KW", w.dim(1) * w.dim(2) * w.dim(3), 1, kMaxInt32Products);
  return out;
}

void check_w_zero_points(const std::vector<int32_t>& zp, const TensorView& w, const char* fn) {
  check(zp.size() <= 1 || static_cast<int64_t>(zp.size()) == w.dim(0), fn, "w_zero_point",
        std::to_string(zp.size()) + " values", "1 or OC = " + std::to_string(w.dim(0)));
  for (int32_t z : zp) detail::check_zero_point(z, w.dtype(), fn, "w_zero_point");
}

}  // namespace

const char* multiplier_order_name(MultiplierOrder m) {
  return m == MultiplierOrder::divide_by_y_scale ? "divide_by_y_scale" : "times_inverse_y_scale";
}

float requantization_multiplier(MultiplierOrder m, float x_scale, float w_scale, float y_scale) {
  if (m == MultiplierOrder::divide_by_y_scale) return (x_scale * w_scale) / y_scale;
  const float inverse_y = 1.0f / y_scale;
  return (w_scale * x_scale) * inverse_y;
}

void apply_profile(QLinearConvParams& p, Profile profile) {
  switch (semantics_base(profile)) {
    case Profile::onnxruntime:  // MLAS: float(acc) * scale, cvtps2dq (to even)
      p.rounding = Rounding::half_to_even;
      p.accumulation = profile_accumulation(profile);
      p.multiplier = MultiplierOrder::divide_by_y_scale;
      return;
    case Profile::pytorch:  // QNNPACK: nearbyint(float(acc) * (w*x * (1/y)))
      p.rounding = Rounding::half_to_even;
      p.accumulation = profile_accumulation(profile);
      p.multiplier = MultiplierOrder::times_inverse_y_scale;
      return;
    default:
      fail("npukit::qlinear_conv", "profile", profile_name(profile), "onnxruntime or pytorch");
  }
}

Shape qlinear_conv_output_shape(const Shape& x, const Shape& w, const QLinearConvParams& p) {
  Conv2dParams cp;
  cp.window = p.window;
  cp.groups = p.groups;
  return conv2d_output_shape(x, w, cp);
}

namespace {

QConvProblem checked_problem(const TensorView& x, const TensorView& w, const TensorView& bias,
                             const TensorView& y, const QLinearConvParams& p) {
  constexpr const char* fn = "npukit::qlinear_conv";
  const Shape out = checked_output_shape(x, w, p.window, p.groups, fn);
  y.expect_shape(out, fn, "y");
  check(y.dtype() == x.dtype(), fn, "y.dtype", dtype_name(y.dtype()), dtype_name(x.dtype()));
  detail::check_scale(p.x_scale, fn, "x_scale");
  detail::check_scale(p.y_scale, fn, "y_scale");
  detail::check_zero_point(p.x_zero_point, x.dtype(), fn, "x_zero_point");
  detail::check_zero_point(p.y_zero_point, y.dtype(), fn, "y_zero_point");
  QuantParams wq = p.w;
  wq.axis = 0;
  detail::check_quant_params(wq, w.shape(), w.dtype(), fn, "w");
  const int64_t OC = w.dim(0);
  const int64_t K = w.dim(1) * w.dim(2) * w.dim(3);
  if (p.has_bias) {
    bias.expect_dtype(DType::s32, fn, "B.dtype");
    // (Messages are formatted only on failure: this runs on every call.)
    if (!(bias.rank() == 1 && bias.dim(0) == OC))
      fail(fn, "B", "shape " + shape_text(bias.shape()),
           shape_text({OC}) + " (one int32 per output channel)");
    // |acc + bias| <= K*255*255 + |bias| must fit int32.
    const int64_t room = INT32_MAX - K * 65025;
    for (int64_t o = 0; o < OC; ++o) {
      const int64_t b = static_cast<const int32_t*>(bias.raw())[o * bias.stride(0)];
      if (std::llabs(b) > room)
        fail(fn, "B", std::to_string(b),
             "|B| <= " + std::to_string(room) + " so that the int32 accumulator cannot overflow");
    }
  }
  QConvProblem q;
  q.x = x, q.w = w, q.y = y;
  if (p.has_bias) q.bias = bias;
  q.window = p.window;
  q.groups = p.groups;
  q.x_zp = p.x_zero_point;
  q.wq = std::move(wq);  // no second copy of OC scales and zero points per call
  q.x_scale = p.x_scale, q.y_scale = p.y_scale, q.y_zp = p.y_zero_point;
  q.multiplier_order = p.multiplier;
  q.rounding = p.rounding;
  // MLAS runs a depthwise convolution through its exact depthwise kernel.
  q.depthwise = w.dim(1) == 1 && OC == p.groups;
  q.pairs = detail::uses_int16_pairs(p.accumulation, x.dtype(), w.dtype()) && !q.depthwise;
  return q;
}

QConvProblem checked_problem(const TensorView& x, const TensorView& w, const TensorView& y,
                             const ConvIntegerParams& p) {
  constexpr const char* fn = "npukit::conv_integer";
  const Shape out = checked_output_shape(x, w, p.window, p.groups, fn);
  y.expect_dtype(DType::s32, fn, "y.dtype");
  y.expect_shape(out, fn, "y");
  detail::check_zero_point(p.x_zero_point, x.dtype(), fn, "x_zero_point");
  check_w_zero_points(p.w_zero_point, w, fn);
  QConvProblem q;
  q.x = x, q.w = w, q.y = y;
  q.window = p.window;
  q.groups = p.groups;
  q.x_zp = p.x_zero_point;
  q.wq.scale = {1.0f};
  q.wq.zero_point = p.w_zero_point;
  q.wq.axis = 0;
  q.requantize = false;
  q.depthwise = w.dim(1) == 1 && w.dim(0) == p.groups;
  return q;
}

}  // namespace

QConvProblem qlinear_conv_problem(const TensorView& x, const TensorView& w, const TensorView& bias,
                                  const TensorView& y, const QLinearConvParams& p) {
  return checked_problem(x, w, bias, y, p);
}
QConvProblem conv_integer_problem(const TensorView& x, const TensorView& w, const TensorView& y,
                                  const ConvIntegerParams& p) {
  return checked_problem(x, w, y, p);
}

void qlinear_conv(const TensorView& x, const TensorView& w, const TensorView& bias,
                  const TensorView& y, const QLinearConvParams& p) {
  qlinear_conv(x, w, bias, y, p, nullptr);
}

void qlinear_conv(const TensorView& x, const TensorView& w, const TensorView& bias,
                  const TensorView& y, const QLinearConvParams& p,
                  const QConvPackedWeights* packed) {
  QConvProblem q = checked_problem(x, w, bias, y, p);
  q.packed = packed;
  qconv_kernels().run(q);
}

std::shared_ptr<const QConvPackedWeights> pack_qlinear_conv_weights(const TensorView& w,
                                                                    const QLinearConvParams& p,
                                                                    DType x_dtype) {
  const bool depthwise = w.dim(1) == 1 && w.dim(0) == p.groups;
  const bool pairs = detail::uses_int16_pairs(p.accumulation, x_dtype, w.dtype()) && !depthwise;
  return pack_qconv(w, p.w, p.groups, pairs, x_dtype);
}

std::shared_ptr<const QConvPackedWeights> pack_qlinear_conv_weights(const TensorView& w,
                                                                    const TensorView& bias,
                                                                    const QLinearConvParams& p,
                                                                    DType x_dtype) {
  auto packed = pack_qlinear_conv_weights(w, p, x_dtype);
  // The requantization data too, when the parameters are well-formed (a call
  // with others, or bad ones, builds its own or fails its checks as before).
  const int64_t OC = w.dim(0);
  const auto per_channel_ok = [OC](size_t n) { return n == 1 || static_cast<int64_t>(n) == OC; };
  const bool bias_ok = !p.has_bias || (bias.raw() != nullptr && bias.dtype() == DType::s32 &&
                                       bias.rank() == 1 && bias.dim(0) == OC);
  if (!bias_ok || !per_channel_ok(p.w.scale.size()) ||
      !(p.w.zero_point.empty() || per_channel_ok(p.w.zero_point.size())))
    return packed;
  QConvProblem q;
  q.w = w;
  if (p.has_bias) q.bias = bias;
  q.groups = p.groups;
  q.x_zp = p.x_zero_point;
  q.wq = p.w;
  q.wq.axis = 0;
  q.x_scale = p.x_scale, q.y_scale = p.y_scale, q.y_zp = p.y_zero_point;
  q.multiplier_order = p.multiplier;
  // Only this function holds the new pack: it may still be completed.
  auto pk = std::const_pointer_cast<QConvPackedWeights>(packed);
  pk->epilogue = std::make_shared<const QConvEpilogue>(build_qconv_epilogue(q, *pk));
  return packed;
}

std::shared_ptr<const QConvPackedWeights> pack_conv_integer_weights(const TensorView& w,
                                                                    const ConvIntegerParams& p,
                                                                    DType x_dtype) {
  QuantParams wq;
  wq.zero_point = p.w_zero_point;
  return pack_qconv(w, wq, p.groups, false, x_dtype);
}

void conv_integer(const TensorView& x, const TensorView& w, const TensorView& y,
                  const ConvIntegerParams& p) {
  conv_integer(x, w, y, p, nullptr);
}

void conv_integer(const TensorView& x, const TensorView& w, const TensorView& y,
                  const ConvIntegerParams& p, const QConvPackedWeights* packed) {
  QConvProblem q = checked_problem(x, w, y, p);
  q.packed = packed;
  qconv_kernels().run(q);
}

}  // namespace npukit
