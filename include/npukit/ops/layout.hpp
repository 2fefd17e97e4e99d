// Data movement without arithmetic: ONNX Transpose and Concat, for every dtype.
#pragma once

#include <vector>

#include "npukit/tensor.hpp"

namespace npukit {

// The shape of x with its axes permuted: out[i] = x[perm[i]]. An empty perm
// reverses the axes (the ONNX default).
Shape transpose_shape(const Shape& x, std::vector<int64_t>& perm);
void transpose(const TensorView& x, const TensorView& y, std::vector<int64_t> perm);

// Inputs of one dtype and equal shapes except along `axis` (negative counts
// from the end), joined along it.
Shape concat_shape(const std::vector<Shape>& inputs, int64_t axis);
void concat(const std::vector<TensorView>& inputs, const TensorView& y, int64_t axis);

}  // namespace npukit
