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
  const std::string n(name);
  const std::string scale_name = n + "_scale", zp_name = n + "_zero_point";
  check(!q.scale.empty(), fn, scale_name.c_str(), "no values", "1 value or 1 per axis index");
  const bool per_axis = q.per_axis();
  int64_t extent = 1;
  if (per_axis) {
    const int64_t rank = static_cast<int64_t>(shape.size());
    check_range(fn, "axis", q.axis, 0, rank - 1);
    extent = shape[static_cast<size_t>(q.axis)];
    check(static_cast<int64_t>(q.scale.size()) == extent || q.scale.size() == 1, fn,
          scale_name.c_str(), std::to_string(q.scale.size()) + " values",
          "1 or " + std::to_string(extent) + " (the size of axis " + std::to_string(q.axis) + ")");
    check(
        q.zero_point.size() <= 1 || static_cast<int64_t>(q.zero_point.size()) == extent, fn,
        zp_name.c_str(), std::to_string(q.zero_point.size()) + " values",
        "0, 1 or " + std::to_string(extent) + " (the size of axis " + std::to_string(q.axis) + ")");
  }
  for (float s : q.scale) check_scale(s, fn, scale_name.c_str());
  if (code_type == DType::s8 || code_type == DType::u8)
    for (int32_t z : q.zero_point) check_zero_point(z, code_type, fn, zp_name.c_str());
}

}  // namespace npukit::detail
