// fp32 element-wise and per-channel operators of seed 004, each with the
// result_add accumulate flag: y = y_old + f(x) instead of y = f(x).
#pragma once

#include "npukit/ops/fp32_semantics.hpp"
#include "npukit/profile.hpp"
#include "npukit/tensor.hpp"

namespace npukit {

enum class ReluNaN : uint8_t {
  propagate,  // `x < 0 ? +0 : x`: relu(NaN) = NaN, relu(-0) = -0 (PyTorch, ONNX Runtime)
  zero,       // `x > 0 ? x : +0`: NaN and -0 give +0 (OKKernel)
};

struct ElementwiseParams {
  bool result_add = false;
  ReluNaN relu_nan = ReluNaN::propagate;
  bool flush_denormals = false;  // FTZ/DAZ on every operand and result
  // scale computes x*s + 0.0f (a zero product becomes +0), as a scale unit
  // that always adds a bias does (OKKernel okk_bdc_scale).
  bool scale_adds_zero = false;
};

// bm1684: relu_nan = zero, flush, scale_adds_zero; onnxruntime, pytorch: defaults.
void apply_profile(ElementwiseParams& p, Profile profile);

// Any rank up to 4; y has x's shape (it may be x itself).
void relu(const TensorView& x, const TensorView& y, const ElementwiseParams& p = {});

// Per-channel operators on (N, C, H, W); the per-channel tensors are (C) or (1, C, 1, 1).
void bias(const TensorView& x, const TensorView& b, const TensorView& y,
          const ElementwiseParams& p = {});  // x + b[c]
void scale(const TensorView& x, const TensorView& s, const TensorView& y,
           const ElementwiseParams& p = {});  // x * s[c]
void scale_bias(const TensorView& x, const TensorView& s, const TensorView& b, const TensorView& y,
                const ElementwiseParams& p = {});  // x * s[c] + b[c], two roundings

namespace ref {
enum class ChannelOp : uint8_t { bias, scale, scale_bias };
void relu_f32(const TensorView& x, const TensorView& y, const ElementwiseParams& p);
void channel_op_f32(ChannelOp op, const TensorView& x, const float* s, int64_t s_stride,
                    const float* b, int64_t b_stride, const TensorView& y, bool result_add);
void channel_op_f32(ChannelOp op, const TensorView& x, const float* s, int64_t s_stride,
                    const float* b, int64_t b_stride, const TensorView& y,
                    const ElementwiseParams& p);
}  // namespace ref

}  // namespace npukit
