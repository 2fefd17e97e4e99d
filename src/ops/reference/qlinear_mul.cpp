// Reference of QLinearMul: one output at a time, in the arithmetic of the params.
#include <algorithm>
#include <cmath>

#include "npukit/ops/qlinear_mul.hpp"
#include "npukit/quant/rounding.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::ref {

namespace {

// x86 cvtps2dq under the default rounding mode: half to even, and the
// "integer indefinite" INT32_MIN for NaN and values outside int32.
int32_t cvtps_epi32(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return INT32_MIN;
  return static_cast<int32_t>(std::nearbyint(v));
}

int32_t mul_code(int32_t a, int32_t b, const QLinearMulParams& p, const detail::CodeRange& r) {
  const int32_t da = a - p.a_zero_point, db = b - p.b_zero_point;
  if (p.arith == QMulArith::ort_x86_sse2) {
    const float ratio = p.a_scale * p.b_scale / p.c_scale;
    const float scaled = static_cast<float>(da * db) * ratio;
    const int32_t v = cvtps_epi32(scaled + static_cast<float>(p.c_zero_point));
    return std::clamp(v, r.lo, r.hi);
  }
  const float lo = static_cast<float>(r.lo - p.c_zero_point);
  const float hi = static_cast<float>(r.hi - p.c_zero_point);
  const float v =
      p.a_scale * static_cast<float>(da) * (p.b_scale * static_cast<float>(db)) / p.c_scale;
  const float c = std::isnan(v) ? lo : std::clamp(v, lo, hi);
  return static_cast<int32_t>(round_to_int(c, Rounding::half_to_even)) + p.c_zero_point;
}

}  // namespace

void qlinear_mul(const TensorView& a, const TensorView& b, const TensorView& c,
                 const QLinearMulParams& p) {
  const detail::CodeRange r = detail::code_range(c.dtype());
  // Up to 4 axes, padded with leading size-1 axes.
  int64_t dims[4] = {1, 1, 1, 1}, sa[4] = {0, 0, 0, 0}, sb[4] = {0, 0, 0, 0}, sc[4] = {0, 0, 0, 0};
  const int off = 4 - c.rank();
  for (int i = 0; i < c.rank(); ++i) {
    dims[off + i] = c.dim(i);
    sa[off + i] = a.stride(i);
    sb[off + i] = b.stride(i);
    sc[off + i] = c.stride(i);
  }
  for (int64_t i0 = 0; i0 < dims[0]; ++i0)
    for (int64_t i1 = 0; i1 < dims[1]; ++i1)
      for (int64_t i2 = 0; i2 < dims[2]; ++i2)
        for (int64_t i3 = 0; i3 < dims[3]; ++i3) {
          const int64_t oa = i0 * sa[0] + i1 * sa[1] + i2 * sa[2] + i3 * sa[3];
          const int64_t ob = i0 * sb[0] + i1 * sb[1] + i2 * sb[2] + i3 * sb[3];
          const int64_t oc = i0 * sc[0] + i1 * sc[1] + i2 * sc[2] + i3 * sc[3];
          detail::store_code(c.raw(), c.dtype(), oc,
                             mul_code(detail::code_at(a.raw(), a.dtype(), oa),
                                      detail::code_at(b.raw(), b.dtype(), ob), p, r));
        }
}

}  // namespace npukit::ref
