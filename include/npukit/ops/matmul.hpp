// fp32 matrix multiplication: the 2-D form of seed 004 (bias, result_add) and
// the broadcasting N-D form of ONNX MatMul / numpy.matmul.
#pragma once

#include "npukit/tensor.hpp"

namespace npukit {

struct MatmulParams {
  bool has_bias = false;    // bias is (N) or (1, N)
  bool result_add = false;  // y = y + a*b (+ bias)
};

// a (M, K) x b (K, N) -> (M, N), + bias, then + old y when result_add.
void matmul(const TensorView& a, const TensorView& b, const TensorView& bias, const TensorView& y,
            const MatmulParams& p = {});

// numpy.matmul shape rules for ranks 1 to 4 (a 1-D operand is promoted and
// the added axis removed from the result; batch axes broadcast).
Shape matmul_broadcast_shape(const Shape& a, const Shape& b);
void matmul_broadcast(const TensorView& a, const TensorView& b, const TensorView& y);

namespace ref {
// Sum over k in order in fp32, then + bias, then + old y.
void matmul_f32(const TensorView& a, const TensorView& b, const float* bias, int64_t bias_stride,
                const TensorView& y, bool result_add);
}  // namespace ref

}  // namespace npukit
