// QLinearAdd (com.microsoft): validation, broadcasting and profiles.
#include <algorithm>

#include "npukit/error.hpp"
#include "npukit/ops/quantized.hpp"
#include "ops/cpu/x8-qelementwise.hpp"
#include "ops/quantized_common.hpp"

namespace npukit {

void apply_profile(QLinearAddParams& p, Profile profile) {
  switch (semantics_base(profile)) {
    case Profile::onnxruntime:  // MLAS's AVX2 kernel, the one x86-64 CPUs run
      p.arith = QAddArith::ort_x86_fma;
      p.rounding = Rounding::half_to_even;
      return;
    case Profile::pytorch:  // quantized add: dequantize, add in fp32, quantize (to even)
      p.arith = QAddArith::dequant_add_quant;
      p.rounding = Rounding::half_to_even;
      return;
    default:
      fail("npukit::qlinear_add", "profile", profile_name(profile), "onnxruntime or pytorch");
  }
}

void qlinear_add(const TensorView& a, const TensorView& b, const TensorView& c,
                 const QLinearAddParams& p) {
  constexpr const char* fn = "npukit::qlinear_add";
  detail::expect_code_dtype(a, fn, "A.dtype");
  check(b.dtype() == a.dtype(), fn, "B.dtype", dtype_name(b.dtype()), dtype_name(a.dtype()));
  check(c.dtype() == a.dtype(), fn, "C.dtype", dtype_name(c.dtype()), dtype_name(a.dtype()));
  c.expect_shape(broadcast_shape(a.shape(), b.shape(), fn), fn, "C");
  detail::check_scale(p.a_scale, fn, "A_scale");
  detail::check_scale(p.b_scale, fn, "B_scale");
  detail::check_scale(p.c_scale, fn, "C_scale");
  detail::check_zero_point(p.a_zero_point, a.dtype(), fn, "A_zero_point");
  detail::check_zero_point(p.b_zero_point, a.dtype(), fn, "B_zero_point");
  detail::check_zero_point(p.c_zero_point, a.dtype(), fn, "C_zero_point");
  qadd_kernels().run({a, b, c, p});
}

}  // namespace npukit
