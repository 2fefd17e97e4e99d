// ONNX-style quantization parameters (scale, zero point) for int8 / uint8,
// per tensor or per axis, with the QuantizeLinear / DequantizeLinear math:
//
//   quantize:   q = saturate(round_half_to_even(x / scale) + zero_point)   (x / scale in float32)
//   dequantize: x = float(q - zero_point) * scale                          (one float32 product)
//   requantize: quantize(dequantize(q, from), to)
//
// Calibration (float32 arithmetic, like the ONNX reference):
//   asymmetric (DynamicQuantizeLinear's rule, for either type):
//     lo = min(0, min x), hi = max(0, max x), scale = (hi - lo) / (qmax - qmin),
//     zero_point = saturate(round_half_to_even(qmin - lo / scale))
//   symmetric (ONNX Runtime's quantization tool): int8: scale = max|x| / 127, zero_point 0;
//     uint8: scale = 2 max|x| / 255, zero_point 128.
// A tensor (or channel) of zeros only has no scale: npukit::Error.
#pragma once

#include <cstdint>
#include <vector>

#include "npukit/tensor.hpp"

namespace npukit {

struct OnnxQuantParams {
  DType dtype = DType::u8;  // s8 or u8
  int axis = -1;            // -1: per tensor; else one scale / zero point per index of this axis
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
};

enum class OnnxCalibration : uint8_t { asymmetric, symmetric };

// Element formulas. Quantize: NaN is an npukit::Error, +-inf saturates.
int64_t onnx_quantize_value(float x, float scale, int32_t zero_point, DType dtype);
float onnx_dequantize_value(int64_t q, float scale, int32_t zero_point);

// Scale and zero point from a range (lo <= hi), as above.
void onnx_params_from_range(float lo, float hi, DType dtype, OnnxCalibration mode, float& scale,
                            int32_t& zero_point);

OnnxQuantParams onnx_calibrate(const TensorView& x, DType dtype,
                               OnnxCalibration mode = OnnxCalibration::asymmetric, int axis = -1);
Tensor onnx_quantize(const TensorView& x, const OnnxQuantParams& p);    // f32 -> p.dtype
Tensor onnx_dequantize(const TensorView& q, const OnnxQuantParams& p);  // s8/u8 -> f32
Tensor onnx_requantize(const TensorView& q, const OnnxQuantParams& from, const OnnxQuantParams& to);

}  // namespace npukit
