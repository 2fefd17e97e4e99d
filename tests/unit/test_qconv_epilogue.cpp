// The integer convolution's load-time requantization data (QConvEpilogue):
// it is used only for the parameters it was built from (each key field
// changed alone is a mismatch), and one pack shared by two threads calling
// at once gives the reference's bytes on both.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include "npukit/ops/quantized.hpp"
#include "npukit/parallel.hpp"
#include "ops/cpu/qconv_problem.hpp"

namespace npukit {
namespace test_qconv_epilogue {
namespace {

struct Layer {
  Tensor x, w, bias;
  QLinearConvParams p;
};

// A 3x3 pad-1 u8 x s8 convolution with per-channel scales and zero points.
Layer make_layer(std::mt19937& rng, int64_t n, int64_t ic, int64_t oc, int64_t hw) {
  Layer l;
  l.x = Tensor(DType::u8, {n, ic, hw, hw});
  l.w = Tensor(DType::s8, {oc, ic, 3, 3});
  std::uniform_int_distribution<int> code(0, 255);
  for (Tensor* t : {&l.x, &l.w}) {
    auto* b = static_cast<uint8_t*>(t->view().raw());
    for (int64_t i = 0; i < t->numel(); ++i) b[i] = static_cast<uint8_t>(code(rng));
  }
  l.p.window.kernel_h = l.p.window.kernel_w = 3;
  l.p.window.pad_top = l.p.window.pad_bottom = l.p.window.pad_left = l.p.window.pad_right = 1;
  l.p.x_scale = 0.02f, l.p.x_zero_point = 17;
  l.p.y_scale = 0.9f, l.p.y_zero_point = 120;
  std::uniform_real_distribution<float> s(0.01f, 0.05f);
  std::uniform_int_distribution<int> zp(-128, 127), b(-20000, 20000);
  l.bias = Tensor(DType::s32, {oc});
  l.p.w.scale.clear(), l.p.w.zero_point.clear();
  for (int64_t o = 0; o < oc; ++o) {
    l.p.w.scale.push_back(s(rng));
    l.p.w.zero_point.push_back(o == 0 ? -128 : o == 1 ? 127 : zp(rng));  // extremes
    l.bias.data<int32_t>()[o] = b(rng);
  }
  l.p.has_bias = true;
  return l;
}

std::vector<uint8_t> bytes(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.view().raw());
  return {p, p + t.numel()};
}

TEST(QConvEpilogue, UsedOnlyForTheParametersItWasBuiltFrom) {
  const uint32_t seed = 4242;
  std::mt19937 rng(seed);
  Layer l = make_layer(rng, 1, 5, 11, 6);
  Tensor y(DType::u8, qlinear_conv_output_shape(l.x.shape(), l.w.shape(), l.p));
  const auto pk = pack_qlinear_conv_weights(l.w, l.bias, l.p, DType::u8);
  ASSERT_TRUE(pk->epilogue);
  const QConvProblem base = qlinear_conv_problem(l.x, l.w, l.bias, y, l.p);
  EXPECT_TRUE(qconv_epilogue_matches(*pk->epilogue, base));
  // Each key field changed alone.
  Tensor bias2 = Tensor(DType::s32, {11});
  std::memcpy(bias2.view().raw(), l.bias.view().raw(), 11 * sizeof(int32_t));
  bias2.data<int32_t>()[10] += 1;
  const std::vector<std::pair<const char*, std::function<void(QLinearConvParams&)>>> changes = {
      {"x_scale", [](QLinearConvParams& p) { p.x_scale = std::nextafter(p.x_scale, 1.0f); }},
      {"y_scale", [](QLinearConvParams& p) { p.y_scale = std::nextafter(p.y_scale, 0.0f); }},
      {"x_zero_point", [](QLinearConvParams& p) { p.x_zero_point += 1; }},
      {"w scale", [](QLinearConvParams& p) { p.w.scale[10] *= 2.0f; }},
      {"w zero point", [](QLinearConvParams& p) { p.w.zero_point[3] ^= 1; }},
      {"multiplier order",
       [](QLinearConvParams& p) { p.multiplier = MultiplierOrder::times_inverse_y_scale; }},
  };
  for (const auto& [what, change] : changes) {
    QLinearConvParams p = l.p;
    change(p);
    EXPECT_FALSE(
        qconv_epilogue_matches(*pk->epilogue, qlinear_conv_problem(l.x, l.w, l.bias, y, p)))
        << "seed " << seed << ": changed " << what;
  }
  EXPECT_FALSE(qconv_epilogue_matches(*pk->epilogue, qlinear_conv_problem(l.x, l.w, bias2, y, l.p)))
      << "changed bias";
  QLinearConvParams no_bias = l.p;
  no_bias.has_bias = false;
  EXPECT_FALSE(qconv_epilogue_matches(*pk->epilogue,
                                      qlinear_conv_problem(l.x, l.w, TensorView(), y, no_bias)))
      << "dropped bias";
  // Ill-formed load-time parameters build no epilogue (the call still checks them).
  QLinearConvParams bad = l.p;
  bad.w.scale.pop_back();
  EXPECT_FALSE(pack_qlinear_conv_weights(l.w, l.bias, bad, DType::u8)->epilogue);
  EXPECT_FALSE(pack_qlinear_conv_weights(l.w, TensorView(), l.p, DType::u8)->epilogue);
}

TEST(QConvEpilogue, OnePackRunFromTwoThreadsAtOnce) {
  const uint32_t seed = 77;
  std::mt19937 rng(seed);
  const int saved = num_threads();
  // 14x14 and 7x7 layers as in mobilenet_v2, batch 2.
  for (const int64_t hw : {14, 7}) {
    Layer l = make_layer(rng, 2, 24, 40, hw);
    const Shape out = qlinear_conv_output_shape(l.x.shape(), l.w.shape(), l.p);
    Tensor want(DType::u8, out);
    qconv_reference(qlinear_conv_problem(l.x, l.w, l.bias, want, l.p));
    const auto pk = pack_qlinear_conv_weights(l.w, l.bias, l.p, DType::u8);
    for (const int threads : {1, 2, 3}) {
      set_num_threads(threads);
      Tensor y1(DType::u8, out), y2(DType::u8, out);
      int bad1 = 0, bad2 = 0;
      auto run = [&](Tensor& y, int& bad) {
        for (int i = 0; i < 20; ++i) {
          std::memset(y.view().raw(), 0x5a, static_cast<size_t>(y.numel()));
          qlinear_conv(l.x, l.w, l.bias, y, l.p, pk.get());
          bad += bytes(y) != bytes(want);
        }
      };
      std::thread t1(run, std::ref(y1), std::ref(bad1)), t2(run, std::ref(y2), std::ref(bad2));
      t1.join(), t2.join();
      EXPECT_EQ(bad1 + bad2, 0) << "seed " << seed << " " << hw << "x" << hw << " threads "
                                << threads << ": runs differing from the reference";
    }
  }
  set_num_threads(saved);
}

}  // namespace
}  // namespace test_qconv_epilogue
}  // namespace npukit
