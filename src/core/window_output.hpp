// The output dims of a window sliding over an (N, C, H, W) input, without
// allocating: the per-call validation of the pooling faces (a Shape vector
// per call was a quarter of a tiny pool call's instructions).
#pragma once

#include <cstdint>

#include "npukit/tensor.hpp"
#include "npukit/window.hpp"

namespace npukit {

struct WindowOutputDims {
  int64_t n = 0, c = 0, oh = 0, ow = 0;
};

// What window_output_shape returns, with the same checks and messages; x must
// have 4 dims (x_dims points at them).
WindowOutputDims window_output_dims(const int64_t* x_dims, const Window2d& w, const char* function);

// x.expect_rank(4) and y.expect_shape(window_output_shape(x.shape(), w)) with
// the same messages, allocating only to report a failure.
void expect_window_output(const TensorView& x, const TensorView& y, const Window2d& w,
                          const char* function);

}  // namespace npukit
