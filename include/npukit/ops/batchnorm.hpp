// fp32 batch normalization in inference mode (ONNX BatchNormalization with
// training_mode = 0) as ONNX Runtime 1.30 computes it: per channel c (axis 1),
//   s = (1 / sqrt(var[c] + epsilon)) * scale[c],  b = bias[c] - mean[c] * s,
//   y = x * s + b,
// every step rounded to fp32, no FMA.
#pragma once

#include "npukit/tensor.hpp"

namespace npukit {

struct BatchNormParams {
  float epsilon = 1e-5f;
};

// x (N, C, ...) of rank 2 to 4; scale, bias, mean, var of shape (C).
void batch_norm(const TensorView& x, const TensorView& scale, const TensorView& bias,
                const TensorView& mean, const TensorView& var, const TensorView& y,
                const BatchNormParams& p = {});

namespace ref {
void batch_norm_f32(const TensorView& x, const float* scale, const float* bias, const float* mean,
                    const float* var, const TensorView& y, float epsilon);
}  // namespace ref

}  // namespace npukit
