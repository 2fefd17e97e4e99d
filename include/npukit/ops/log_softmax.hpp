// fp32 LogSoftmax (ONNX opset 13): y = x - max - log(sum(exp(x - max))) along
// one axis.
#pragma once

#include <cstdint>

#include "npukit/tensor.hpp"

namespace npukit {

// axis may be negative; rank 1 to 4; y may be x.
void log_softmax(const TensorView& x, const TensorView& y, int64_t axis);

namespace ref {
// Per row along `axis`: m = max (NaN wins), s = sum of expf(x - m) in order,
// y = (x - m) - logf(s).
void log_softmax_f32(const TensorView& x, const TensorView& y, int axis);
}  // namespace ref

}  // namespace npukit
