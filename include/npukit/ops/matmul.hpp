// fp32 matrix multiplication: the 2-D form of seed 004 (bias, result_add) and
// the broadcasting N-D form of ONNX MatMul / numpy.matmul.
#pragma once

#include "npukit/ops/fp32_semantics.hpp"
#include "npukit/profile.hpp"
#include "npukit/tensor.hpp"

namespace npukit {

struct MatmulParams {
  bool has_bias = false;                                         // bias is (N) or (1, N)
  bool result_add = false;                                       // y = y + a*b (+ bias)
  Fp32Accumulation accumulation = Fp32Accumulation::sequential;  // interleaved: A[k % 2]
  bool flush_denormals = false;
};

void apply_profile(MatmulParams& p, Profile profile);

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
// Any MatmulParams semantics (the sequential case equals matmul_f32).
void matmul_f32(const TensorView& a, const TensorView& b, const float* bias, int64_t bias_stride,
                const TensorView& y, const MatmulParams& p);
}  // namespace ref

namespace cpu {
// Fast path, bit for bit ref::matmul_f32 with the same MatmulParams (each
// output keeps its order of rounded operations); vectorised across columns,
// threaded over rows. Returns false, writing nothing, where flushing cannot be
// done (no x86 MXCSR); the caller then runs the reference.
bool matmul_f32(const TensorView& a, const TensorView& b, const float* bias, int64_t bias_stride,
                const TensorView& y, const MatmulParams& p);
}  // namespace cpu

}  // namespace npukit
