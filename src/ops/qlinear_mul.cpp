// QLinearMul: validation and profiles.
#include "npukit/ops/qlinear_mul.hpp"

#include <cmath>

#include "npukit/error.hpp"
#include "npukit/ops/binary.hpp"
#include "ops/quantized_common.hpp"

namespace npukit {

void apply_profile(QLinearMulParams& p, Profile profile) {
  check(semantics_base(profile) == Profile::onnxruntime, "npukit::qlinear_mul", "profile",
        profile_name(profile), "onnxruntime (QLinearMul is ONNX Runtime's)");
  p.arith = QMulArith::ort_x86_sse2;  // MLAS runs its SSE2 kernel on every x86 CPU
}

void qlinear_mul(const TensorView& a, const TensorView& b, const TensorView& c,
                 const QLinearMulParams& p) {
  constexpr const char* fn = "npukit::qlinear_mul";
  detail::expect_code_dtype(a, fn, "a.dtype");
  b.expect_dtype(a.dtype(), fn, "b.dtype");
  c.expect_dtype(a.dtype(), fn, "c.dtype");
  const Shape shape = broadcast_shape(a.shape(), b.shape(), fn);
  c.expect_shape(shape, fn, "c");
  const detail::CodeRange r = detail::code_range(a.dtype());
  for (auto [name, zp] :
       {std::pair{"a_zero_point", p.a_zero_point}, std::pair{"b_zero_point", p.b_zero_point},
        std::pair{"c_zero_point", p.c_zero_point}})
    check_range(fn, name, zp, r.lo, r.hi);
  for (auto [name, s] : {std::pair{"a_scale", p.a_scale}, std::pair{"b_scale", p.b_scale},
                         std::pair{"c_scale", p.c_scale}})
    check(std::isfinite(s) && s > 0, fn, name, std::to_string(s), "a finite scale > 0");
  ref::qlinear_mul(broadcast_view(a, shape, fn, "a"), broadcast_view(b, shape, fn, "b"), c, p);
}

}  // namespace npukit
