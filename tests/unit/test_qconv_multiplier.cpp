// QLinearConv's requantization multiplier order per profile: ONNX Runtime's
// (x_scale * w_scale) / y_scale, PyTorch's (w_scale * x_scale) * (1 / y_scale)
// (QLinearConvParams::multiplier). On scales where the two differ by an ulp,
// a 1x1 convolution is aimed at an accumulator the two round apart, and every
// kernel of the list (packed weights too) must give its profile's code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "npukit/kernels.hpp"
#include "npukit/ops/quantized.hpp"
#include "npukit/parallel.hpp"
#include "ops/cpu/qconv_problem.hpp"

namespace npukit {
namespace test_qconv_multiplier {
namespace {

TEST(QConvMultiplier, ProfilesChooseTheirOrder) {
  for (Profile pr : {Profile::onnxruntime, Profile::onnxruntime_avx2, Profile::onnxruntime_vnni}) {
    QLinearConvParams p;
    p.multiplier = MultiplierOrder::times_inverse_y_scale;
    apply_profile(p, pr);
    EXPECT_EQ(p.multiplier, MultiplierOrder::divide_by_y_scale) << profile_name(pr);
  }
  QLinearConvParams p;
  apply_profile(p, Profile::pytorch);
  EXPECT_EQ(p.multiplier, MultiplierOrder::times_inverse_y_scale);
}

// Scales whose two multipliers differ, and an accumulator (|acc| < 2^20, code
// in [0, 255] after y_zp) that the two round to different integers.
struct Flip {
  float x_scale, w_scale, y_scale;
  int32_t acc;
};

bool find_flip(std::mt19937& rng, Flip& f) {
  std::uniform_real_distribution<float> u(-7.0f, -1.0f);
  for (int tries = 0; tries < 100000; ++tries) {
    f.x_scale = std::exp2(u(rng)), f.w_scale = std::exp2(u(rng) - 3.0f);
    f.y_scale = std::exp2(u(rng));
    const float a = requantization_multiplier(MultiplierOrder::divide_by_y_scale, f.x_scale,
                                              f.w_scale, f.y_scale);
    const float b = requantization_multiplier(MultiplierOrder::times_inverse_y_scale, f.x_scale,
                                              f.w_scale, f.y_scale);
    if (a == b) continue;
    for (int32_t acc = 1; acc < (1 << 20); ++acc) {
      const float va = std::nearbyint(static_cast<float>(acc) * a);
      const float vb = std::nearbyint(static_cast<float>(acc) * b);
      if (va != vb && va <= 120.0f && vb <= 120.0f) {
        f.acc = acc;
        return true;
      }
    }
  }
  return false;
}

TEST(QConvMultiplierFast, EveryKernelRoundsWithItsProfilesOrder) {
  const uint32_t seed = 20261127;
  std::mt19937 rng(seed);
  const int saved_threads = num_threads();
  int runs = 0;
  for (int it = 0; it < 40; ++it) {
    Flip f{};
    ASSERT_TRUE(find_flip(rng, f)) << "seed " << seed << " attempt " << it;
    // x: 1 x 16 x 3 x 5 u8 codes 0 except x[0, 0, 0, 0] = 1; w: 16 x 16 x 1 x 1
    // s8 with w[o][0] = 1, zero points 0; bias: acc - 1, so output (0, o, 0, 0)
    // accumulates exactly f.acc and the rest f.acc - 1.
    const int64_t C = 16, H = 3, W = 5;
    const bool nhwc = it % 2 == 1;
    Tensor x(DType::u8, {1, C, H, W}, nhwc ? Layout::nhwc : Layout::nchw);
    Tensor w(DType::s8, {C, C, 1, 1});
    Tensor bias(DType::s32, {C});
    std::memset(x.view().raw(), 0, static_cast<size_t>(x.numel()));
    static_cast<uint8_t*>(x.view().raw())[0] = 1;
    for (int64_t o = 0; o < C; ++o)
      for (int64_t i = 0; i < C; ++i) w.data<int8_t>()[o * C + i] = i == 0 ? 1 : 0;
    for (int64_t o = 0; o < C; ++o) bias.data<int32_t>()[o] = f.acc - 1;
    for (Profile pr : {Profile::onnxruntime_vnni, Profile::pytorch}) {
      QLinearConvParams p;
      p.window.kernel_h = p.window.kernel_w = 1;
      p.x_scale = f.x_scale, p.y_scale = f.y_scale;
      p.w.scale = {f.w_scale};
      p.w.zero_point = {0};
      p.has_bias = true;
      apply_profile(p, pr);
      const float m = requantization_multiplier(p.multiplier, f.x_scale, f.w_scale, f.y_scale);
      const auto want = static_cast<uint8_t>(std::nearbyint(static_cast<float>(f.acc) * m));
      const std::string what = "seed " + std::to_string(seed) + " attempt " + std::to_string(it) +
                               " profile " + profile_name(pr) + (nhwc ? " NHWC" : " NCHW") +
                               " x_scale " + std::to_string(f.x_scale) + " w_scale " +
                               std::to_string(f.w_scale) + " y_scale " + std::to_string(f.y_scale) +
                               " acc " + std::to_string(f.acc);
      Tensor y(DType::u8, {1, C, H, W}, nhwc ? Layout::nhwc : Layout::nchw);
      const auto pk = pack_qlinear_conv_weights(w, p, DType::u8);
      QConvProblem q = qlinear_conv_problem(x, w, bias, y, p);
      for (int packed = 0; packed < 2; ++packed) {
        q.packed = packed ? pk.get() : nullptr;
        for (const auto& v : qconv_kernels().variants) {
          if (!KernelList<QConvProblem>::runnable(v) || v.isa > host_isa()) continue;
          if (v.declines && v.declines(q)) continue;
          set_num_threads(1 + (it + packed) % 3);
          std::memset(y.view().raw(), 0xa5, static_cast<size_t>(y.numel()));
          v.run(q);
          ++runs;
          // y[0, o, 0, 0] of every channel o.
          for (int64_t o = 0; o < C; ++o) {
            const uint8_t got = static_cast<const uint8_t*>(y.view().raw())[o * y.view().stride(1)];
            ASSERT_EQ(got, want) << v.name << (packed ? " packed " : " ") << what << " channel "
                                 << o;
          }
        }
      }
    }
  }
  set_num_threads(saved_threads);
  EXPECT_GE(runs, 40 * 2 * 2 * 2) << "fewer kernel runs than profiles x packings x 2";
}

}  // namespace
}  // namespace test_qconv_multiplier
}  // namespace npukit
