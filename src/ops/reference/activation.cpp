#include <cmath>
#include <vector>

#include "npukit/ops/activation.hpp"

namespace npukit::ref {

namespace {
// Calls f(offset_x, offset_y) for every element of a view pair of equal shape.
template <class F>
void for_each_pair(const TensorView& x, const TensorView& y, F f) {
  expect_kernel_rank(x, "npukit::ref::activation", "x");
  Shape sh(4 - x.rank(), 1), sx(4 - x.rank(), 0), sy(4 - x.rank(), 0);
  for (int i = 0; i < x.rank(); ++i) {
    sh.push_back(x.dim(i));
    sx.push_back(x.stride(i));
    sy.push_back(y.stride(i));
  }
  for (int64_t a = 0; a < sh[0]; ++a)
    for (int64_t b = 0; b < sh[1]; ++b)
      for (int64_t c = 0; c < sh[2]; ++c)
        for (int64_t d = 0; d < sh[3]; ++d)
          f(a * sx[0] + b * sx[1] + c * sx[2] + d * sx[3],
            a * sy[0] + b * sy[1] + c * sy[2] + d * sy[3]);
}
}  // namespace

void clip_f32(const TensorView& x, const TensorView& y, const ClipParams& p) {
  const float* xp = static_cast<const float*>(x.raw());
  float* yp = static_cast<float*>(y.raw());
  for_each_pair(x, y, [&](int64_t i, int64_t o) {
    float v = xp[i];
    if (v < p.min) v = p.min;  // comparisons with NaN are false: NaN passes through
    if (v > p.max) v = p.max;
    yp[o] = v;
  });
}

void softmax_f32(const TensorView& x, const TensorView& y, int axis) {
  // Iterate over every position of the other axes; the softmax axis is walked inside.
  const int64_t n = x.dim(axis);
  Shape osh = x.shape();
  osh[static_cast<size_t>(axis)] = 1;
  TensorView xo(x.raw(), DType::f32, osh, x.strides());
  TensorView yo(y.raw(), DType::f32, osh, y.strides());
  const int64_t xs = x.stride(axis), ys = y.stride(axis);
  const float* xp = static_cast<const float*>(x.raw());
  float* yp = static_cast<float*>(y.raw());
  std::vector<float> e(static_cast<size_t>(n));
  for_each_pair(xo, yo, [&](int64_t i, int64_t o) {
    float m = -INFINITY;
    for (int64_t k = 0; k < n; ++k) m = std::fmax(m, xp[i + k * xs]);
    float sum = 0.0f;
    for (int64_t k = 0; k < n; ++k) {
      e[static_cast<size_t>(k)] = std::exp(xp[i + k * xs] - m);
      sum += e[static_cast<size_t>(k)];
    }
    for (int64_t k = 0; k < n; ++k) yp[o + k * ys] = e[static_cast<size_t>(k)] / sum;
  });
}

}  // namespace npukit::ref
