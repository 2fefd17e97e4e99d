// fp32 LayerNormalization (ONNX opset 17) with ONNX Runtime 1.30's arithmetic.
#pragma once

#include <cstdint>

#include "npukit/tensor.hpp"

namespace npukit {

struct LayerNormParams {
  int64_t axis = -1;  // normalise over axes [axis, rank)
  float epsilon = 1e-5f;
};

// For each row r of the (outer, inner) view at `axis`, in fp32 and in this order:
//   sum += x (sequential); mean = sum / n; ss += (x - mean)^2 (sequential);
//   d = sqrt(ss / n + epsilon);
//   y = (x - mean) / d * scale + bias  (each step rounded);
// mean (optional) gets mean, inv_std_dev (optional) gets 1 / d, both with the
// input's shape with 1 from `axis` on. scale and bias (optional) hold
// inner = x.shape[axis:] elements (any shape of that size).
void layer_norm(const TensorView& x, const TensorView& scale, const TensorView& bias,
                const TensorView& y, const TensorView& mean, const TensorView& inv_std_dev,
                const LayerNormParams& p);

namespace ref {
// Contiguous rows of length n.
void layer_norm_f32(const float* x, const float* scale, const float* bias, float* y, float* mean,
                    float* inv_std_dev, int64_t rows, int64_t n, float epsilon);
}  // namespace ref

}  // namespace npukit
