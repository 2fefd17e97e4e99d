// The measured BM1684 C-model rules (docs/npu-simulator.md, "Same numbers as the vendor's C-model")
// as semantics of the operator core: each expectation is computed by hand in the comment.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "npukit/npukit.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_fp32_bm1684 {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kDenorm = 1e-40f;  // a denormal

Tensor t4(Shape s, std::vector<float> v) {
  return Tensor::from<float>(s, v);
}

Pool2dParams bm_pool(PoolMode mode, int64_t kh, int64_t kw) {
  Pool2dParams p;
  p.mode = mode;
  p.window.kernel_h = kh;
  p.window.kernel_w = kw;
  apply_profile(p, Profile::bm1684);
  return p;
}

TEST(Bm1684Fp32, FlushDenormalKeepsSign) {
  EXPECT_EQ(flush_denormal(kDenorm), 0.0f);
  EXPECT_FALSE(std::signbit(flush_denormal(kDenorm)));
  EXPECT_TRUE(std::signbit(flush_denormal(-kDenorm)));
  EXPECT_EQ(flush_denormal(FLT_MIN), FLT_MIN);
  EXPECT_TRUE(std::isnan(flush_denormal(kNaN)));
}

TEST(Bm1684Fp32, AvgPoolAlternatesTwoAccumulatorsOverTaps) {
  // R = 1/4; terms 2.5e7, -2.5e7, 0.25, 0.25 on taps 0..3:
  // A0 = 2.5e7 + 0.25 = 2.5e7 (ulp 2), A1 = -2.5e7 + 0.25 = -2.5e7 -> 0.
  // A sequential sum / 4 gives ((1e8 - 1e8) + 1 + 1) / 4 = 0.5.
  Tensor x = t4({1, 1, 1, 4}, {1e8f, -1e8f, 1.0f, 1.0f});
  Tensor y(DType::f32, {1, 1, 1, 1});
  pool2d(x, y, bm_pool(PoolMode::avg, 1, 4));
  EXPECT_EQ(y.data<float>()[0], 0.0f);
  Pool2dParams seq = bm_pool(PoolMode::avg, 1, 4);
  apply_profile(seq, Profile::pytorch);
  pool2d(x, y, seq);
  EXPECT_EQ(y.data<float>()[0], 0.5f);
}

TEST(Bm1684Fp32, AvgPoolCountsPaddingAsZeroTapsAndGivesPositiveZero) {
  // kernel 1x3, pad left 2: the first window is [pad, pad, -0]: terms +0, +0, -0*(1/3) = -0;
  // A0 = (+0 + +0) + -0 = +0, A1 = +0 + +0 = +0 -> +0.
  Tensor x = t4({1, 1, 1, 1}, {-0.0f});
  Pool2dParams p = bm_pool(PoolMode::avg, 1, 3);
  p.window.pad_left = 2;
  p.window.pad_right = 2;
  Tensor y(DType::f32, {1, 1, 1, 3});
  pool2d(x, y, p);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(y.data<float>()[i], 0.0f);
    EXPECT_FALSE(std::signbit(y.data<float>()[i])) << i;
  }
  // A window of 3 with one 3.0f divides by 3 (kernel area): 3 * (1/3) = 1.
  Tensor x3 = t4({1, 1, 1, 1}, {3.0f});
  pool2d(x3, y, p);
  EXPECT_EQ(y.data<float>()[1], 3.0f * (1.0f / 3.0f));
}

TEST(Bm1684Fp32, AvgPoolFlushesDenormalInputsAndResults) {
  // Input denormal -> 0 (DAZ). 2*FLT_MIN * 1/4 = FLT_MIN/2 is denormal -> 0 (FTZ).
  Tensor x = t4({1, 1, 1, 4}, {kDenorm, 2 * FLT_MIN, 0.0f, 0.0f});
  Tensor y(DType::f32, {1, 1, 1, 1});
  pool2d(x, y, bm_pool(PoolMode::avg, 1, 4));
  EXPECT_EQ(y.data<float>()[0], 0.0f);
  Tensor x1 = t4({1, 1, 1, 1}, {kDenorm});
  Tensor y1(DType::f32, {1, 1, 1, 1});
  pool2d(x1, y1, bm_pool(PoolMode::avg, 1, 1));
  EXPECT_EQ(y1.data<float>()[0], 0.0f);
}

TEST(Bm1684Fp32, AvgPoolPropagatesNaNAndInf) {
  Tensor x = t4({1, 1, 1, 2}, {kNaN, 1.0f});
  Tensor y(DType::f32, {1, 1, 1, 1});
  pool2d(x, y, bm_pool(PoolMode::avg, 1, 2));
  EXPECT_TRUE(std::isnan(y.data<float>()[0]));
  Tensor xi = t4({1, 1, 1, 2}, {-kInf, 1.0f});
  pool2d(xi, y, bm_pool(PoolMode::avg, 1, 2));
  EXPECT_EQ(y.data<float>()[0], -kInf);
}

TEST(Bm1684Fp32, MaxPoolStrictFromMinusFltMax) {
  Tensor y(DType::f32, {1, 1, 1, 1});
  auto run = [&](std::vector<float> v) {
    Tensor x = t4({1, 1, 1, static_cast<int64_t>(v.size())}, v);
    pool2d(x, y, bm_pool(PoolMode::max, 1, static_cast<int64_t>(v.size())));
    return y.data<float>()[0];
  };
  EXPECT_EQ(run({kNaN, 1.0f}), 1.0f);  // NaN never wins
  EXPECT_EQ(run({1.0f, kNaN}), 1.0f);
  EXPECT_EQ(run({kNaN, kNaN}), -FLT_MAX);         // nothing beats the start value
  EXPECT_EQ(run({-kInf, -kInf}), -FLT_MAX);       // -inf is not > -FLT_MAX
  EXPECT_TRUE(std::signbit(run({-0.0f, 0.0f})));  // ties keep the first
  EXPECT_FALSE(std::signbit(run({0.0f, -0.0f})));
  EXPECT_EQ(run({kDenorm, -1.0f}), 0.0f);  // the denormal is read as +0
  EXPECT_EQ(run({kInf, 1.0f}), kInf);
}

TEST(Bm1684Fp32, MaxPoolPaddingActsAsMinusFltMax) {
  Pool2dParams p = bm_pool(PoolMode::max, 1, 2);
  p.window.pad_left = 1;
  Tensor x = t4({1, 1, 1, 1}, {-kInf});
  Tensor y(DType::f32, {1, 1, 1, 1});
  pool2d(x, y, p);
  EXPECT_EQ(y.data<float>()[0], -FLT_MAX);
}

Conv2dParams bm_conv(int64_t kh, int64_t kw) {
  Conv2dParams p;
  p.window.kernel_h = kh;
  p.window.kernel_w = kw;
  apply_profile(p, Profile::bm1684);
  return p;
}

TEST(Bm1684Fp32, Conv2dFourAccumulatorsOverTapAndChannelPair) {
  // IC 2 (one pair), kernel 1x2, weights 1: steps s = k. L0 = x(ic0,k0) = 1e8,
  // L1 = x(ic1,k0) = -1e8, L2 = x(ic0,k1) = 1, L3 = x(ic1,k1) = 1.
  // (L0 + L2) + (L1 + L3) = 1e8 + -1e8 = 0; the sequential (ic, kh, kw) order
  // gives ((1e8 + 1) - 1e8) + 1 = 1.
  Tensor x = t4({1, 2, 1, 2}, {1e8f, 1.0f, -1e8f, 1.0f});
  Tensor w = t4({1, 2, 1, 2}, {1, 1, 1, 1});
  Tensor y(DType::f32, {1, 1, 1, 1});
  conv2d(x, w, Tensor(), y, bm_conv(1, 2));
  EXPECT_EQ(y.data<float>()[0], 0.0f);
  Conv2dParams seq = bm_conv(1, 2);
  apply_profile(seq, Profile::pytorch);
  conv2d(x, w, Tensor(), y, seq);
  EXPECT_EQ(y.data<float>()[0], 1.0f);
}

TEST(Bm1684Fp32, Conv2dOddChannelStepParity) {
  // IC 3 (pairs {0,1}, {2}), ICn 2, kernel 1x1: step s = j. Pair 0 -> L0, L1;
  // pair 1 (s = 1) -> L2 (ic 2 is even). x = (1e8, 1, -1e8), w = 1:
  // (L0 + L2) + (L1 + L3) = (1e8 - 1e8) + (1 + 0) = 1.
  Tensor x = t4({1, 3, 1, 1}, {1e8f, 1.0f, -1e8f});
  Tensor w = t4({1, 3, 1, 1}, {1, 1, 1});
  Tensor y(DType::f32, {1, 1, 1, 1});
  conv2d(x, w, Tensor(), y, bm_conv(1, 1));
  EXPECT_EQ(y.data<float>()[0], 1.0f);
}

TEST(Bm1684Fp32, Conv2dBiasThenResultAddAndFlush) {
  // r = 2*3 = 6; (6 + bias 0.5) + old 0.25 = 6.75. Then a denormal product:
  // FLT_MIN * 0.5 -> 0, + bias 0 -> +0.
  Tensor x = t4({1, 1, 1, 1}, {2.0f});
  Tensor w = t4({1, 1, 1, 1}, {3.0f});
  Tensor b = t4({1, 1, 1, 1}, {0.5f});
  Tensor y = t4({1, 1, 1, 1}, {0.25f});
  Conv2dParams p = bm_conv(1, 1);
  p.has_bias = true;
  p.result_add = true;
  conv2d(x, w, b, y, p);
  EXPECT_EQ(y.data<float>()[0], 6.75f);
  Tensor xs = t4({1, 1, 1, 1}, {FLT_MIN});
  Tensor ws = t4({1, 1, 1, 1}, {0.5f});
  Tensor ys(DType::f32, {1, 1, 1, 1});
  conv2d(xs, ws, Tensor(), ys, bm_conv(1, 1));
  EXPECT_EQ(ys.data<float>()[0], 0.0f);
}

TEST(Bm1684Fp32, DepthwiseAlternatesOverTapsThenBias) {
  // Taps 0..3 = 1e8, -1e8, 1, 1 (weights 1): A0 = 1e8 + 1 = 1e8, A1 = -1e8 + 1 = -1e8;
  // A0 + A1 = 0; + bias 0.25 = 0.25.
  Tensor x = t4({1, 1, 1, 4}, {1e8f, -1e8f, 1.0f, 1.0f});
  Tensor w = t4({1, 1, 1, 4}, {1, 1, 1, 1});
  Tensor b = t4({1, 1, 1, 1}, {0.25f});
  Tensor y(DType::f32, {1, 1, 1, 1});
  Depthwise2dParams p;
  p.window.kernel_w = 4;
  p.has_bias = true;
  apply_profile(p, Profile::bm1684);
  depthwise2d(x, w, b, y, p);
  EXPECT_EQ(y.data<float>()[0], 0.25f);
}

TEST(Bm1684Fp32, MatmulAlternatesOverKThenBiasThenOld) {
  // a = (1e8, -1e8, 1, 1), b = ones: A0 = 1e8 + 1 = 1e8, A1 = -1e8 + 1 = -1e8 -> 0;
  // + bias 1 = 1; + old -0.5 = 0.5. The sequential order gives 2 + 1 - 0.5 = 2.5.
  Tensor a = Tensor::from<float>({1, 4}, {1e8f, -1e8f, 1.0f, 1.0f});
  Tensor b = Tensor::from<float>({4, 1}, {1, 1, 1, 1});
  Tensor bias = Tensor::from<float>({1}, {1.0f});
  Tensor y = Tensor::from<float>({1, 1}, {-0.5f});
  MatmulParams p;
  p.has_bias = true;
  p.result_add = true;
  apply_profile(p, Profile::bm1684);
  matmul(a, b, bias, y, p);
  EXPECT_EQ(y.data<float>()[0], 0.5f);
  Tensor y2 = Tensor::from<float>({1, 1}, {-0.5f});
  apply_profile(p, Profile::onnxruntime);
  matmul(a, b, bias, y2, p);
  EXPECT_EQ(y2.data<float>()[0], 2.5f);
}

ElementwiseParams bm_elem() {
  ElementwiseParams p;
  apply_profile(p, Profile::bm1684);
  return p;
}

TEST(Bm1684Fp32, ReluGivesPositiveZeroForNaNMinusZeroAndDenormals) {
  Tensor x = t4({1, 1, 1, 5}, {kNaN, -0.0f, kDenorm, 2.0f, -kInf});
  Tensor y(DType::f32, {1, 1, 1, 5});
  relu(x, y, bm_elem());
  const float* o = y.data<float>();
  for (int i : {0, 1, 2, 4}) {
    EXPECT_EQ(o[i], 0.0f) << i;
    EXPECT_FALSE(std::signbit(o[i])) << i;
  }
  EXPECT_EQ(o[3], 2.0f);
}

TEST(Bm1684Fp32, ScaleAddsPositiveZero) {
  // -1 * 0 = -0; -0 + 0.0f = +0. Default semantics keep -0.
  Tensor x = t4({1, 1, 1, 1}, {-1.0f});
  Tensor s = t4({1, 1, 1, 1}, {0.0f});
  Tensor y(DType::f32, {1, 1, 1, 1});
  scale(x, s, y, bm_elem());
  EXPECT_FALSE(std::signbit(y.data<float>()[0]));
  scale(x, s, y, ElementwiseParams{});
  EXPECT_TRUE(std::signbit(y.data<float>()[0]));
}

TEST(Bm1684Fp32, ScaleBiasRoundsTwice) {
  // x = s = 1 + 2^-23: x*s = 1 + 2^-22 + 2^-46 rounds to 1 + 2^-22; - 1 = 2^-22
  // (a fused multiply-add would keep the 2^-46).
  const float e = std::ldexp(1.0f, -23);
  Tensor x = t4({1, 1, 1, 1}, {1.0f + e});
  Tensor s = t4({1, 1, 1, 1}, {1.0f + e});
  Tensor b = t4({1, 1, 1, 1}, {-1.0f});
  Tensor y(DType::f32, {1, 1, 1, 1});
  scale_bias(x, s, b, y, bm_elem());
  EXPECT_EQ(y.data<float>()[0], std::ldexp(1.0f, -22));
}

TEST(Bm1684Fp32, BiasFlushesADenormalSum) {
  // 1.5*FLT_MIN - FLT_MIN = FLT_MIN/2, a denormal -> +0.
  Tensor x = t4({1, 1, 1, 1}, {1.5f * FLT_MIN});
  Tensor b = t4({1, 1, 1, 1}, {-FLT_MIN});
  Tensor y(DType::f32, {1, 1, 1, 1});
  bias(x, b, y, bm_elem());
  EXPECT_EQ(y.data<float>()[0], 0.0f);
  bias(x, b, y, ElementwiseParams{});
  EXPECT_EQ(y.data<float>()[0], 0.5f * FLT_MIN);
}

// Both NaN counts as equal: the fast conv's DotChains kernel does not pin
// its operand order yet (test_conv_interleaved.cpp, same_bits).
TEST(Bm1684Fp32, FastConvEqualsReferenceBitForBit) {
  // Random geometries with special values mixed in; seed printed on failure.
  const unsigned seed = 1684;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> val(-2.0f, 2.0f);
  const float specials[] = {kNaN, kInf, -kInf, -0.0f, 0.0f, kDenorm, -kDenorm, 1e30f, -1e30f};
  for (int iter = 0; iter < 24; ++iter) {
    const int64_t N = 1 + rng() % 2, IC = 1 + rng() % 7, OC = 1 + rng() % 5;
    const int64_t KH = 1 + rng() % 3, KW = 1 + rng() % 4, H = KH + rng() % 9, W = KW + rng() % 40;
    Conv2dParams p = bm_conv(KH, KW);
    p.window.stride_h = 1 + rng() % 2;
    p.window.stride_w = 1 + rng() % 3;
    p.window.dilation_h = 1 + rng() % 2;
    p.window.dilation_w = 1 + rng() % 2;
    p.window.pad_top = rng() % 3;
    p.window.pad_bottom = rng() % 3;
    p.window.pad_left = rng() % 3;
    p.window.pad_right = rng() % 3;
    p.has_bias = rng() % 2;
    p.result_add = rng() % 2;
    Tensor x(DType::f32, {N, IC, H, W});
    Tensor w(DType::f32, {OC, IC, KH, KW});
    Tensor b(DType::f32, {OC});
    for (Tensor* t : {&x, &w, &b})
      for (int64_t i = 0; i < t->numel(); ++i)
        t->data<float>()[i] = rng() % 50 == 0 ? specials[rng() % 9] : val(rng);
    Shape ys;
    try {
      ys = conv2d_output_shape(x.shape(), w.shape(), p);
    } catch (const Error&) {
      continue;  // the dilated kernel does not fit
    }
    Tensor y1(DType::f32, ys), y2(DType::f32, ys);
    for (int64_t i = 0; i < y1.numel(); ++i) y1.data<float>()[i] = y2.data<float>()[i] = val(rng);
    ref::conv2d_f32_interleaved(x, w, b, y1, p);
    ASSERT_TRUE(cpu::conv2d_f32(x, w, b, y2, p));
    for (int64_t i = 0; i < y1.numel(); ++i)
      ASSERT_TRUE(test::same_bits_or_both_nan(y1.data<float>()[i], y2.data<float>()[i]))
          << "seed " << seed << " iter " << iter << " element " << i << ": " << y1.data<float>()[i]
          << " vs " << y2.data<float>()[i];
  }
}

}  // namespace
}  // namespace test_fp32_bm1684
}  // namespace npukit
