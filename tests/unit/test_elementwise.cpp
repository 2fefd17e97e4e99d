// relu, bias, scale and scale_bias: values, NaN / -0 / inf rules, result_add,
// both per-channel operand shapes, any rank (relu), strided layouts, in place.
#include "unit/test_util.hpp"

namespace npukit {
namespace test_elementwise {
namespace {

using test::kInf;
using test::kNaN;
using test::same_bits;

const std::vector<float> kSpecial{-1.0f, 0.0f, 2.5f, kNaN, -0.0f, kInf, -kInf, -1e-45f};

TEST(Relu, PropagateIsMaxWithZero) {
  // max(x, 0) as PyTorch computes it: NaN stays NaN, -0 stays -0 (torch.relu(-0.0) = -0.0),
  // -inf and the negative denormal become +0.
  const Tensor x = Tensor::from<float>({8}, kSpecial);
  Tensor y(DType::f32, {8});
  relu(x, y);
  EXPECT_TRUE(same_bits(y, {0.0f, 0.0f, 2.5f, kNaN, -0.0f, kInf, 0.0f, 0.0f}));
}

TEST(Relu, ZeroNaNIsStrictGreaterThanZero) {
  // OKKernel `x > 0 ? x : +0`: NaN and -0 give +0.
  const Tensor x = Tensor::from<float>({8}, kSpecial);
  Tensor y(DType::f32, {8});
  ElementwiseParams p;
  p.relu_nan = ReluNaN::zero;
  relu(x, y, p);
  EXPECT_TRUE(same_bits(y, {0.0f, 0.0f, 2.5f, 0.0f, 0.0f, kInf, 0.0f, 0.0f}));
}

TEST(Relu, ResultAdd) {
  // y = old + relu(x): 10 + 0, 10 + 3, 10 + 0 (of -0: 10 + -0 = 10).
  const Tensor x = Tensor::from<float>({3}, {-4, 3, -0.0f});
  Tensor y = Tensor::from<float>({3}, {10, 10, 10});
  relu(x, y, {true});
  EXPECT_TRUE(same_bits(y, {10, 13, 10}));
}

TEST(Relu, AnyRankAndInPlace) {
  for (const Shape& s : {Shape{}, Shape{5}, Shape{2, 3}, Shape{2, 1, 3}, Shape{1, 2, 2, 2}}) {
    Tensor x = test::random_f32(s, 7);
    const std::vector<float> in = x.to_vector<float>();
    relu(x, x);  // y may be x itself
    const std::vector<float> out = x.to_vector<float>();
    ASSERT_EQ(out.size(), in.size());
    for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], in[i] < 0 ? 0.0f : in[i]);
  }
}

TEST(Relu, NhwcInputNchwOutput) {
  // x (1, 2, 1, 2) = [[-1, 2], [3, -4]] stored NHWC; y NCHW: [0, 2, 3, 0] in NCHW order.
  Tensor x(DType::f32, {1, 2, 1, 2}, Layout::nhwc);
  copy(Tensor::from<float>({1, 2, 1, 2}, {-1, 2, 3, -4}), x);
  Tensor y(DType::f32, {1, 2, 1, 2});
  relu(x, y);
  EXPECT_EQ(std::vector<float>(y.data<float>(), y.data<float>() + 4),
            (std::vector<float>{0, 2, 3, 0}));
}

// x (1, 2, 1, 2) = channel 0 [1, 2], channel 1 [3, 4]; s = [2, -1], b = [1, 10].
const Tensor kX = Tensor::from<float>({1, 2, 1, 2}, {1, 2, 3, 4});
const Tensor kS = Tensor::from<float>({2}, {2, -1});
const Tensor kB = Tensor::from<float>({2}, {1, 10});

TEST(ChannelOps, Bias) {
  // [1+1, 2+1, 3+10, 4+10]
  Tensor y(DType::f32, {1, 2, 1, 2});
  bias(kX, kB, y);
  EXPECT_TRUE(same_bits(y, {2, 3, 13, 14}));
  // result_add: old + x + b = [4, 6, 26, 28]; bias given as (1, C, 1, 1).
  bias(kX, Tensor::from<float>({1, 2, 1, 1}, {1, 10}), y, {true});
  EXPECT_TRUE(same_bits(y, {4, 6, 26, 28}));
}

TEST(ChannelOps, Scale) {
  // [1*2, 2*2, 3*-1, 4*-1]
  Tensor y(DType::f32, {1, 2, 1, 2});
  scale(kX, kS, y);
  EXPECT_TRUE(same_bits(y, {2, 4, -3, -4}));
  // result_add: old + x*s = [4, 8, -6, -8].
  scale(kX, Tensor::from<float>({1, 2, 1, 1}, {2, -1}), y, {true});
  EXPECT_TRUE(same_bits(y, {4, 8, -6, -8}));
  // A zero product keeps its IEEE sign: 1 * -0 = -0 (OKKernel's +0.0f is a profile matter).
  Tensor y1(DType::f32, {1, 1, 1, 1});
  scale(Tensor::from<float>({1, 1, 1, 1}, {1}), Tensor::from<float>({1}, {-0.0f}), y1);
  EXPECT_TRUE(same_bits(y1, {-0.0f}));
}

TEST(ChannelOps, ScaleBias) {
  // x*s + b: [1*2+1, 2*2+1, 3*-1+10, 4*-1+10] = [3, 5, 7, 6]
  Tensor y(DType::f32, {1, 2, 1, 2});
  scale_bias(kX, kS, kB, y);
  EXPECT_TRUE(same_bits(y, {3, 5, 7, 6}));
  // result_add: old + (x*s + b) = [6, 10, 14, 12].
  scale_bias(kX, kS, kB, y, {true});
  EXPECT_TRUE(same_bits(y, {6, 10, 14, 12}));
}

TEST(ChannelOps, ScaleBiasRoundsTheProductFirst) {
  // x = s = 1 + 2^-12, b = -(1 + 2^-11). Exactly x*s = 1 + 2^-11 + 2^-24; in fp32 (ulp 2^-23
  // near 1) the 2^-24 is half an ulp and ties to even: 1 + 2^-11. Adding b gives exactly 0.
  // A fused multiply-add would keep 2^-24.
  const float e = 1.0f + 1.0f / 4096.0f;
  const Tensor x = Tensor::from<float>({1, 1, 1, 1}, {e});
  Tensor y(DType::f32, {1, 1, 1, 1});
  scale_bias(x, Tensor::from<float>({1}, {e}), Tensor::from<float>({1}, {-(1.0f + 1.0f / 2048.0f)}),
             y);
  EXPECT_TRUE(same_bits(y, {0.0f}));
}

TEST(ChannelOps, BatchesReuseTheChannelOperand) {
  // N 2, C 2, 1x1: x = [1, 2, 3, 4] -> channels (0, 1, 0, 1); + b [1, 10] = [2, 12, 4, 14].
  Tensor y(DType::f32, {2, 2, 1, 1});
  bias(Tensor::from<float>({2, 2, 1, 1}, {1, 2, 3, 4}), kB, y);
  EXPECT_TRUE(same_bits(y, {2, 12, 4, 14}));
}

TEST(ChannelOps, NhwcGivesIdenticalResults) {
  const Shape s{2, 3, 4, 5};
  const Tensor xc = test::random_f32(s, 31), xh = test::random_f32(s, 31, Layout::nhwc);
  const Tensor sc = test::random_f32({3}, 32), bc = test::random_f32({3}, 33);
  Tensor yc(DType::f32, s), yh(DType::f32, s, Layout::nhwc);
  scale_bias(xc, sc, bc, yc);
  scale_bias(xh, sc, bc, yh);
  EXPECT_TRUE(same_bits(yh, yc.to_vector<float>()));
}

TEST(ChannelOps, NaNAndInfinity) {
  // NaN * -1 + 0 = NaN; inf * -1 = -inf; inf * 0 = NaN; -inf * 0 = NaN.
  const Tensor x = Tensor::from<float>({1, 2, 1, 2}, {kNaN, kInf, kInf, -kInf});
  Tensor y(DType::f32, {1, 2, 1, 2});
  scale_bias(x, Tensor::from<float>({2}, {-1, 0}), Tensor::from<float>({2}, {0, 0}), y);
  EXPECT_TRUE(same_bits(y, {kNaN, -kInf, kNaN, kNaN}));
}

}  // namespace
}  // namespace test_elementwise
}  // namespace npukit
