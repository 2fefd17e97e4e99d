// Conv2dCall, the runner's convolution node that checks and chooses its
// kernel once per views: the same bits as conv2d(..., packed) on every call,
// whether the values, the views or the ISA cap change between calls (a new
// cap is a new choice), at 1-3 threads; with weights that may change it
// chooses on every call; a bad call raises conv2d's error, also after good ones.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "npukit/kernels.hpp"
#include "npukit/ops/conv2d.hpp"
#include "npukit/parallel.hpp"
#include "ops/conv2d_call.hpp"
#include "ops/cpu/conv_nchw.hpp"
#include "test_util.hpp"

namespace npukit::test {
namespace test_conv2d_call {
namespace {

struct Case {
  const char* name;
  int64_t c, oc, hw, k, stride, pad, groups;
  bool bias, result_add, residual_first;
  Profile profile;
};

// mobilenet_v2's and resnet18's kinds of layer, and the BM1684's order.
const Case kCases[] = {
    {"pointwise 16->24 @14", 16, 24, 14, 1, 1, 0, 1, true, false, false, Profile::onnxruntime},
    {"pointwise 32->16 @28", 32, 16, 28, 1, 1, 0, 1, false, false, false, Profile::onnxruntime},
    {"depthwise 3x3 s1 @14", 32, 32, 14, 3, 1, 1, 32, true, false, false, Profile::onnxruntime},
    {"depthwise 3x3 s2 @15", 24, 24, 15, 3, 2, 1, 24, true, false, false, Profile::onnxruntime},
    {"3x3 8->16 @9", 8, 16, 9, 3, 1, 1, 1, true, false, false, Profile::onnxruntime},
    {"stem 3->16 s2 @17", 3, 16, 17, 3, 2, 1, 1, true, false, false, Profile::onnxruntime},
    {"residual first 16->16 @7", 16, 16, 7, 3, 1, 1, 1, true, true, true, Profile::onnxruntime},
    {"result_add 8->8 @6", 8, 8, 6, 3, 1, 1, 1, false, true, false, Profile::pytorch},
    {"bm1684 8->12 @6", 8, 12, 6, 3, 1, 1, 1, true, false, false, Profile::bm1684},
};

// About 1 in 8 draws special where `specials` is set.
void fill(const TensorView& t, std::mt19937& rng, bool specials) {
  const float odd[] = {kNaN, kInf, -kInf, -0.0f, 1e-40f};
  test::fill_uniform_or_special(t, rng, specials ? 8 : 0, odd);
}

Conv2dParams params_of(const Case& k) {
  Conv2dParams p;
  p.window.kernel_h = p.window.kernel_w = k.k;
  p.window.stride_h = p.window.stride_w = k.stride;
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = k.pad;
  p.groups = k.groups;
  p.has_bias = k.bias;
  p.result_add = k.result_add;
  apply_profile(p, k.profile);
  p.residual_first = k.residual_first && mlas_nchwc_block(p.accumulation) != 0;
  if (k.profile != Profile::bm1684) p.clip = {-1.5f, 6.0f};
  return p;
}

// Calls `call` and conv2d(..., packed) on the same values (y starting as `old`
// where the layer adds it) and compares the bytes.
::testing::AssertionResult same_as_conv2d(Conv2dCall& call, const TensorView& x, const Tensor& w,
                                          const Tensor& bias, const TensorView& y,
                                          const Tensor& old, const Conv2dParams& p,
                                          const cpu::ConvPackedWeights* packed) {
  Tensor want(DType::f32, y.shape());
  copy(old, want.view());
  copy(old, y);
  conv2d(x, w, bias, want, p, packed);
  call(x, w, bias, y);
  Tensor got(DType::f32, y.shape());
  copy(y, got.view());
  return same_bits(got, want.to_vector<float>());
}

TEST(Conv2dCall, SameBitsAsConv2dWhenValuesViewsAndCapChange) {
  const uint32_t seed = 20261628;
  std::mt19937 rng(seed);
  const Isa cap0 = max_isa();
  for (const Case& k : kCases) {
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      const std::string where = std::string(k.name) + ", threads " + std::to_string(threads) +
                                ", seed " + std::to_string(seed);
      const Conv2dParams p = params_of(k);
      Tensor x(DType::f32, {2, k.c, k.hw, k.hw}), x2(DType::f32, {2, k.c, k.hw, k.hw});
      Tensor w(DType::f32, {k.oc, k.c / k.groups, k.k, k.k}), bias(DType::f32, {k.oc});
      fill(w, rng, false);
      fill(bias, rng, false);
      const Shape ys = conv2d_output_shape(x.shape(), w.shape(), p);
      Tensor y(DType::f32, ys), y2(DType::f32, ys), old(DType::f32, ys);
      const auto packed = conv2d_pack_weights(w, p, ys[2], ys[3]);
      Conv2dCall call(p, packed, true);
      EXPECT_EQ(call.kept_kernel(), nullptr) << where;
      for (int round = 0; round < 6; ++round) {
        fill(x, rng, round % 2 == 1);
        fill(x2, rng, round % 3 == 2);
        fill(old, rng, false);
        // Rounds 0-1: the same views; 2: another x; 3: another y; 4: both back; 5: capped.
        if (round == 5) set_max_isa(Isa::portable);
        const TensorView& xv = round == 2 ? x2.view() : x.view();
        const TensorView& yv = round == 3 ? y2.view() : y.view();
        EXPECT_TRUE(same_as_conv2d(call, xv, w, bias, yv, old, p, packed.get()))
            << where << ", round " << round;
        ASSERT_NE(call.kept_kernel(), nullptr) << where;
        // The kept kernel is one the cap allows: a new cap makes a new choice.
        const std::string kept = call.kept_kernel();
        if (round == 5) {
          EXPECT_TRUE(kept.find("avx") == std::string::npos) << where << ": " << kept;
          set_max_isa(cap0);
        }
      }
    }
  }
  set_num_threads(0);
}

// Weights that may change between calls (not an initializer): a non-finite
// weight on a padded tap makes the fast kernels decline, so the choice is
// made on every call, not kept.
TEST(Conv2dCall, ChangingWeightsAreChosenForOnEveryCall) {
  const uint32_t seed = 20261629;
  std::mt19937 rng(seed);
  for (const Case& k : kCases) {
    const Conv2dParams p = params_of(k);
    Tensor x(DType::f32, {1, k.c, k.hw, k.hw});
    Tensor w(DType::f32, {k.oc, k.c / k.groups, k.k, k.k}), bias(DType::f32, {k.oc});
    const Shape ys = conv2d_output_shape(x.shape(), w.shape(), p);
    Tensor y(DType::f32, ys), old(DType::f32, ys);
    Conv2dCall call(p, nullptr, false);
    for (int round = 0; round < 3; ++round) {
      fill(x, rng, false);
      fill(w, rng, false);
      fill(bias, rng, false);
      fill(old, rng, false);
      if (round == 1) w.view().data<float>()[0] = kInf;  // (0, 0, 0, 0): a padded tap at pad 1
      EXPECT_TRUE(same_as_conv2d(call, x, w, bias, y, old, p, nullptr))
          << k.name << ", round " << round << ", seed " << seed;
      EXPECT_EQ(call.kept_kernel(), nullptr) << k.name;
    }
  }
}

TEST(Conv2dCall, BadCallsRaiseConv2dsErrorsAlsoAfterGoodOnes) {
  const Case& k = kCases[0];
  const Conv2dParams p = params_of(k);
  Tensor x(DType::f32, {1, k.c, k.hw, k.hw}), w(DType::f32, {k.oc, k.c, 1, 1});
  Tensor bias(DType::f32, {k.oc}), y(DType::f32, {1, k.oc, k.hw, k.hw});
  Tensor wrong_y(DType::f32, {1, k.oc, k.hw, k.hw + 1}), short_bias(DType::f32, {k.oc - 1});
  Conv2dCall call(p, conv2d_pack_weights(w, p, k.hw, k.hw), true);
  EXPECT_TRUE(raises([&] { call(x, w, bias, wrong_y); }, "npukit::conv2d", "y", "shape"));
  EXPECT_EQ(call.kept_kernel(), nullptr);
  call(x, w, bias, y);
  EXPECT_NE(call.kept_kernel(), nullptr);
  EXPECT_TRUE(raises([&] { call(x, w, bias, wrong_y); }, "npukit::conv2d", "y", "shape"));
  EXPECT_TRUE(raises([&] { call(x, w, short_bias, y); }, "npukit::conv2d", "bias", "shape"));
  EXPECT_EQ(call.kept_kernel(), nullptr);
}

}  // namespace
}  // namespace test_conv2d_call
}  // namespace npukit::test
