// Resize reference (the specification). Per axis, ONNX Runtime's float rules:
// the source coordinate of output index o comes from ResizeCoord in float;
// nearest rounds it by ResizeNearest and clamps to [0, in - 1]; linear clamps
// it to [0, in - 1] (nearest on an axis of scale 1 is the identity), takes i1 = trunc, i2 = min(i1
// + 1, in - 1), d1 = |c - i1|, d2 = |c - i2| (both 0.5 when i1 == i2), and sums (d2x * d2y) * x11 +
// (d1x * d2y) * x21 + (d2x * d1y) * x12 + (d1x * d1y) * x22 left to right (x21: column i2, row i1;
// x12: column i1, row i2).
#include "npukit/ops/resize.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "npukit/error.hpp"
#include "npukit/parallel.hpp"

namespace npukit {

namespace {

float source_coord(ResizeCoord m, float o, float scale, int64_t out_len, int64_t in_len) {
  switch (m) {
    case ResizeCoord::half_pixel:
      return (o + 0.5f) / scale - 0.5f;
    case ResizeCoord::pytorch_half_pixel:
      return out_len > 1 ? (o + 0.5f) / scale - 0.5f : 0.0f;
    case ResizeCoord::align_corners:
      return out_len == 1 ? 0.0f
                          : o * static_cast<float>(in_len - 1) / static_cast<float>(out_len - 1);
    case ResizeCoord::asymmetric:
      return o / scale;
    case ResizeCoord::tf_half_pixel_for_nn:
      return (o + 0.5f) / scale;
  }
  return 0.0f;
}

// ONNX Runtime 1.30 rounds a coordinate one ulp away from x.5 as the tie x.5
// itself (measured on 20,042 configurations, docs/semantics.md; the cause in
// its source is not identified). Only the two round modes see it.
float snap_near_half(float c) {
  const float half = std::floor(c) + 0.5f;
  const float inf = std::numeric_limits<float>::infinity();
  if (c != half && (std::nextafter(c, inf) == half || std::nextafter(c, -inf) == half)) return half;
  return c;
}

int64_t nearest_index(ResizeNearest r, float c, int64_t in_len) {
  float v = 0;
  if (r == ResizeNearest::round_prefer_floor || r == ResizeNearest::round_prefer_ceil)
    c = snap_near_half(c);
  switch (r) {
    case ResizeNearest::round_prefer_floor:
      v = c == static_cast<float>(static_cast<int64_t>(c)) + 0.5f ? std::floor(c) : std::round(c);
      break;
    case ResizeNearest::round_prefer_ceil:
      v = std::round(c);
      break;
    case ResizeNearest::floor:
      v = std::floor(c);
      break;
    case ResizeNearest::ceil:
      v = std::ceil(c);
      break;
  }
  return std::clamp<int64_t>(static_cast<int64_t>(v), 0, in_len - 1);
}

struct LinearTap {
  int64_t i1, i2;
  float d1, d2;
};

LinearTap linear_tap(float c, int64_t in_len) {
  c = std::max(0.0f, std::min(c, static_cast<float>(in_len - 1)));
  LinearTap t;
  t.i1 = std::min(static_cast<int64_t>(c), in_len - 1);
  t.i2 = std::min(t.i1 + 1, in_len - 1);
  t.d1 = t.i1 == t.i2 ? 0.5f : std::abs(c - static_cast<float>(t.i1));
  t.d2 = t.i1 == t.i2 ? 0.5f : std::abs(c - static_cast<float>(t.i2));
  return t;
}

}  // namespace

void resize2d(const TensorView& x, const TensorView& y, const ResizeParams& p) {
  const char* fn = "npukit::resize2d";
  x.expect_dtype(DType::f32, fn, "x");
  y.expect_dtype(DType::f32, fn, "y");
  x.expect_rank(4, fn, "x");
  y.expect_rank(4, fn, "y");
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t OH = y.dim(2), OW = y.dim(3);
  y.expect_shape({N, C, OH, OW}, fn, "y");
  check(p.scale_h > 0 && p.scale_w > 0, fn, "scales",
        std::to_string(p.scale_h) + ", " + std::to_string(p.scale_w), "> 0");
  if (y.numel() == 0) return;
  if (OH == H && OW == W) {  // ONNX Runtime copies when the shape is unchanged, whatever the mode
    parallel_for(N * C, [&](int64_t nc) {
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w)
          y.at<float>(nc / C, nc % C, h, w) = x.at<float>(nc / C, nc % C, h, w);
    });
    return;
  }
  check(H > 0 && W > 0, fn, "x", "an empty image", "H and W >= 1 when the output is not empty");
  std::vector<float> cy(static_cast<size_t>(OH)), cx(static_cast<size_t>(OW));
  for (int64_t o = 0; o < OH; ++o)
    cy[static_cast<size_t>(o)] = source_coord(p.coord, static_cast<float>(o), p.scale_h, OH, H);
  for (int64_t o = 0; o < OW; ++o)
    cx[static_cast<size_t>(o)] = source_coord(p.coord, static_cast<float>(o), p.scale_w, OW, W);
  parallel_for(N * C, [&](int64_t nc) {
    const int64_t n = nc / C, c = nc % C;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const float sy = cy[static_cast<size_t>(oh)], sx = cx[static_cast<size_t>(ow)];
        float v;
        if (p.mode == ResizeMode::nearest) {
          // ONNX Runtime maps an axis of scale 1 straight through, whatever the modes.
          const int64_t ih = p.scale_h == 1.0f ? oh : nearest_index(p.nearest, sy, H);
          const int64_t iw = p.scale_w == 1.0f ? ow : nearest_index(p.nearest, sx, W);
          v = x.at<float>(n, c, ih, iw);
        } else {
          const LinearTap ty = linear_tap(sy, H), tx = linear_tap(sx, W);
          v = tx.d2 * ty.d2 * x.at<float>(n, c, ty.i1, tx.i1) +
              tx.d1 * ty.d2 * x.at<float>(n, c, ty.i1, tx.i2) +
              tx.d2 * ty.d1 * x.at<float>(n, c, ty.i2, tx.i1) +
              tx.d1 * ty.d1 * x.at<float>(n, c, ty.i2, tx.i2);
        }
        y.at<float>(n, c, oh, ow) = v;
      }
  });
}

}  // namespace npukit
