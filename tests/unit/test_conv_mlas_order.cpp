// Fp32Accumulation::mlas_nchwc16/8, ONNX Runtime 1.30's fp32 convolution
// order on x86 (MLAS): the reference against chains written out by hand on
// tiny cases, the profiles that choose it, the errors, and every fast conv2d
// variant this host runs against the reference bit for bit (a NaN equals any
// NaN) on seeded random problems whose channel counts reach every kind of
// chain (per input channel, NCHWc blocks, 128-channel pointwise batches,
// 128-step SGEMM runs), with special values, 1-3 threads, the ISA caps and
// Impl::reference. A mismatch prints the seed and the case.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "npukit/npukit.hpp"
#include "ops/cpu/conv_nchw.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_conv_mlas_order {
namespace {

using A = Fp32Accumulation;

// Values of very different sizes, so that the order of the sums shows.
float spread(std::mt19937& rng) {
  const float m = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
  return std::ldexp(m, static_cast<int>(rng() % 24) - 12);
}

// One output (1x1 output plane, no padding) of a conv whose input is exactly
// the window: x (1, IC, KH, KW), w (1, IC, KH, KW), bias b.
struct Tiny {
  int64_t ic, kh, kw;
  std::vector<float> x, w;
  float b;
  float at(const std::vector<float>& v, int64_t c, int64_t h, int64_t ww) const {
    return v[static_cast<size_t>((c * kh + h) * kw + ww)];
  }
  float fma_tap(float acc, int64_t c, int64_t h, int64_t ww) const {
    return std::fma(at(x, c, h, ww), at(w, c, h, ww), acc);
  }
  float reference(A a) const {
    Tensor xt = Tensor::from<float>({1, ic, kh, kw}, x),
           wt = Tensor::from<float>({1, ic, kh, kw}, w);
    Tensor bt = Tensor::from<float>({1}, {b}), y(DType::f32, {1, 1, 1, 1});
    Conv2dParams p;
    p.window.kernel_h = kh;
    p.window.kernel_w = kw;
    p.has_bias = true;
    p.accumulation = a;
    if (a == A::sequential)
      ref::conv2d_f32(xt, wt, bt, y, p);
    else
      ref::conv2d_f32_mlas(xt, wt, bt, y, p);
    return y.data<float>()[0];
  }
};

Tiny tiny(int64_t ic, int64_t kh, int64_t kw, std::mt19937& rng) {
  Tiny t{ic, kh, kw, {}, {}, spread(rng)};
  for (int64_t i = 0; i < ic * kh * kw; ++i) {
    t.x.push_back(spread(rng));
    t.w.push_back(spread(rng));
  }
  return t;
}

// The chains of MLAS's kernels written out for each kind of layer; the
// sequential order must give other bits on some case (the test can fail).
TEST(ConvMlasOrder, ReferenceFollowsHandWrittenChains) {
  const unsigned seed = 20261140;
  std::mt19937 rng(seed);
  int differs_from_sequential = 0;
  for (int round = 0; round < 20; ++round) {
    // NCHWc 3x3 over 32 channels, B = 16: chains over (kh, kw, ic) per block.
    {
      const Tiny t = tiny(32, 3, 3, rng);
      float sum = 0.0f;
      for (int64_t b0 = 0; b0 < 32; b0 += 16) {
        float acc = 0.0f;
        for (int64_t h = 0; h < 3; ++h)
          for (int64_t ww = 0; ww < 3; ++ww)
            for (int64_t c = b0; c < b0 + 16; ++c) acc = t.fma_tap(acc, c, h, ww);
        sum = b0 == 0 ? acc : acc + sum;
      }
      const float want = sum + t.b;
      EXPECT_TRUE(test::same_bits_or_both_nan(t.reference(A::mlas_nchwc16), want))
          << "seed " << seed << " 3x3x32/16";
      differs_from_sequential += !test::same_bits_or_both_nan(t.reference(A::sequential), want);
      // B = 8: four blocks.
      sum = 0.0f;
      for (int64_t b0 = 0; b0 < 32; b0 += 8) {
        float acc = 0.0f;
        for (int64_t h = 0; h < 3; ++h)
          for (int64_t ww = 0; ww < 3; ++ww)
            for (int64_t c = b0; c < b0 + 8; ++c) acc = t.fma_tap(acc, c, h, ww);
        sum = b0 == 0 ? acc : acc + sum;
      }
      EXPECT_TRUE(test::same_bits_or_both_nan(t.reference(A::mlas_nchwc8), sum + t.b))
          << "seed " << seed << " 3x3x32/8";
    }
    // Stem: 3 input channels (< B): a chain per channel over (kh, kw).
    {
      const Tiny t = tiny(3, 7, 7, rng);
      float sum = 0.0f;
      for (int64_t c = 0; c < 3; ++c) {
        float acc = 0.0f;
        for (int64_t h = 0; h < 7; ++h)
          for (int64_t ww = 0; ww < 7; ++ww) acc = t.fma_tap(acc, c, h, ww);
        sum = c == 0 ? acc : acc + sum;
      }
      EXPECT_TRUE(test::same_bits_or_both_nan(t.reference(A::mlas_nchwc16), sum + t.b))
          << "seed " << seed << " stem";
      differs_from_sequential +=
          !test::same_bits_or_both_nan(t.reference(A::sequential), sum + t.b);
    }
    // Pointwise over 200 channels: batches of 128 channels.
    {
      const Tiny t = tiny(200, 1, 1, rng);
      float first = 0.0f, second = 0.0f;
      for (int64_t c = 0; c < 128; ++c) first = t.fma_tap(first, c, 0, 0);
      for (int64_t c = 128; c < 200; ++c) second = t.fma_tap(second, c, 0, 0);
      EXPECT_TRUE(test::same_bits_or_both_nan(t.reference(A::mlas_nchwc16), (second + first) + t.b))
          << "seed " << seed << " pointwise 200";
    }
    // 24 channels, 3x3 (24 % 16 != 0: im2col + SGEMM): runs of 128 steps in
    // (ic, kh, kw) order; 216 steps = 128 + 88.
    {
      const Tiny t = tiny(24, 3, 3, rng);
      float run[2] = {0.0f, 0.0f};
      int64_t s = 0;
      for (int64_t c = 0; c < 24; ++c)
        for (int64_t h = 0; h < 3; ++h)
          for (int64_t ww = 0; ww < 3; ++ww, ++s) run[s / 128] = t.fma_tap(run[s / 128], c, h, ww);
      EXPECT_TRUE(
          test::same_bits_or_both_nan(t.reference(A::mlas_nchwc16), (run[1] + run[0]) + t.b))
          << "seed " << seed << " sgemm 24x3x3";
      // At B = 8, 24 channels are three NCHWc blocks.
      float sum = 0.0f;
      for (int64_t b0 = 0; b0 < 24; b0 += 8) {
        float acc = 0.0f;
        for (int64_t h = 0; h < 3; ++h)
          for (int64_t ww = 0; ww < 3; ++ww)
            for (int64_t c = b0; c < b0 + 8; ++c) acc = t.fma_tap(acc, c, h, ww);
        sum = b0 == 0 ? acc : acc + sum;
      }
      EXPECT_TRUE(test::same_bits_or_both_nan(t.reference(A::mlas_nchwc8), sum + t.b))
          << "seed " << seed << " 24/8";
    }
  }
  EXPECT_GT(differs_from_sequential, 10) << "the orders should differ on most of these cases";
}

// residual_first (ONNX Runtime's Conv with a fused Add): the old output is
// the total the chains are added to, then the bias; result_add alone adds it
// last. Values of spread sizes, so the two orders differ on some cases.
TEST(ConvMlasOrder, ResidualFirstStartsTheChainsTotal) {
  const unsigned seed = 20261142;
  std::mt19937 rng(seed);
  int orders_differ = 0;
  for (int round = 0; round < 40; ++round) {
    const Tiny t = tiny(32, 3, 3, rng);
    const float old = spread(rng);
    float chain[2] = {0.0f, 0.0f};
    for (int64_t b0 = 0; b0 < 32; b0 += 16)
      for (int64_t h = 0; h < 3; ++h)
        for (int64_t ww = 0; ww < 3; ++ww)
          for (int64_t c = b0; c < b0 + 16; ++c)
            chain[b0 / 16] = t.fma_tap(chain[b0 / 16], c, h, ww);
    const float first = ((old + chain[0]) + chain[1]) + t.b;
    const float last = old + ((chain[1] + chain[0]) + t.b);
    Tensor xt = Tensor::from<float>({1, 32, 3, 3}, t.x),
           wt = Tensor::from<float>({1, 32, 3, 3}, t.w);
    Tensor bt = Tensor::from<float>({1}, {t.b});
    Conv2dParams p;
    p.window.kernel_h = p.window.kernel_w = 3;
    p.has_bias = p.result_add = true;
    p.accumulation = A::mlas_nchwc16;
    for (const bool residual_first : {true, false}) {
      p.residual_first = residual_first;
      Tensor y = Tensor::from<float>({1, 1, 1, 1}, {old});
      ref::conv2d_f32_mlas(xt, wt, bt, y, p);
      EXPECT_TRUE(test::same_bits_or_both_nan(y.data<float>()[0], residual_first ? first : last))
          << "seed " << seed << " round " << round << " residual_first " << residual_first;
      Tensor fast = Tensor::from<float>({1, 1, 1, 1}, {old});
      conv2d(xt, wt, bt, fast, p);
      EXPECT_TRUE(test::same_bits_or_both_nan(fast.data<float>()[0], y.data<float>()[0]))
          << "seed " << seed << " round " << round << " conv2d, residual_first " << residual_first;
    }
    orders_differ += !test::same_bits_or_both_nan(first, last);
  }
  EXPECT_GT(orders_differ, 5) << "the two orders should differ on some of these cases";
}

// Depthwise and padded taps: one FMA chain from +0; a padded tap adds
// fma(+0, w, acc) for a finite w and is skipped for a non-finite one.
TEST(ConvMlasOrder, DepthwiseChainAndPaddedTaps) {
  // A 3x3 depthwise on a 1x1 input with padding 1: only the centre tap is real.
  Tensor x = Tensor::from<float>({1, 1, 1, 1}, {2.0f});
  Tensor w = Tensor::from<float>({1, 1, 3, 3}, {1, 2, 3, 4, 0.5f, 6, 7, 8, 9});
  Tensor y(DType::f32, {1, 1, 1, 1});
  Depthwise2dParams p;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
  p.accumulation = A::mlas_nchwc16;
  depthwise2d(x, w, TensorView(), y, p);
  EXPECT_EQ(y.data<float>()[0], 1.0f);
  // An infinite weight on a padded tap is skipped (ORT reads no padding).
  w.data<float>()[0] = test::kInf;
  for (Impl i : {Impl::reference, Impl::fast}) {
    test::SettingsRestore restore;
    set_impl(i);
    depthwise2d(x, w, TensorView(), y, p);
    EXPECT_EQ(y.data<float>()[0], 1.0f) << (i == Impl::reference ? "reference" : "fast");
  }
  // A product that underflows: fma(x, w, +0) keeps the sign of the exact
  // result (-2^-160 rounds to -0), where a rounded product then + 0 gives +0.
  Tensor tiny_x = Tensor::from<float>({1, 1, 1, 1}, {-0x1p-80f});
  Tensor tiny_w = Tensor::from<float>({1, 1, 1, 1}, {0x1p-80f});
  Depthwise2dParams one;
  one.accumulation = A::mlas_nchwc16;
  depthwise2d(tiny_x, tiny_w, TensorView(), y, one);
  EXPECT_TRUE(test::same_bits_or_both_nan(y.data<float>()[0], -0.0f))
      << std::bit_cast<uint32_t>(y.data<float>()[0]);
  one.accumulation = A::sequential;
  depthwise2d(tiny_x, tiny_w, TensorView(), y, one);
  EXPECT_TRUE(test::same_bits_or_both_nan(y.data<float>()[0], 0.0f))
      << std::bit_cast<uint32_t>(y.data<float>()[0]);
}

TEST(ConvMlasOrder, ProfilesChooseTheOrder) {
  Conv2dParams c;
  apply_profile(c, Profile::pytorch);
  EXPECT_EQ(c.accumulation, A::sequential);
  apply_profile(c, Profile::onnxruntime_avx2);
  EXPECT_EQ(c.accumulation, A::mlas_nchwc8);
  apply_profile(c, Profile::onnxruntime);
  const CpuFeatures f = host_cpu_features();
  EXPECT_EQ(c.accumulation, f.avx512f ? A::mlas_nchwc16
                            : f.avx2  ? A::mlas_nchwc8
                                      : A::sequential)
      << cpu_features_text(f);
  apply_profile(c, Profile::bm1684);
  EXPECT_EQ(c.accumulation, A::interleaved);
  Depthwise2dParams d;
  apply_profile(d, Profile::onnxruntime_avx2);
  EXPECT_EQ(d.accumulation, A::mlas_nchwc8);
  EXPECT_STREQ(fp32_accumulation_name(A::mlas_nchwc16), "mlas_nchwc16");
  EXPECT_STREQ(fp32_accumulation_name(A::mlas_nchwc8), "mlas_nchwc8");
  // Matmul keeps its own orders.
  MatmulParams m;
  apply_profile(m, Profile::onnxruntime);
  EXPECT_EQ(m.accumulation, A::sequential);
}

TEST(ConvMlasOrder, BadCombinationsAreRefused) {
  Tensor x(DType::f32, {1, 2, 3, 3}), w(DType::f32, {2, 2, 1, 1}), y(DType::f32, {1, 2, 3, 3});
  Conv2dParams p;
  p.accumulation = A::mlas_nchwc16;
  p.flush_denormals = true;
  try {
    conv2d(x, w, TensorView(), y, p);
    ADD_FAILURE() << "flushing accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("npukit::conv2d"), std::string::npos) << m;
    EXPECT_NE(m.find("flush_denormals"), std::string::npos) << m;
    EXPECT_NE(m.find("mlas_nchwc16"), std::string::npos) << m;
  }
  // residual_first orders MLAS's chains: not with another accumulation.
  p.flush_denormals = false;
  p.result_add = p.residual_first = true;
  p.accumulation = A::sequential;
  try {
    conv2d(x, w, TensorView(), y, p);
    ADD_FAILURE() << "residual_first accepted with the sequential accumulation";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("npukit::conv2d"), std::string::npos) << m;
    EXPECT_NE(m.find("residual_first"), std::string::npos) << m;
    EXPECT_NE(m.find("sequential"), std::string::npos) << m;
  }
  Tensor a(DType::f32, {2, 3}), b(DType::f32, {3, 4}), c(DType::f32, {2, 4});
  MatmulParams mp;
  mp.accumulation = A::mlas_nchwc8;
  try {
    matmul(a, b, TensorView(), c, mp);
    ADD_FAILURE() << "matmul accepted mlas_nchwc8";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("npukit::matmul"), std::string::npos) << m;
    EXPECT_NE(m.find("accumulation"), std::string::npos) << m;
  }
}

constexpr float kSpecials[] = {test::kNaN, test::kInf, -test::kInf, 0.0f,     -0.0f,    1e-40f,
                               -3e-39f,    1e30f,      -1e30f,      0x1p-80f, -0x1p-75f};

float value(std::mt19937& rng, int rare) {
  return test::uniform_or_special(rng, rare, kSpecials);
}

void reference(const cpu::ConvProblem& p) {
  ref::conv2d_f32_mlas(p.x, p.w, p.bias, p.y, p.params);
  ref::clip_f32(p.y, p.y, p.params.clip);
}

std::string text(const cpu::ConvProblem& p, const std::string& kernel, int threads) {
  std::ostringstream s;
  const Conv2dParams& c = p.params;
  const Window2d& w = c.window;
  s << kernel << ": x " << shape_text(p.x.shape()) << " w " << shape_text(p.w.shape()) << " groups "
    << c.groups << " stride " << w.stride_h << "x" << w.stride_w << " dilation " << w.dilation_h
    << "x" << w.dilation_w << " ins " << w.ins_h << "x" << w.ins_w << " pads " << w.pad_top << ","
    << w.pad_bottom << "," << w.pad_left << "," << w.pad_right << " bias " << c.has_bias
    << " result_add " << c.result_add << " residual_first " << c.residual_first << " accumulation "
    << fp32_accumulation_name(c.accumulation) << " " << test::clip_text(c.clip) << " threads "
    << threads;
  return s.str();
}

// Every runnable variant of the conv2d family (the mlas orders go to the
// positions-in-lanes kernels; the others decline) against the reference, and
// the public entry at every ISA cap and with Impl::reference.
TEST(ConvMlasOrder, EveryVariantEqualsReferenceBitForBit) {
  test::SettingsRestore restore;
  const unsigned seed = 20261141;
  std::mt19937 rng(seed);
  const auto& list = cpu::conv_nchw_kernels();
  std::map<std::string, int64_t> runs;
  int64_t outputs = 0;
  // Channels per group: below B, B multiples (NCHWc), 24 (SGEMM at B = 16),
  // 136 and 144 (a 128-channel batch and a rest at K = 1; 128+ SGEMM steps).
  const int64_t channel_choices[] = {1, 3, 5, 8, 16, 24, 32, 48, 136, 144};
  for (int iter = 0; iter < 160; ++iter) {
    Conv2dParams p;
    p.accumulation = iter % 2 == 0 ? A::mlas_nchwc16 : A::mlas_nchwc8;
    Window2d& w = p.window;
    const bool pointwise = iter % 3 == 0;
    w.kernel_h = pointwise ? 1 : 1 + rng() % 3;
    w.kernel_w = pointwise ? 1 : 1 + rng() % 3;
    w.stride_h = 1 + rng() % 2;
    w.stride_w = 1 + rng() % 3;
    w.dilation_h = 1 + rng() % 2;
    w.dilation_w = 1 + rng() % 2;
    w.ins_h = rng() % 6 == 0 ? 1 : 0;
    w.ins_w = rng() % 6 == 0 ? 1 : 0;
    w.pad_top = rng() % 4 == 0 ? rng() % 5 : rng() % 2;
    w.pad_bottom = rng() % 2;
    w.pad_left = rng() % 4 == 0 ? rng() % 5 : rng() % 2;
    w.pad_right = rng() % 2;
    p.groups = rng() % 4 == 0 ? 2 : 1;
    p.has_bias = rng() % 3 != 0;
    p.result_add = rng() % 4 == 0;
    p.residual_first = p.result_add && rng() % 2;
    p.clip = test::fused_clip_case(static_cast<uint32_t>(iter));
    const int64_t ICG = channel_choices[rng() % 10];
    const int64_t OCG = p.groups > 1 && rng() % 2 ? 16 : 1 + int64_t(rng() % 13);
    const int64_t W = iter % 9 == 0 ? 1 : 1 + rng() % 20;
    const Shape xs{int64_t(1 + rng() % 2), p.groups * ICG, int64_t(1 + rng() % 9), W};
    const Shape ws{p.groups * OCG, ICG, w.kernel_h, w.kernel_w};
    Shape ys;
    try {
      ys = conv2d_output_shape(xs, ws, p);
    } catch (const Error&) {
      continue;
    }
    const int rare = iter % 3 == 0 ? 0 : 30;
    Tensor x(DType::f32, xs), wt(DType::f32, ws), b(DType::f32, {ws[0]}), y0(DType::f32, ys);
    for (Tensor* t : {&x, &wt, &b, &y0})
      for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, rare);
    Tensor want = y0;
    cpu::ConvProblem prob{x, wt, b, want, p};
    reference(prob);
    auto compare = [&](const Tensor& got, const std::string& who, int threads) {
      int64_t bad = 0, first = 0;
      for (int64_t i = 0; i < got.numel(); ++i)
        if (!test::same_bits_or_both_nan(got.data<float>()[i], want.data<float>()[i]) && bad++ == 0)
          first = i;
      EXPECT_EQ(bad, 0) << "seed " << seed << " iter " << iter << " " << text(prob, who, threads)
                        << "; first mismatch at element " << first << ": "
                        << got.data<float>()[first] << " vs " << want.data<float>()[first];
      outputs += got.numel();
      return bad == 0;
    };
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v) || v.declines(prob) != nullptr) continue;
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        Tensor got = y0;
        cpu::ConvProblem q = prob;
        q.y = got;
        v.run(q);
        if (!compare(got, v.name, threads)) return;
        ++runs[v.name];
      }
    }
    // The public entry (the family's choice) at each ISA cap and forced to the reference.
    for (int cap = 0; cap < 4; ++cap) {
      const Isa isa = cap == 0 ? Isa::portable : cap == 1 ? Isa::avx2 : Isa::avx512;
      if (cap < 3 && isa > host_isa()) continue;
      set_impl(cap == 3 ? Impl::reference : Impl::fast);
      set_max_isa(cap == 3 ? host_isa() : isa);
      set_num_threads(1 + iter % 3);
      Tensor got = y0;
      conv2d(x, wt, b, got, p);
      if (!compare(got, cap == 3 ? "conv2d (reference)" : std::string("conv2d at ") + isa_name(isa),
                   1 + iter % 3))
        return;
    }
    set_impl(Impl::fast);
    set_max_isa(host_isa());
  }
  std::printf("conv2d mlas orders: seed %u, %lld outputs compared\n", seed,
              static_cast<long long>(outputs));
  for (const auto& [name, n] : runs) std::printf("  %s: %lld runs\n", name.c_str(), (long long)n);
  for (const char* name : {"f32-conv-nchw-avx512", "f32-conv-nchw-avx2"})
    for (const auto& v : list.variants)
      if (v.name == std::string(name) && list.runnable(v)) {
        EXPECT_GT(runs[name], 200) << name;
      }
}

}  // namespace
}  // namespace test_conv_mlas_order
}  // namespace npukit
