// fp32 LayerNormalization (ONNX opset 17) with ONNX Runtime 1.30's arithmetic.
#pragma once

#include <cstdint>

#include "npukit/tensor.hpp"

namespace npukit {

struct LayerNormParams {
  int64_t axis = -1;  // normalise over axes [axis, rank)
  float epsilon = 1e-5f;
};

// For each row r of the (outer, inner) view at `axis`, in fp32, ONNX Runtime
// 1.30's order on x86-64 (bit for bit, docs/semantics.md):
//   rows shorter than 8 (ORT's scalar loop): Welford's running mean m and sum
//     of squared deviations M2; d = sqrt(M2 / n + epsilon);
//     y = (x - m) / d * scale (+ bias), each step rounded; inv_std_dev = 1 / d.
//   rows of 8 or more (MLAS's AVX2 kernel): m = (sum in 4 double lanes) / n
//     rounded to fp32; squared deviations (x - m)^2 in 8 fp32 lanes of fused
//     multiply-adds plus a rounded tail; inv = 1 / sqrt(ss / n + epsilon);
//     y = fma((x - m) * inv, scale, bias), or (x - m) * inv * scale.
// mean (optional) gets m, inv_std_dev (optional) the inverse, both with the
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
