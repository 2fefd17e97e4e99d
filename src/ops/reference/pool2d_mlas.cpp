// Reference of PoolLoop::mlas: the three reduction orders of ONNX Runtime's
// MLAS pooling (docs/semantics.md, "fp32 pooling under onnxruntime"), each
// written as plain loops over one (n, c) plane. Every add and max states its
// x86 rule (x86_float.hpp), so NaN payloads and signed zeros come out as on
// the real system.
#include <algorithm>
#include <cfloat>
#include <vector>

#include "npukit/ops/pool2d.hpp"
#include "npukit/parallel.hpp"
#include "ops/reference/x86_float.hpp"

namespace npukit::ref {

// MLAS's vector kernels read 4 floats past the last window, its stack buffer
// holds 2048 floats of which 3 are kept for that over-read.
constexpr int64_t kColumnBuffer = 2048 - 3;
constexpr int64_t kLanes = 4;
constexpr int64_t kMaxSmallKernel = 32;

namespace {

using MlasOrder = MlasPoolOrder;

struct Plane {
  const TensorView& x;
  int64_t n, c;
  float at(int64_t h, int64_t w) const { return x.at<float>(n, c, h, w); }
};

float divide(float sum, int64_t divisor) {
  return divisor > 0 ? sum / static_cast<float>(divisor) : 0.0f;
}

// MLAS divides by the kernel area or by the taps on the input (`valid`);
// pool2d_output_shape refuses clipped_window for this loop, so the area
// stands in for the clipped count it never reaches.
int64_t mlas_divisor(const Pool2dParams& p, int64_t valid) {
  const int64_t area = p.window.kernel_h * p.window.kernel_w;
  return avg_divisor(p.divisor, area, valid, area);
}

// Whole image: four lanes (element i to lane i % 4), lanes combined pairwise,
// then the remainder one by one. The lane combination's NaN priority
// (l3 before l1, l2 before l0, then the l1/l3 sum before the l0/l2 sum) is the
// one ONNX Runtime 1.30's binary shows.
float whole_image(const Plane& x, int64_t H, int64_t W, bool is_max) {
  const int64_t count = H * W;
  auto at = [&](int64_t i) { return x.at(i / W, i % W); };
  const float start = is_max ? -FLT_MAX : 0.0f;
  float lane[kLanes] = {start, start, start, start};
  int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lane[l] = is_max ? x86_simd_max(lane[l], at(i + l)) : x86_add(lane[l], at(i + l));
  float r = is_max ? x86_simd_max(x86_simd_max(lane[0], lane[2]), x86_simd_max(lane[1], lane[3]))
                   : x86_add(x86_add(lane[3], lane[1]), x86_add(lane[2], lane[0]));
  for (; i < count; ++i) r = is_max ? scalar_max(r, at(i)) : x86_add(r, at(i));
  return is_max ? r : divide(r, count);
}

// Column sums: per output row, every input column is reduced over the
// window's input rows; then each output reduces kernel_w entries of the row
// [pad_left start values, W column results, pad_right + 4 start values].
void column_sums(const Plane& x, const TensorView& y, const Pool2dParams& p) {
  const Window2d& w = p.window;
  const int64_t H = x.x.dim(2), W = x.x.dim(3), OH = y.dim(2), OW = y.dim(3);
  const bool is_max = p.mode == PoolMode::max;
  const float start = is_max ? -FLT_MAX : 0.0f;
  // Columns past a multiple of 4 take MLAS's scalar loop (std::max).
  const int64_t vector_columns = W - W % kLanes;
  // MLAS fills pad_right + 3 entries past the input with the start value; a
  // ceil_mode window overhangs the padded row by at most stride_w - 1 <= 1.
  const int64_t used =
      std::max(w.pad_left + W + w.pad_right + kLanes - 1, (OW - 1) * w.stride_w + w.kernel_w);
  std::vector<float> row(static_cast<size_t>(used), start);
  for (int64_t oh = 0; oh < OH; ++oh) {
    // MLAS compares the start unsigned: one above the input (or below it) reads from row 0.
    const int64_t h0 = oh * w.stride_h - w.pad_top;
    const int64_t top = h0 >= 0 && h0 < H ? h0 : 0;
    const int64_t bottom = std::min(h0 + w.kernel_h, H);
    for (int64_t iw = 0; iw < W; ++iw) {
      float r = x.at(top, iw);
      for (int64_t ih = top + 1; ih < bottom; ++ih) {
        const float v = x.at(ih, iw);
        r = !is_max ? x86_add(r, v) : iw < vector_columns ? x86_simd_max(r, v) : scalar_max(r, v);
      }
      row[static_cast<size_t>(w.pad_left + iw)] = r;
    }
    for (int64_t ow = 0; ow < OW; ++ow) {
      const int64_t b = ow * w.stride_w;  // first entry of the window in `row`
      float r = row[static_cast<size_t>(b)];
      for (int64_t j = 1; j < w.kernel_w; ++j) {
        const float v = row[static_cast<size_t>(b + j)];
        r = is_max ? x86_simd_max(r, v) : x86_add(r, v);
      }
      if (!is_max) {
        const int64_t cols = std::min(b + w.kernel_w, w.pad_left + W) - std::max(b, w.pad_left);
        r = divide(r, mlas_divisor(p, std::max<int64_t>(cols * (bottom - top), 1)));
      }
      y.at<float>(x.n, x.c, oh, ow) = r;
    }
  }
}

// Row major: the window clipped to the input, taps row-major from the start value.
void row_major(const Plane& x, const TensorView& y, const Pool2dParams& p) {
  const Window2d& w = p.window;
  const int64_t H = x.x.dim(2), W = x.x.dim(3), OH = y.dim(2), OW = y.dim(3);
  const bool is_max = p.mode == PoolMode::max;
  for (int64_t oh = 0; oh < OH; ++oh) {
    const int64_t h0 = oh * w.stride_h - w.pad_top;
    const int64_t top = std::max<int64_t>(h0, 0), bottom = std::min(h0 + w.kernel_h, H);
    for (int64_t ow = 0; ow < OW; ++ow) {
      const int64_t w0 = ow * w.stride_w - w.pad_left;
      const int64_t left = std::max<int64_t>(w0, 0), right = std::min(w0 + w.kernel_w, W);
      float r = is_max ? -FLT_MAX : 0.0f;
      for (int64_t ih = top; ih < bottom; ++ih)
        for (int64_t iw = left; iw < right; ++iw)
          r = is_max ? scalar_max(r, x.at(ih, iw)) : x86_add(r, x.at(ih, iw));
      if (!is_max) r = divide(r, mlas_divisor(p, (bottom - top) * (right - left)));
      y.at<float>(x.n, x.c, oh, ow) = r;
    }
  }
}

}  // namespace

void pool2d_f32_mlas(const TensorView& x, const TensorView& y, const Pool2dParams& p) {
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const MlasOrder order = mlas_pool_order(p.window, H, W);
  parallel_for(x.dim(0) * C, [&](int64_t nc) {
    const Plane plane{x, nc / C, nc % C};
    switch (order) {
      case MlasOrder::whole_image:
        y.at<float>(plane.n, plane.c, 0, 0) = whole_image(plane, H, W, p.mode == PoolMode::max);
        return;
      case MlasOrder::column_sums:
        return column_sums(plane, y, p);
      case MlasOrder::row_major:
        return row_major(plane, y, p);
    }
  });
}

}  // namespace npukit::ref

namespace npukit {

MlasPoolOrder mlas_pool_order(const Window2d& w, int64_t H, int64_t W) {
  using ref::kColumnBuffer;
  using ref::kMaxSmallKernel;
  const bool no_pads = w.pad_top == 0 && w.pad_bottom == 0 && w.pad_left == 0 && w.pad_right == 0;
  if (w.kernel_h == H && w.kernel_w == W && w.stride_h == 1 && w.stride_w == 1 && no_pads)
    return MlasPoolOrder::whole_image;
  if (w.stride_w <= 2 && w.kernel_h <= kMaxSmallKernel && w.kernel_w <= kMaxSmallKernel &&
      w.pad_left + w.pad_right + W <= kColumnBuffer)
    return MlasPoolOrder::column_sums;
  return MlasPoolOrder::row_major;
}

}  // namespace npukit
