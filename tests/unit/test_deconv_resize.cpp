// ConvTranspose and Resize: hand-computed cases, ONNX Runtime's pad rules, a
// scatter-order cross-check of the gather reference, thread-count invariance
// and bad input. (ONNX Runtime itself: tests/python/test_ort_ops_deconv_resize.py.)
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "npukit/ops/conv_transpose.hpp"
#include "npukit/ops/resize.hpp"
#include "npukit/parallel.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_deconv_resize {
namespace {

using test::iota4;
using test::random_f32;
using test::same_bits;

Tensor deconv(const Tensor& x, const Tensor& w, const Tensor* b, const ConvTransposeParams& p) {
  Tensor y(DType::f32, {x.view().dim(0), w.view().dim(1) * p.groups, p.out_h, p.out_w});
  conv_transpose2d(x.view(), w.view(), b ? b->view() : TensorView(), y.view(), p);
  return y;
}

TEST(ConvTranspose, Stride2StampsTheKernel) {
  const Tensor x = Tensor::from<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = Tensor::from<float>({1, 1, 2, 2}, {1, 10, 100, 1000});
  ConvTransposeParams p;
  p.kernel_h = p.kernel_w = 2;
  p.stride_h = p.stride_w = 2;
  p.out_h = p.out_w = 4;
  EXPECT_TRUE(same_bits(deconv(x, w, nullptr, p), {1, 10, 2, 20, 100, 1000, 200, 2000,  //
                                                   3, 30, 4, 40, 300, 3000, 400, 4000}));
}

TEST(ConvTranspose, OverlapPadsBiasGroups) {
  // Two groups of one channel each; ones kernel 2x2, stride 1: full output 3x3 =
  // [[1,3,2],[4,10,6],[3,7,4]] for [[1,2],[3,4]]; pad_top = pad_left = 1, 2x2 kept.
  const Tensor x = Tensor::from<float>({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -4});
  const Tensor w = Tensor::from<float>({2, 1, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1});
  const Tensor b = Tensor::from<float>({2}, {0.5f, -0.5f});
  ConvTransposeParams p;
  p.kernel_h = p.kernel_w = 2;
  p.groups = 2;
  p.has_bias = true;
  p.out_h = p.out_w = 2;
  p.pad_top = p.pad_left = 1;
  EXPECT_TRUE(same_bits(deconv(x, w, &b, p), {10.5f, 6.5f, 7.5f, 4.5f,  //
                                              -10.5f, -6.5f, -7.5f, -4.5f}));
}

TEST(ConvTranspose, OnnxRuntimeShapeRule) {
  // in 3, stride 2, kernel 3: full 7; SAME pads to 6, the odd unit on the tail for
  // SAME_UPPER and on the head for SAME_LOWER (ONNX Runtime 1.30, checked by the differential).
  auto a = conv_transpose_axis(3, 2, 3, 1, 0, "SAME_UPPER", 0, 0, -1);
  EXPECT_EQ(a.pad_head, 0);
  EXPECT_EQ(a.pad_tail, 1);
  EXPECT_EQ(a.out_size, 6);
  a = conv_transpose_axis(3, 2, 3, 1, 0, "SAME_LOWER", 0, 0, -1);
  EXPECT_EQ(a.pad_head, 1);
  EXPECT_EQ(a.pad_tail, 0);
  // output_shape: pads derived (NOTSET: odd unit on the head), explicit pads ignored.
  a = conv_transpose_axis(3, 2, 3, 1, 1, "NOTSET", 5, 5, 5);
  EXPECT_EQ(a.pad_head, 2);
  EXPECT_EQ(a.pad_tail, 1);
  EXPECT_EQ(a.out_size, 5);
  // Larger than the full size: no pads, the extra rows hold only the bias.
  a = conv_transpose_axis(2, 1, 2, 1, 0, "NOTSET", 0, 0, 6);
  EXPECT_EQ(a.pad_head, 0);
  EXPECT_EQ(a.out_size, 6);
  a = conv_transpose_axis(4, 3, 2, 2, 1, "NOTSET", 1, 2, -1);
  EXPECT_EQ(a.out_size, 3 * 3 + 1 + 2 + 1 - 3);
}

// The gather reference against a scatter loop in the same per-output order
// (c, kh, kw ascending): every output is a sum in that order, so bits agree.
TEST(ConvTranspose, RandomMatchesScatterOrderAllThreadCounts) {
  const uint32_t seed = 20261126;
  std::mt19937 gen(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  for (int iter = 0; iter < 60; ++iter) {
    ConvTransposeParams p;
    p.groups = pick(1, 3);
    const int64_t N = pick(1, 2), C = p.groups * pick(1, 3), Mg = pick(1, 3);
    const int64_t H = pick(1, 6), W = pick(1, 6);
    p.kernel_h = pick(1, 4);
    p.kernel_w = pick(1, 4);
    p.stride_h = pick(1, 3);
    p.stride_w = pick(1, 3);
    p.dilation_h = pick(1, 2);
    p.dilation_w = pick(1, 2);
    p.pad_top = pick(0, 2);
    p.pad_left = pick(0, 2);
    p.has_bias = pick(0, 1) == 1;
    p.out_h = std::max<int64_t>(
        1, (H - 1) * p.stride_h + (p.kernel_h - 1) * p.dilation_h + 1 - p.pad_top + pick(-2, 2));
    p.out_w = std::max<int64_t>(
        1, (W - 1) * p.stride_w + (p.kernel_w - 1) * p.dilation_w + 1 - p.pad_left + pick(-2, 2));
    const Tensor x = random_f32({N, C, H, W}, seed + static_cast<uint32_t>(iter));
    const Tensor w = random_f32({C, Mg, p.kernel_h, p.kernel_w}, seed * 3 + iter);
    const Tensor b = random_f32({Mg * p.groups}, seed * 5 + iter);
    // Scatter in (c, kh, kw) order per output: loop c outermost, then kh, kw, then pixels.
    const int64_t M = Mg * p.groups, Cg = C / p.groups;
    std::vector<float> want(static_cast<size_t>(N * M * p.out_h * p.out_w), 0.0f);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t c = (m / Mg) * Cg; c < (m / Mg + 1) * Cg; ++c)
          for (int64_t kh = 0; kh < p.kernel_h; ++kh)
            for (int64_t kw = 0; kw < p.kernel_w; ++kw)
              for (int64_t ih = 0; ih < H; ++ih)
                for (int64_t iw = 0; iw < W; ++iw) {
                  const int64_t oh = ih * p.stride_h + kh * p.dilation_h - p.pad_top;
                  const int64_t ow = iw * p.stride_w + kw * p.dilation_w - p.pad_left;
                  if (oh < 0 || oh >= p.out_h || ow < 0 || ow >= p.out_w) continue;
                  want[static_cast<size_t>(((n * M + m) * p.out_h + oh) * p.out_w + ow)] +=
                      x.view().at<float>(n, c, ih, iw) * w.view().at<float>(c, m % Mg, kh, kw);
                }
    if (p.has_bias)
      for (size_t i = 0; i < want.size(); ++i)
        want[i] += b.view().data<float>()[(i / static_cast<size_t>(p.out_h * p.out_w)) % M];
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      EXPECT_TRUE(same_bits(deconv(x, w, &b, p), want))
          << "seed " << seed << " iter " << iter << " threads " << threads << " N" << N << " C" << C
          << " M" << M << " groups " << p.groups << " H" << H << " W" << W << " k" << p.kernel_h
          << "x" << p.kernel_w << " s" << p.stride_h << "," << p.stride_w << " d" << p.dilation_h
          << "," << p.dilation_w << " pads " << p.pad_top << "," << p.pad_left << " out " << p.out_h
          << "x" << p.out_w;
    }
  }
  set_num_threads(0);
}

TEST(ConvTranspose, BadInput) {
  const Tensor x = iota4({1, 3, 2, 2}), w = iota4({3, 1, 1, 1});
  ConvTransposeParams p;
  p.groups = 2;
  p.out_h = p.out_w = 2;
  Tensor y(DType::f32, {1, 2, 2, 2});
  EXPECT_TRUE(test::raises([&] { conv_transpose2d(x.view(), w.view(), {}, y.view(), p); },
                           "npukit::conv_transpose2d", "groups"));
  p.groups = 1;
  p.stride_h = 0;
  EXPECT_TRUE(test::raises([&] { conv_transpose2d(x.view(), w.view(), {}, y.view(), p); },
                           "npukit::conv_transpose2d", "stride_h"));
}

Tensor resize(const Tensor& x, int64_t oh, int64_t ow, const ResizeParams& p) {
  Tensor y(DType::f32, {x.view().dim(0), x.view().dim(1), oh, ow});
  resize2d(x.view(), y.view(), p);
  return y;
}

TEST(Resize, NearestModes) {
  const Tensor x = Tensor::from<float>({1, 1, 1, 4}, {1, 2, 3, 4});
  ResizeParams p;
  p.scale_w = 1.5f;  // 4 -> 6: asymmetric coordinates 0, .667, 1.333, 2, 2.667, 3.333
  p.coord = ResizeCoord::asymmetric;
  p.nearest = ResizeNearest::floor;
  EXPECT_TRUE(same_bits(resize(x, 1, 6, p), {1, 1, 2, 3, 3, 4}));
  p.nearest = ResizeNearest::ceil;  // ceil(3.333) = 4 clamps to 3
  EXPECT_TRUE(same_bits(resize(x, 1, 6, p), {1, 2, 3, 3, 4, 4}));
  // 2x with half_pixel: coordinates -0.25, 0.25, 0.75, ...: ties never occur.
  p.scale_w = 2.0f;
  p.coord = ResizeCoord::half_pixel;
  p.nearest = ResizeNearest::round_prefer_floor;
  EXPECT_TRUE(same_bits(resize(x, 1, 8, p), {1, 1, 2, 2, 3, 3, 4, 4}));
  // 0.5 downscale, asymmetric: coordinates 0 and 2; tf_half_pixel_for_nn: 1 and 3.
  p.scale_w = 0.5f;
  p.coord = ResizeCoord::tf_half_pixel_for_nn;
  EXPECT_TRUE(same_bits(resize(x, 1, 2, p), {2, 4}));
  // Ties: 4 -> 8 asymmetric at 0.5 steps: prefer floor vs prefer ceil.
  p.scale_w = 2.0f;
  p.coord = ResizeCoord::asymmetric;
  EXPECT_TRUE(same_bits(resize(x, 1, 8, p), {1, 1, 2, 2, 3, 3, 4, 4}));
  p.nearest = ResizeNearest::round_prefer_ceil;
  EXPECT_TRUE(same_bits(resize(x, 1, 8, p), {1, 2, 2, 3, 3, 4, 4, 4}));
}

// ONNX Runtime 1.30 rounds a coordinate one ulp from x.5 as the tie: 7 -> 8
// asymmetric, output 4 reads float 4 / (8/7) = 3.4999998, which it rounds to
// 4 with round_prefer_ceil (std::round alone gives 3); floor keeps 3.
TEST(Resize, NearestOneUlpFromHalfIsATie) {
  const Tensor x = Tensor::from<float>({1, 1, 1, 7}, {0, 1, 2, 3, 4, 5, 6});
  ResizeParams p;
  p.scale_w = 8.0f / 7.0f;
  p.coord = ResizeCoord::asymmetric;
  ASSERT_EQ(4.0f / p.scale_w, 3.4999998f);
  p.nearest = ResizeNearest::round_prefer_ceil;
  EXPECT_EQ(resize(x, 1, 8, p).data<float>()[4], 4.0f);
  p.nearest = ResizeNearest::round_prefer_floor;
  EXPECT_EQ(resize(x, 1, 8, p).data<float>()[4], 3.0f);
  p.nearest = ResizeNearest::floor;
  EXPECT_EQ(resize(x, 1, 8, p).data<float>()[4], 3.0f);
}

TEST(Resize, Bilinear) {
  const Tensor x = Tensor::from<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  ResizeParams p;
  p.mode = ResizeMode::linear;
  p.coord = ResizeCoord::align_corners;
  p.scale_h = p.scale_w = 1.5f;
  EXPECT_TRUE(same_bits(resize(x, 3, 3, p), {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4}));
  const Tensor r = Tensor::from<float>({1, 1, 1, 2}, {1, 2});
  p.coord = ResizeCoord::half_pixel;
  p.scale_h = 1.0f;
  p.scale_w = 2.0f;  // coordinates -0.25 (clamped), 0.25, 0.75, 1.25 (clamped)
  EXPECT_TRUE(same_bits(resize(r, 1, 4, p), {1, 1.25f, 1.75f, 2}));
  // pytorch_half_pixel with an output length 1 reads coordinate 0.
  p.coord = ResizeCoord::pytorch_half_pixel;
  p.scale_w = 0.5f;
  EXPECT_TRUE(same_bits(resize(r, 1, 1, p), {1}));
  // NaN spreads only to outputs that weigh it.
  const Tensor n = Tensor::from<float>({1, 1, 1, 3}, {test::kNaN, 2, 4});
  p.coord = ResizeCoord::align_corners;
  p.scale_w = 5.0f / 3.0f;  // 3 -> 5: coordinates 0, .5, 1, 1.5, 2
  const auto v = resize(n, 1, 5, p).to_vector<float>();
  EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]));
  EXPECT_TRUE(same_bits(std::vector<float>(v.begin() + 2, v.end()), {2, 3, 4}));
}

TEST(Resize, SameShapeCopiesAndThreadsAgree) {
  const Tensor x = random_f32({2, 3, 5, 7}, 7);
  ResizeParams p;
  p.coord = ResizeCoord::tf_half_pixel_for_nn;
  p.nearest = ResizeNearest::ceil;  // would shift by one without the copy rule
  EXPECT_TRUE(same_bits(resize(x, 5, 7, p), x.to_vector<float>()));
  // Nearest on one axis of scale 1 maps it straight through too (ceil would shift rows).
  const Tensor r = Tensor::from<float>({1, 1, 3, 1}, {1, 2, 3});
  p.scale_w = 2.0f;
  EXPECT_TRUE(same_bits(resize(r, 3, 2, p), {1, 1, 2, 2, 3, 3}));
  p.scale_w = 1.0f;
  p.mode = ResizeMode::linear;
  p.coord = ResizeCoord::half_pixel;
  p.scale_h = 13.0f / 5.0f;
  p.scale_w = 3.0f / 7.0f;
  set_num_threads(1);
  const auto one = resize(x, 13, 3, p).to_vector<float>();
  for (int threads : {2, 3}) {
    set_num_threads(threads);
    EXPECT_TRUE(same_bits(resize(x, 13, 3, p), one)) << "threads " << threads;
  }
  set_num_threads(0);
}

TEST(Resize, BadInput) {
  const Tensor x = iota4({1, 1, 2, 2});
  ResizeParams p;
  p.scale_h = 0;
  EXPECT_TRUE(test::raises([&] { resize(x, 3, 3, p); }, "npukit::resize2d", "scales"));
  Tensor y(DType::f32, {1, 2, 3, 3});
  p.scale_h = 1;
  EXPECT_TRUE(test::raises([&] { resize2d(x.view(), y.view(), p); }, "npukit::resize2d", "y"));
}

}  // namespace
}  // namespace test_deconv_resize
}  // namespace npukit
