// Reference QuantizeLinear / DequantizeLinear: one element at a time.
#include <cmath>

#include "npukit/ops/quantized.hpp"
#include "npukit/quant/onnx_quant.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::ref {

namespace {

// Calls f(offset_x, offset_y, axis_index) for every element of two views of one shape.
template <class F>
void for_each_element(const TensorView& x, const TensorView& y, int64_t axis, F f) {
  const detail::Index4 a = detail::index4(x), b = detail::index4(y);
  const int ax = axis < 0 ? -1 : static_cast<int>(axis) + 4 - x.rank();
  int64_t i[4];
  for (i[0] = 0; i[0] < a.shape[0]; ++i[0])
    for (i[1] = 0; i[1] < a.shape[1]; ++i[1])
      for (i[2] = 0; i[2] < a.shape[2]; ++i[2])
        for (i[3] = 0; i[3] < a.shape[3]; ++i[3]) {
          int64_t ox = 0, oy = 0;
          for (int d = 0; d < 4; ++d) {
            ox += i[d] * a.stride[d];
            oy += i[d] * b.stride[d];
          }
          f(ox, oy, ax < 0 ? 0 : i[ax]);
        }
}

}  // namespace

void quantize_linear(const TensorView& x, const TensorView& y, const QuantizeParams& p) {
  const detail::CodeRange r = detail::code_range(y.dtype());
  const float* xp = static_cast<const float*>(x.raw());
  for_each_element(x, y, p.q.per_axis() ? p.q.axis : -1, [&](int64_t ox, int64_t oy, int64_t c) {
    const int32_t zp = p.q.zero_point_at(c);
    // fp32 division as ONNX defines it, or PyTorch's fp32 reciprocal multiply.
    const float v =
        p.multiply_by_reciprocal ? xp[ox] * (1.0f / p.q.scale_at(c)) : xp[ox] / p.q.scale_at(c);
    // Clamp to [lo - zp, hi - zp] before rounding (exact bounds); NaN -> lo.
    const float lo = static_cast<float>(r.lo - zp), hi = static_cast<float>(r.hi - zp);
    const float c_v = std::isnan(v) ? lo : v < lo ? lo : v > hi ? hi : v;
    detail::store_code(y.raw(), y.dtype(), oy,
                       static_cast<int32_t>(round_to_int(c_v, p.rounding)) + zp);
  });
}

void dequantize_linear(const TensorView& x, const TensorView& y, const QuantParams& q) {
  float* yp = static_cast<float*>(y.raw());
  for_each_element(x, y, q.per_axis() ? q.axis : -1, [&](int64_t ox, int64_t oy, int64_t c) {
    const int32_t v = x.dtype() == DType::s32 ? static_cast<const int32_t*>(x.raw())[ox]
                                              : detail::code_at(x.raw(), x.dtype(), ox);
    yp[oy] = onnx_dequantize_value(v, q.scale_at(c), q.zero_point_at(c));
  });
}

}  // namespace npukit::ref
