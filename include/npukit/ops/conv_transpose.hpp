// ConvTranspose (fp32, 2-D, NCHW): the geometry after the ONNX attributes are
// resolved (pads already distributed, output size fixed), and its reference.
#pragma once

#include <cstdint>

#include "npukit/tensor.hpp"

namespace npukit {

struct ConvTransposeParams {
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;  // head pads: output row oh sits at oh + pad_top
  int64_t out_h = 0, out_w = 0;       // output size (tail pads / output_padding folded in)
  int64_t groups = 1;
  bool has_bias = false;
};

// One spatial axis of ONNX Runtime's ConvTranspose shape rule. out_size < 0:
// computed; else given (output_shape) and the pads are derived from it.
// auto_pad is "NOTSET", "VALID", "SAME_UPPER" or "SAME_LOWER".
struct ConvTransposeAxis {
  int64_t pad_head = 0, pad_tail = 0, out_size = -1;
};
ConvTransposeAxis conv_transpose_axis(int64_t in_size, int64_t stride, int64_t kernel,
                                      int64_t dilation, int64_t output_padding,
                                      const char* auto_pad, int64_t pad_head, int64_t pad_tail,
                                      int64_t out_size);

// x (N, C, H, W), w (C, M/groups, kH, kW), bias (M) or empty, y (N, M, out_h, out_w).
void conv_transpose2d(const TensorView& x, const TensorView& w, const TensorView& bias,
                      const TensorView& y, const ConvTransposeParams& p);

}  // namespace npukit
