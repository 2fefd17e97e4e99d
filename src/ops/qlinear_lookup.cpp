// Table-driven 8-bit operators: validation, profiles and the table builder.
#include "npukit/ops/qlinear_lookup.hpp"

#include "npukit/error.hpp"
#include "npukit/ops/layout.hpp"
#include "npukit/ops/quantized.hpp"
#include "ops/quantized_common.hpp"

namespace npukit {

namespace ref {
void qlinear_lookup(const TensorView& x, const TensorView& y, const QLookupTable& table);
void qlinear_concat(const std::vector<TensorView>& x,
                    const std::vector<std::optional<QLookupTable>>& tables, const TensorView& y,
                    int64_t axis);
}  // namespace ref

void apply_profile(QLookupParams& p, Profile profile) {
  check(semantics_base(profile) == Profile::onnxruntime, "npukit::qlinear_lookup_table", "profile",
        profile_name(profile),
        "onnxruntime (QLinearConcat, QLinearLeakyRelu and QLinearSigmoid are ONNX Runtime's)");
  // MLAS picks its FMA3 logistic kernel on every x86 CPU with AVX2 and FMA.
  p.logistic = QLogistic::mlas_fma3;
}

QLookupTable qlinear_lookup_table(const QLookupParams& p) {
  constexpr const char* fn = "npukit::qlinear_lookup_table";
  check(p.dtype == DType::u8 || p.dtype == DType::s8, fn, "dtype", dtype_name(p.dtype), "u8 or s8");
  const detail::CodeRange r = detail::code_range(p.dtype);
  check_range(fn, "x_zero_point", p.x_zero_point, r.lo, r.hi);
  check_range(fn, "y_zero_point", p.y_zero_point, r.lo, r.hi);
  check(p.x_scale > 0 && std::isfinite(p.x_scale), fn, "x_scale", std::to_string(p.x_scale),
        "a finite scale > 0");
  check(p.y_scale > 0 && std::isfinite(p.y_scale), fn, "y_scale", std::to_string(p.y_scale),
        "a finite scale > 0");
  // Byte b is the code (T)b: for s8, bytes 128..255 are -128..-1.
  Tensor codes(p.dtype, {256});
  for (int b = 0; b < 256; ++b)
    static_cast<uint8_t*>(codes.view().raw())[b] = static_cast<uint8_t>(b);
  Tensor v(DType::f32, {256});
  QuantParams xq;
  xq.scale = {p.x_scale};
  xq.zero_point = {p.x_zero_point};
  dequantize_linear(codes.view(), v.view(), xq);
  float* f = static_cast<float*>(v.view().raw());
  for (int b = 0; b < 256; ++b) {
    if (p.function == QLookupFunction::leaky_relu)
      f[b] = f[b] >= 0 ? f[b] : p.alpha * f[b];
    else if (p.function == QLookupFunction::sigmoid)
      f[b] = ref::mlas_logistic(f[b], p.logistic);
  }
  QuantizeParams yq;
  yq.q.scale = {p.y_scale};
  yq.q.zero_point = {p.y_zero_point};
  apply_profile(yq, Profile::onnxruntime);
  quantize_linear(v.view(), codes.view(), yq);
  QLookupTable t;
  for (int b = 0; b < 256; ++b)
    t[static_cast<size_t>(b)] = static_cast<const uint8_t*>(codes.view().raw())[b];
  return t;
}

void qlinear_lookup(const TensorView& x, const TensorView& y, const QLookupTable& table) {
  constexpr const char* fn = "npukit::qlinear_lookup";
  detail::expect_code_dtype(x, fn, "x.dtype");
  y.expect_dtype(x.dtype(), fn, "y.dtype");
  y.expect_shape(x.shape(), fn, "y");
  check(x.is_contiguous() && y.is_contiguous(), fn, "x, y", "strided views", "contiguous tensors");
  ref::qlinear_lookup(x, y, table);
}

void qlinear_concat(const std::vector<TensorView>& x,
                    const std::vector<std::optional<QLookupTable>>& tables, const TensorView& y,
                    int64_t axis) {
  constexpr const char* fn = "npukit::qlinear_concat";
  check(!x.empty() && x.size() == tables.size(), fn, "tables", std::to_string(tables.size()),
        std::to_string(x.size()) + " (one per input, at least one input)");
  std::vector<Shape> shapes;
  for (const TensorView& t : x) {
    detail::expect_code_dtype(t, fn, "x.dtype");
    t.expect_dtype(x[0].dtype(), fn, "x.dtype");
    check(t.is_contiguous(), fn, "x", "a strided view", "contiguous tensors");
    shapes.push_back(t.shape());
  }
  y.expect_dtype(x[0].dtype(), fn, "y.dtype");
  y.expect_shape(concat_shape(shapes, axis), fn, "y");
  check(y.is_contiguous(), fn, "y", "a strided view", "a contiguous tensor");
  const auto rank = static_cast<int64_t>(y.rank());
  ref::qlinear_concat(x, tables, y, axis < 0 ? axis + rank : axis);
}

}  // namespace npukit
