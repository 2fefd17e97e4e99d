#include "ops/quantized_common.hpp"

#include <cmath>

namespace npukit::detail {

void check_scale(float s, const char* fn, const char* parameter) {
  // The value is formatted only on failure (this runs on every call).
  if (!(std::isfinite(s) && s > 0.0f)) fail(fn, parameter, std::to_string(s), "a finite scale > 0");
}

Index4 index4(const TensorView& t) {
  expect_kernel_rank(t, "npukit::index4", "tensor");
  Index4 r{{1, 1, 1, 1}, {0, 0, 0, 0}};
  const int off = 4 - t.rank();
  for (int i = 0; i < t.rank(); ++i) {
    r.shape[off + i] = t.dim(i);
    r.stride[off + i] = t.stride(i);
  }
  return r;
}

void check_quant_params(const QuantParams& q, const Shape& shape, DType code_type, const char* fn,
                        const char* name) {
  // This runs on every call (per-channel weights: once per output channel):
  // parameter names and messages are built only on failure.
  auto scale_name = [&] { return std::string(name) + "_scale"; };
  auto zp_name = [&] { return std::string(name) + "_zero_point"; };
  if (q.scale.empty()) fail(fn, scale_name(), "no values", "1 value or 1 per axis index");
  const bool per_axis = q.per_axis();
  if (per_axis) {
    const int64_t rank = static_cast<int64_t>(shape.size());
    check_range(fn, "axis", q.axis, 0, rank - 1);
    const int64_t extent = shape[static_cast<size_t>(q.axis)];
    auto sizes = [&](const char* counts) {
      return counts + std::to_string(extent) + " (the size of axis " + std::to_string(q.axis) + ")";
    };
    if (static_cast<int64_t>(q.scale.size()) != extent && q.scale.size() != 1)
      fail(fn, scale_name(), std::to_string(q.scale.size()) + " values", sizes("1 or "));
    if (q.zero_point.size() > 1 && static_cast<int64_t>(q.zero_point.size()) != extent)
      fail(fn, zp_name(), std::to_string(q.zero_point.size()) + " values", sizes("0, 1 or "));
  }
  for (float s : q.scale)
    if (!(std::isfinite(s) && s > 0.0f)) check_scale(s, fn, scale_name().c_str());
  if (code_type == DType::s8 || code_type == DType::u8) {
    const CodeRange r = code_range(code_type);
    for (int32_t z : q.zero_point)
      if (z < r.lo || z > r.hi) check_zero_point(z, code_type, fn, zp_name().c_str());
  }
}

}  // namespace npukit::detail
