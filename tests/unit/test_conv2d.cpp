// Convolution on hand-computed cases: asymmetric pads, stride with dilation,
// zero insertion, groups, depthwise with a channel multiplier, kernel = whole
// image, 1x1 images, bias and result_add, layout independence.
#include "unit/test_util.hpp"

namespace npukit {
namespace test_conv2d {
namespace {

using test::iota4;
using test::same_bits;

Conv2dParams conv_params(int64_t kh, int64_t kw, int64_t groups = 1) {
  Conv2dParams p;
  p.window = test::window(kh, kw);
  p.groups = groups;
  return p;
}

Tensor run_conv(const Tensor& x, const Tensor& w, const Conv2dParams& p,
                const Tensor& bias = Tensor()) {
  Tensor y(DType::f32, conv2d_output_shape(x.shape(), w.shape(), p));
  conv2d(x, w, bias, y, p);
  return y;
}

// x = 1..9 in 3x3, w = [[1,2],[3,4]].
const Tensor kX = iota4({1, 1, 3, 3});
const Tensor kW = iota4({1, 1, 2, 2});

TEST(Conv2d, Valid) {
  // (0,0) 1*1 + 2*2 + 4*3 + 5*4 = 37; (0,1) 2+6+15+24 = 47;
  // (1,0) 4+10+21+32 = 67; (1,1) 5+12+24+36 = 77.
  EXPECT_TRUE(same_bits(run_conv(kX, kW, conv_params(2, 2)), {37, 47, 67, 77}));
}

TEST(Conv2d, AsymmetricPads) {
  // pads top 1, bottom 0, left 0, right 1: rows -1..2, cols 0..3
  //   row -1: P P P P / row 0: 1 2 3 P / row 1: 4 5 6 P / row 2: 7 8 9 P
  // (0,0) 1*3 + 2*4 = 11; (0,1) 2*3 + 3*4 = 18; (0,2) 3*3 = 9;
  // (1,0) 37; (1,1) 47; (1,2) 3*1 + 6*3 = 21; (2,0) 67; (2,1) 77; (2,2) 6*1 + 9*3 = 33.
  // (PyTorch's F.conv2d(F.pad(x, (0, 1, 1, 0)), w) gives the same 3x3.)
  Conv2dParams p = conv_params(2, 2);
  test::set_pads(p.window, 1, 0, 0, 1);
  EXPECT_TRUE(same_bits(run_conv(kX, kW, p), {11, 18, 9, 37, 47, 21, 67, 77, 33}));
}

TEST(Conv2d, StrideWithDilation) {
  // x(r, c) = 5r + c on 5x5, k 2, dilation 2 (extent 3), stride 2: 2x2 outputs.
  // w = [[1, 10], [100, 1000]] reads x(2i, 2j), x(2i, 2j+2), x(2i+2, 2j), x(2i+2, 2j+2):
  //   (0,0): 0 + 10*2 + 100*10 + 1000*12 = 13020
  //   (0,1): 2 + 10*4 + 100*12 + 1000*14 = 15242
  //   (1,0): 10 + 10*12 + 100*20 + 1000*22 = 24130
  //   (1,1): 12 + 10*14 + 100*22 + 1000*24 = 26352
  const Tensor x = iota4({1, 1, 5, 5}, 0.0f);
  const Tensor w = Tensor::from<float>({1, 1, 2, 2}, {1, 10, 100, 1000});
  Conv2dParams p = conv_params(2, 2);
  p.window.stride_h = p.window.stride_w = 2;
  p.window.dilation_h = p.window.dilation_w = 2;
  EXPECT_TRUE(same_bits(run_conv(x, w, p), {13020, 15242, 24130, 26352}));
}

TEST(Conv2d, ZeroInsertion) {
  // [[1,2],[3,4]] with ins 1 -> [[1,0,2],[0,0,0],[3,0,4]]; w = [[1,2],[3,4]]:
  // each 2x2 window holds exactly one input: (0,0) 1*1, (0,1) 2*2, (1,0) 3*3, (1,1) 4*4.
  const Tensor x = iota4({1, 1, 2, 2});
  Conv2dParams p = conv_params(2, 2);
  p.window.ins_h = p.window.ins_w = 1;
  EXPECT_TRUE(same_bits(run_conv(x, kW, p), {1, 4, 9, 16}));
}

TEST(Conv2d, ZeroInsertionPaddingAndDilation) {
  // x = [[1,2],[3,4]], ins_h 1, ins_w 0 -> rows [1 2] [0 0] [3 4]; pads top 1, left 1,
  // right 1 (as in the pooling test); k 2x2, dilation (2, 1); w = [[1,2],[3,4]]
  // maps taps (oh-1, ow-1), (oh-1, ow), (oh+1, ow-1), (oh+1, ow) to 1, 2, 3, 4:
  //   row 0 of outputs reads padding and inserted zeros only: 0 0 0
  //   (1,0): P*1 + 1*2 + P*3 + 3*4 = 14; (1,1): 1*1 + 2*2 + 3*3 + 4*4 = 30;
  //   (1,2): 2*1 + P*2 + 4*3 + P*4 = 14.
  const Tensor x = iota4({1, 1, 2, 2});
  Conv2dParams p = conv_params(2, 2);
  p.window.ins_h = 1;
  p.window.dilation_h = 2;
  test::set_pads(p.window, 1, 0, 1, 1);
  EXPECT_TRUE(same_bits(run_conv(x, kW, p), {0, 0, 0, 14, 30, 14}));
}

TEST(Conv2d, MultiChannelSumsOverInputChannels) {
  // 2 input channels of 1x1: [1, 2]; 3 output channels, w[oc] = [a, b]:
  //   [1, 1] -> 3; [10, 100] -> 210; [-1, 0.5] -> 0.
  const Tensor x = Tensor::from<float>({1, 2, 1, 1}, {1, 2});
  const Tensor w = Tensor::from<float>({3, 2, 1, 1}, {1, 1, 10, 100, -1, 0.5f});
  EXPECT_TRUE(same_bits(run_conv(x, w, conv_params(1, 1)), {3, 210, 0}));
}

TEST(Conv2d, Groups) {
  // C 4 (1x1 values 1, 2, 3, 4), groups 2, OC 4: outputs 0-1 read channels 0-1, 2-3 read 2-3.
  //   w0 = [10, 100]   -> 1*10 + 2*100 = 210
  //   w1 = [1, -1]     -> 1 - 2 = -1
  //   w2 = [1000, 1]   -> 3000 + 4 = 3004
  //   w3 = [0.5, 0.25] -> 1.5 + 1 = 2.5
  const Tensor x = iota4({1, 4, 1, 1});
  const Tensor w = Tensor::from<float>({4, 2, 1, 1}, {10, 100, 1, -1, 1000, 1, 0.5f, 0.25f});
  EXPECT_TRUE(same_bits(run_conv(x, w, conv_params(1, 1, 2)), {210, -1, 3004, 2.5f}));
}

TEST(Conv2d, GroupsEqualChannels) {
  // Two channels, both 1..9; groups 2: w0 = [[1,0],[0,-1]] gives x - x(+1,+1) = -4 everywhere;
  // w1 = 0.5 everywhere gives half the window sums 12, 16, 24, 28.
  std::vector<float> v(18);
  for (int i = 0; i < 18; ++i) v[i] = static_cast<float>(i % 9 + 1);
  const Tensor x = Tensor::from<float>({1, 2, 3, 3}, v);
  const Tensor w = Tensor::from<float>({2, 1, 2, 2}, {1, 0, 0, -1, .5, .5, .5, .5});
  EXPECT_TRUE(same_bits(run_conv(x, w, conv_params(2, 2, 2)), {-4, -4, -4, -4, 6, 8, 12, 14}));
}

TEST(Conv2d, KernelIsWholeImage) {
  // x = 1..6 in 2x3, w = 1..6: 1 + 4 + 9 + 16 + 25 + 36 = 91.
  EXPECT_TRUE(
      same_bits(run_conv(iota4({1, 1, 2, 3}), iota4({1, 1, 2, 3}), conv_params(2, 3)), {91}));
}

TEST(Conv2d, OneByOneImage) {
  const Tensor x = Tensor::from<float>({1, 1, 1, 1}, {3});
  // k 1: 3 * 2 = 6.
  EXPECT_TRUE(
      same_bits(run_conv(x, Tensor::from<float>({1, 1, 1, 1}, {2}), conv_params(1, 1)), {6}));
  // k 3, pads 1: only the centre tap w[1][1] = 5 meets the input: 15.
  Conv2dParams p = conv_params(3, 3);
  test::set_pads(p.window, 1, 1, 1, 1);
  EXPECT_TRUE(same_bits(run_conv(x, iota4({1, 1, 3, 3}), p), {15}));
}

TEST(Conv2d, BiasAndResultAdd) {
  // conv = 37 47 67 77 (see Valid); bias 0.5 -> 37.5 ...; result_add onto y = 100, 200, 300, 400.
  Conv2dParams p = conv_params(2, 2);
  p.has_bias = true;
  const Tensor b = Tensor::from<float>({1}, {0.5f});
  EXPECT_TRUE(same_bits(run_conv(kX, kW, p, b), {37.5f, 47.5f, 67.5f, 77.5f}));
  p.result_add = true;
  Tensor y = Tensor::from<float>({1, 1, 2, 2}, {100, 200, 300, 400});
  conv2d(kX, kW, b, y, p);
  EXPECT_TRUE(same_bits(y, {137.5f, 247.5f, 367.5f, 477.5f}));
  // A (1, OC, 1, 1) bias is accepted too; two output channels with bias [1, -1].
  Conv2dParams p2 = conv_params(1, 1);
  p2.has_bias = true;
  const Tensor w2 = Tensor::from<float>({2, 1, 1, 1}, {2, 3});
  const Tensor b2 = Tensor::from<float>({1, 2, 1, 1}, {1, -1});
  const Tensor x2 = Tensor::from<float>({1, 1, 1, 2}, {1, 2});
  // ch0: 2*1+1, 2*2+1 = 3, 5; ch1: 3*1-1, 3*2-1 = 2, 5.
  EXPECT_TRUE(same_bits(run_conv(x2, w2, p2, b2), {3, 5, 2, 5}));
  // Without has_bias the bias tensor is ignored.
  EXPECT_TRUE(same_bits(run_conv(kX, kW, conv_params(2, 2), b), {37, 47, 67, 77}));
}

TEST(Conv2d, ResultAddOrderIsConvPlusBiasThenOld) {
  // (acc + bias) + old: acc = 1 (x = 1, w = 1), bias = 2^24, old = -2^24.
  // (1 + 2^24) rounds to 2^24 (ties to even), + -2^24 = 0. The other order
  // (acc + old) + bias would give 1.
  Conv2dParams p = conv_params(1, 1);
  p.has_bias = p.result_add = true;
  const Tensor one = Tensor::from<float>({1, 1, 1, 1}, {1});
  const Tensor b = Tensor::from<float>({1}, {16777216.0f});
  Tensor y = Tensor::from<float>({1, 1, 1, 1}, {-16777216.0f});
  conv2d(one, one, b, y, p);
  EXPECT_TRUE(same_bits(y, {0.0f}));
}

TEST(Conv2d, NhwcGivesIdenticalResults) {
  const Shape xs{2, 4, 6, 5}, ws{6, 2, 3, 2};
  const Tensor xc = test::random_f32(xs, 3), xh = test::random_f32(xs, 3, Layout::nhwc);
  const Tensor w = test::random_f32(ws, 4), b = test::random_f32({6}, 5);
  Conv2dParams p = conv_params(3, 2, 2);
  test::set_pads(p.window, 2, 0, 1, 1);
  p.window.stride_w = 2;
  p.window.dilation_h = 2;
  p.has_bias = true;
  const Shape os = conv2d_output_shape(xs, ws, p);
  Tensor yc(DType::f32, os), yh(DType::f32, os, Layout::nhwc);
  conv2d(xc, w, b, yc, p);
  conv2d(xh, w, b, yh, p);
  EXPECT_TRUE(same_bits(yh, yc.to_vector<float>()));
}

TEST(Conv2d, OutputShape) {
  // (10 + 1 + 2 - ((3-1)*2 + 1)) / 2 + 1 = 5; (7 - 1) / 3 + 1 = 3.
  Conv2dParams p = conv_params(3, 1);
  test::set_pads(p.window, 1, 2, 0, 0);
  p.window.stride_h = 2;
  p.window.stride_w = 3;
  p.window.dilation_h = 2;
  EXPECT_EQ(conv2d_output_shape({2, 3, 10, 7}, {8, 3, 3, 1}, p), (Shape{2, 8, 5, 3}));
}

Depthwise2dParams dw_params(int64_t k, int64_t multiplier) {
  Depthwise2dParams p;
  p.window = test::window(k, k);
  p.multiplier = multiplier;
  return p;
}

TEST(Depthwise2d, ChannelMultiplier) {
  // C 2 (1x1 values 3 and 5), multiplier 2: outputs read channels 0, 0, 1, 1;
  // w = [1, 2, 3, 4] -> 3, 6, 15, 20; bias [1, 1, 1, -20] -> 4, 7, 16, 0.
  const Tensor x = Tensor::from<float>({1, 2, 1, 1}, {3, 5});
  const Tensor w = Tensor::from<float>({4, 1, 1, 1}, {1, 2, 3, 4});
  Depthwise2dParams p = dw_params(1, 2);
  Tensor y(DType::f32, depthwise2d_output_shape(x.shape(), w.shape(), p));
  ASSERT_EQ(y.shape(), (Shape{1, 4, 1, 1}));
  depthwise2d(x, w, Tensor(), y, p);
  EXPECT_TRUE(same_bits(y, {3, 6, 15, 20}));
  p.has_bias = true;
  depthwise2d(x, w, Tensor::from<float>({4}, {1, 1, 1, -20}), y, p);
  EXPECT_TRUE(same_bits(y, {4, 7, 16, 0}));
  // result_add onto the last result: 4+4, 7+7, 16+16, 0+0.
  p.result_add = true;
  depthwise2d(x, w, Tensor::from<float>({4}, {1, 1, 1, -20}), y, p);
  EXPECT_TRUE(same_bits(y, {8, 14, 32, 0}));
}

TEST(Depthwise2d, SpatialWithPadsAndStride) {
  // One channel 1..9, multiplier 2, k 2 pads 1 stride 2: windows start at -1, 1.
  //   w0 = [[1,2],[3,4]]: (0,0) 1*4 = 4; (0,1) 2*3 + 3*4 = 18; (1,0) 4*2 + 7*4 = 36;
  //   (1,1) 5*1 + 6*2 + 8*3 + 9*4 = 77.
  //   w1 = all 1: window sums 1, 5, 11, 28.
  const Tensor x = iota4({1, 1, 3, 3});
  const Tensor w = Tensor::from<float>({2, 1, 2, 2}, {1, 2, 3, 4, 1, 1, 1, 1});
  Depthwise2dParams p = dw_params(2, 2);
  p.window.stride_h = p.window.stride_w = 2;
  test::set_pads(p.window, 1, 1, 1, 1);
  Tensor y(DType::f32, depthwise2d_output_shape(x.shape(), w.shape(), p));
  depthwise2d(x, w, Tensor(), y, p);
  EXPECT_TRUE(same_bits(y, {4, 18, 36, 77, 1, 5, 11, 28}));
}

TEST(Depthwise2d, EqualsGroupedConvolution) {
  // Depthwise with multiplier m is conv2d with groups = C and OC = C*m.
  const Shape xs{2, 3, 7, 6}, ws{6, 1, 3, 3};
  const Tensor x = test::random_f32(xs, 21), w = test::random_f32(ws, 22);
  Depthwise2dParams d = dw_params(3, 2);
  d.window.dilation_w = 2;
  test::set_pads(d.window, 1, 0, 2, 1);
  Conv2dParams c{d.window, 3, false, false};
  Tensor yd(DType::f32, depthwise2d_output_shape(xs, ws, d));
  Tensor yc(DType::f32, conv2d_output_shape(xs, ws, c));
  depthwise2d(x, w, Tensor(), yd, d);
  conv2d(x, w, Tensor(), yc, c);
  EXPECT_TRUE(same_bits(yd, yc.to_vector<float>()));
}

}  // namespace
}  // namespace test_conv2d
}  // namespace npukit
