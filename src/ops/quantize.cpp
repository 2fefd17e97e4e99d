// QuantizeLinear / DequantizeLinear: validation and profiles.
#include "npukit/error.hpp"
#include "npukit/ops/quantized.hpp"
#include "ops/cpu/x8-qelementwise.hpp"
#include "ops/quantized_common.hpp"

namespace npukit {

void apply_profile(QuantizeParams& p, Profile profile) {
  switch (semantics_base(profile)) {
    case Profile::onnxruntime:  // MLAS: fp32 x / scale, then nearbyint (to even)
      p.rounding = Rounding::half_to_even;
      p.multiply_by_reciprocal = false;
      return;
    case Profile::pytorch:  // quantize_per_tensor: nearbyint(x * (1.0f / scale)) + zp
      p.rounding = Rounding::half_to_even;
      p.multiply_by_reciprocal = true;
      return;
    default:
      fail("npukit::quantize_linear", "profile", profile_name(profile),
           "onnxruntime or pytorch (other systems quantize in their own calibration tools)");
  }
}

void quantize_linear(const TensorView& x, const TensorView& y, const QuantizeParams& p) {
  constexpr const char* fn = "npukit::quantize_linear";
  x.expect_dtype(DType::f32, fn, "x.dtype");
  detail::expect_code_dtype(y, fn, "y.dtype");
  expect_kernel_rank(x, fn, "x");
  y.expect_shape(x.shape(), fn, "y");
  detail::check_quant_params(p.q, x.shape(), y.dtype(), fn, "y");
  quantize_kernels().run({x, y, p});
}

void dequantize_linear(const TensorView& x, const TensorView& y, const QuantParams& q) {
  constexpr const char* fn = "npukit::dequantize_linear";
  check(x.dtype() == DType::s8 || x.dtype() == DType::u8 || x.dtype() == DType::s32, fn, "x.dtype",
        dtype_name(x.dtype()), "s8, u8 or s32");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  y.expect_shape(x.shape(), fn, "y");
  detail::check_quant_params(q, x.shape(), x.dtype(), fn, "x");
  if (x.dtype() == DType::s32)
    for (int32_t z : q.zero_point)
      check(z == 0, fn, "x_zero_point", std::to_string(z), "0 for int32 input (ONNX)");
  ref::dequantize_linear(x, y, q);
}

}  // namespace npukit
