#include "npukit/quant/onnx_quant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "elements.hpp"
#include "npukit/quant/rounding.hpp"
#include "real_text.hpp"

namespace npukit {

namespace {

using detail::real_text;

void check_qtype(DType t, const char* fn, const char* parameter) {
  check(t == DType::s8 || t == DType::u8, fn, parameter, dtype_name(t), "s8 or u8");
}
int64_t qmin_of(DType t) {
  return t == DType::s8 ? -128 : 0;
}
int64_t qmax_of(DType t) {
  return t == DType::s8 ? 127 : 255;
}

int64_t channels_of(const TensorView& t, int axis, const char* fn) {
  if (axis == -1) return 1;
  check_range(fn, "axis", axis, -1, t.rank() - 1);
  return t.dim(axis);
}

void check_params(const OnnxQuantParams& p, const TensorView& t, const char* fn) {
  check_qtype(p.dtype, fn, "params.dtype");
  const int64_t n = channels_of(t, p.axis, fn);
  check(static_cast<int64_t>(p.scale.size()) == n && p.zero_point.size() == p.scale.size(), fn,
        "params",
        std::to_string(p.scale.size()) + " scales and " + std::to_string(p.zero_point.size()) +
            " zero points",
        std::to_string(n) + " of each for axis " + std::to_string(p.axis));
  for (size_t c = 0; c < p.scale.size(); ++c) {
    check(std::isfinite(p.scale[c]) && p.scale[c] > 0, fn, "params.scale", real_text(p.scale[c]),
          "finite values > 0");
    check_range(fn, "params.zero_point", p.zero_point[c], qmin_of(p.dtype), qmax_of(p.dtype));
  }
}

int64_t channel_of(const TensorView& t, int axis, const int64_t* pos) {
  return axis < 0 ? 0 : pos[4 - t.rank() + axis];
}

}  // namespace

int64_t onnx_quantize_value(float x, float scale, int32_t zero_point, DType dtype) {
  const float t = x / scale;
  check(!std::isnan(t), "npukit::onnx_quantize_value", "x", real_text(x) + " / " + real_text(scale),
        "a quotient that is not NaN");
  const int64_t lo = qmin_of(dtype), hi = qmax_of(dtype);
  if (t >= 1e10f) return hi;  // beyond every int64 and every saturation bound
  if (t <= -1e10f) return lo;
  return saturate(round_to_int(t, Rounding::half_to_even) + zero_point, lo, hi);
}

float onnx_dequantize_value(int64_t q, float scale, int32_t zero_point) {
  return static_cast<float>(q - zero_point) * scale;
}

void onnx_params_from_range(float lo, float hi, DType dtype, OnnxCalibration mode, float& scale,
                            int32_t& zero_point) {
  constexpr const char* fn = "npukit::onnx_calibrate";
  check_qtype(dtype, fn, "dtype");
  check(std::isfinite(lo) && std::isfinite(hi) && lo <= hi, fn, "range",
        std::string("[").append(real_text(lo)).append(", ").append(real_text(hi)).append("]"),
        "finite values with min <= max");
  const auto qmin = static_cast<float>(qmin_of(dtype)), qmax = static_cast<float>(qmax_of(dtype));
  if (mode == OnnxCalibration::symmetric) {
    const float absmax = std::max(std::fabs(lo), std::fabs(hi));
    check(absmax > 0, fn, "x", "all zeros", "at least one non-zero value");
    scale = dtype == DType::s8 ? absmax / 127.0f : (2.0f * absmax) / 255.0f;
    zero_point = dtype == DType::s8 ? 0 : 128;
    return;
  }
  const float rlo = std::min(0.0f, lo), rhi = std::max(0.0f, hi);
  scale = (rhi - rlo) / (qmax - qmin);
  check(scale > 0, fn, "x", "all zeros", "at least one non-zero value");
  const float zp = std::clamp(qmin - rlo / scale, qmin, qmax);
  zero_point = static_cast<int32_t>(round_to_int(zp, Rounding::half_to_even));
}

OnnxQuantParams onnx_calibrate(const TensorView& x, DType dtype, OnnxCalibration mode, int axis) {
  constexpr const char* fn = "npukit::onnx_calibrate";
  x.expect_dtype(DType::f32, fn, "x");
  check_qtype(dtype, fn, "dtype");
  const int64_t n = channels_of(x, axis, fn);
  check(x.numel() > 0, fn, "x", "an empty tensor", "at least one element");
  std::vector<float> lo(static_cast<size_t>(n), std::numeric_limits<float>::infinity());
  std::vector<float> hi(static_cast<size_t>(n), -std::numeric_limits<float>::infinity());
  const float* data = static_cast<const float*>(x.raw());
  detail::for_each_element(x, [&](int64_t, int64_t off, const int64_t* pos) {
    const auto c = static_cast<size_t>(channel_of(x, axis, pos));
    lo[c] = std::min(lo[c], data[off]);
    hi[c] = std::max(hi[c], data[off]);
  });
  OnnxQuantParams p{dtype, axis, std::vector<float>(lo.size()), std::vector<int32_t>(lo.size())};
  for (size_t c = 0; c < lo.size(); ++c)
    onnx_params_from_range(lo[c], hi[c], dtype, mode, p.scale[c], p.zero_point[c]);
  return p;
}

Tensor onnx_quantize(const TensorView& x, const OnnxQuantParams& p) {
  constexpr const char* fn = "npukit::onnx_quantize";
  x.expect_dtype(DType::f32, fn, "x");
  check_params(p, x, fn);
  Tensor q(p.dtype, x.shape());
  const TensorView out = TensorView::contiguous(q.view().raw(), p.dtype, x.shape());
  const float* data = static_cast<const float*>(x.raw());
  detail::for_each_element(x, [&](int64_t i, int64_t off, const int64_t* pos) {
    const auto c = static_cast<size_t>(channel_of(x, p.axis, pos));
    detail::store_int(out, i, onnx_quantize_value(data[off], p.scale[c], p.zero_point[c], p.dtype));
  });
  return q;
}

Tensor onnx_dequantize(const TensorView& q, const OnnxQuantParams& p) {
  constexpr const char* fn = "npukit::onnx_dequantize";
  check_qtype(q.dtype(), fn, "q");
  check(q.dtype() == p.dtype, fn, "params.dtype", dtype_name(p.dtype), dtype_name(q.dtype()));
  check_params(p, q, fn);
  Tensor x(DType::f32, q.shape());
  float* out = x.data<float>();
  detail::for_each_element(q, [&](int64_t i, int64_t off, const int64_t* pos) {
    const auto c = static_cast<size_t>(channel_of(q, p.axis, pos));
    out[i] = onnx_dequantize_value(detail::load_int(q, off), p.scale[c], p.zero_point[c]);
  });
  return x;
}

Tensor onnx_requantize(const TensorView& q, const OnnxQuantParams& from,
                       const OnnxQuantParams& to) {
  return onnx_quantize(onnx_dequantize(q, from), to);
}

}  // namespace npukit
