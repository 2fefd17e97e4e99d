// fp32 activations beyond relu: Clip and Softmax (ONNX semantics).
#pragma once

#include <cstdint>
#include <limits>

#include "npukit/tensor.hpp"

namespace npukit {

struct ClipParams {
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
};

// y = min(max(x, min), max), NaN stays NaN; min > max gives max everywhere
// (ONNX: "min(max(x, min), max)" applied literally). Any rank, y may be x.
void clip(const TensorView& x, const TensorView& y, const ClipParams& p);

// y = exp(x - max) / sum(exp(x - max)) along `axis` (negative counts from the
// end), the ONNX Softmax of opset 13. Any rank up to 4; y may be x.
void softmax(const TensorView& x, const TensorView& y, int64_t axis);

namespace ref {
void clip_f32(const TensorView& x, const TensorView& y, const ClipParams& p);
// x and y viewed as (outer, axis, inner) through 3-element shape and strides.
void softmax_f32(const TensorView& x, const TensorView& y, int axis);
}  // namespace ref

}  // namespace npukit
