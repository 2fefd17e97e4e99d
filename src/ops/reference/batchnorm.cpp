#include <cmath>

#include "npukit/ops/batchnorm.hpp"

namespace npukit::ref {

void batch_norm_f32(const TensorView& x, const float* scale, const float* bias, const float* mean,
                    const float* var, const TensorView& y, float epsilon) {
  // View x and y as (N, C, H, W) with trailing size-1 axes.
  Shape sh = x.shape(), sx = x.strides(), sy = y.strides();
  while (sh.size() < 4) {
    sh.push_back(1);
    sx.push_back(0);
    sy.push_back(0);
  }
  const TensorView xv(x.raw(), DType::f32, sh, sx), yv(y.raw(), DType::f32, sh, sy);
  for (int64_t n = 0; n < sh[0]; ++n)
    for (int64_t c = 0; c < sh[1]; ++c) {
      // ONNX Runtime folds the statistics into one scale and one bias per
      // channel, then computes x * scale + bias (two roundings, no FMA).
      const float inv_std = 1.0f / std::sqrt(var[c] + epsilon);
      const float channel_scale = inv_std * scale[c];
      const float channel_bias = bias[c] - mean[c] * channel_scale;
      for (int64_t h = 0; h < sh[2]; ++h)
        for (int64_t w = 0; w < sh[3]; ++w)
          yv.at<float>(n, c, h, w) = xv.at<float>(n, c, h, w) * channel_scale + channel_bias;
    }
}

}  // namespace npukit::ref
