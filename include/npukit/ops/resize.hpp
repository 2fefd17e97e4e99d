// Resize (fp32, 4-D NCHW, on H and W) as ONNX Runtime's CPU Upsample computes
// it: coordinates in float, nearest rounding rules, bilinear weights.
#pragma once

#include <cstdint>

#include "npukit/tensor.hpp"

namespace npukit {

enum class ResizeMode : uint8_t { nearest, linear };
enum class ResizeCoord : uint8_t {
  half_pixel,            // (o + 0.5) / scale - 0.5
  pytorch_half_pixel,    // as half_pixel, but 0 when the output length is 1
  align_corners,         // o * (in - 1) / (out - 1), 0 when out is 1
  asymmetric,            // o / scale
  tf_half_pixel_for_nn,  // (o + 0.5) / scale
};
enum class ResizeNearest : uint8_t { round_prefer_floor, round_prefer_ceil, floor, ceil };

struct ResizeParams {
  ResizeMode mode = ResizeMode::nearest;
  ResizeCoord coord = ResizeCoord::half_pixel;
  ResizeNearest nearest = ResizeNearest::round_prefer_floor;
  float scale_h = 1, scale_w = 1;  // output / input, as ONNX Runtime holds them (float)
};

// x (N, C, H, W) -> y (N, C, OH, OW); the output size is y's.
void resize2d(const TensorView& x, const TensorView& y, const ResizeParams& p);

}  // namespace npukit
