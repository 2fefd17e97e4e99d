// The ONNX float math operators: unary (activations, math functions),
// Sub/Div/Pow/Min/Max with broadcasting, reductions and LayerNormalization.
// Hand-computed values, every fast unary kernel against the reference on
// random data with special values (seed printed), and the errors of bad input.
#include <bit>
#include <map>

#include "ops/cpu/unary_kernels.hpp"
#include "test_util.hpp"

namespace npukit::test {
namespace test_onnx_math_ops {
namespace {

constexpr uint32_t kSeed = 20261126;

float unary1(UnaryOp op, float x, UnaryParams p = {}) {
  Tensor t = Tensor::from<float>({1}, {x});
  Tensor y(DType::f32, {1});
  unary(op, t, y, p);
  return y.data<float>()[0];
}

uint32_t bits(float f) {
  return std::bit_cast<uint32_t>(f);
}

TEST(OnnxMathUnary, HandValues) {
  EXPECT_EQ(unary1(UnaryOp::sigmoid, 0.0f), 0.5f);
  EXPECT_EQ(unary1(UnaryOp::sigmoid, -kInf), 0.0f);  // clamped to -18: p/q + 0.5 < 0, then 0
  EXPECT_TRUE(std::isnan(unary1(UnaryOp::sigmoid, kNaN)));
  EXPECT_NEAR(unary1(UnaryOp::sigmoid, 1.0f), 0.7310586f, 2e-7f);
  EXPECT_EQ(unary1(UnaryOp::tanh, -10.0f), -1.0f);  // ONNX Runtime 1.30 gives exactly -1
  EXPECT_NEAR(unary1(UnaryOp::tanh, 0.5f), 0.46211716f, 2e-7f);
  EXPECT_EQ(bits(unary1(UnaryOp::erf, -0.0f)), bits(-0.0f));
  EXPECT_EQ(unary1(UnaryOp::erf, 5.0f), 1.0f);  // ONNX Runtime 1.30 gives exactly 1
  EXPECT_TRUE(std::isnan(unary1(UnaryOp::erf, kNaN)));
  EXPECT_NEAR(unary1(UnaryOp::erf, 0.5f), 0.52049988f, 2e-7f);
  EXPECT_NEAR(unary1(UnaryOp::gelu, 1.0f), 0.84134475f, 3e-7f);
  EXPECT_NEAR(unary1(UnaryOp::gelu_tanh, 1.0f), 0.84119199f, 3e-7f);
  EXPECT_EQ(unary1(UnaryOp::hard_sigmoid, 1.0f, {0.2f, 0.5f}), 0.2f * 1.0f + 0.5f);
  EXPECT_EQ(unary1(UnaryOp::hard_sigmoid, 10.0f, {0.2f, 0.5f}), 1.0f);
  EXPECT_EQ(unary1(UnaryOp::hard_sigmoid, -10.0f, {0.2f, 0.5f}), 0.0f);
  EXPECT_TRUE(std::isnan(unary1(UnaryOp::hard_sigmoid, kNaN, {0.2f, 0.5f})));
  EXPECT_EQ(unary1(UnaryOp::hard_swish, 3.0f), 3.0f);
  EXPECT_EQ(bits(unary1(UnaryOp::hard_swish, -3.0f)), bits(-0.0f));  // -3 * 0
  EXPECT_EQ(unary1(UnaryOp::hard_swish, 1.0f), 1.0f * (1.0f * (1.0f / 6.0f) + 0.5f));
  EXPECT_EQ(unary1(UnaryOp::leaky_relu, -2.0f, {0.1f, 0.0f}), 0.1f * -2.0f);
  EXPECT_EQ(bits(unary1(UnaryOp::leaky_relu, -0.0f, {0.1f, 0.0f})), bits(-0.0f));
  EXPECT_EQ(unary1(UnaryOp::sqrt, 2.0f), std::sqrt(2.0f));
  EXPECT_EQ(bits(unary1(UnaryOp::neg, 0.0f)), bits(-0.0f));
  EXPECT_EQ(unary1(UnaryOp::abs, -kInf), kInf);
  EXPECT_EQ(unary1(UnaryOp::reciprocal, -0.0f), -kInf);
}

float special_or_uniform(std::mt19937& rng) {
  static const float specials[] = {kNaN,   -kNaN,   kInf,     -kInf, 0.0f,   -0.0f, 1e-45f, -1e-45f,
                                   1e-39f, 3.4e38f, -3.4e38f, 18.0f, -18.0f, 9.0f,  3.0f,   -3.0f};
  std::uniform_real_distribution<float> u(-25.0f, 25.0f);
  if (rng() % 8 == 0) return specials[rng() % (sizeof(specials) / sizeof(specials[0]))];
  return u(rng);
}

TEST(OnnxMathUnary, EveryKernelEqualsReferenceBitForBit) {
  test::SettingsRestore restore;
  const auto& list = cpu::unary_kernels();
  std::mt19937 rng(kSeed);
  std::map<std::string, int> runs;
  const UnaryOp ops[] = {UnaryOp::sigmoid,    UnaryOp::tanh, UnaryOp::hard_sigmoid,
                         UnaryOp::hard_swish, UnaryOp::erf,  UnaryOp::gelu,
                         UnaryOp::leaky_relu};
  for (int64_t n : {0, 1, 7, 8, 15, 16, 17, 33, 1000, 16384, 16385, 40001}) {
    for (UnaryOp op : ops) {
      Tensor x(DType::f32, {n});
      for (int64_t i = 0; i < n; ++i) x.data<float>()[i] = special_or_uniform(rng);
      const UnaryParams p{0.25f, 0.375f};
      Tensor want(DType::f32, {n});
      ref::unary_f32(op, x, want, p);
      for (const auto& v : list.variants) {
        if (v.reference || !list.runnable(v)) continue;
        cpu::UnaryProblem u{op, p, x, want};
        if (v.declines(u) != nullptr) continue;
        for (int threads = 1; threads <= 3; ++threads) {
          set_num_threads(threads);
          Tensor got(DType::f32, {n});
          v.run({op, p, x, got});
          for (int64_t i = 0; i < n; ++i)
            ASSERT_EQ(bits(got.data<float>()[i]), bits(want.data<float>()[i]))
                << v.name << " op " << unary_op_name(op) << " n " << n << " threads " << threads
                << " element " << i << " x " << x.data<float>()[i] << " seed " << kSeed;
          ++runs[v.name];
        }
      }
    }
  }
  // Every variant this host can run was exercised (a test that cannot fail is a defect).
  for (const auto& v : list.variants)
    if (!v.reference && list.runnable(v)) {
      EXPECT_GT(runs[v.name], 0) << v.name;
    }
}

TEST(OnnxMathUnary, PublicEntryAgreesAcrossIsaLevelsImplAndStrides) {
  test::SettingsRestore restore;
  std::mt19937 rng(kSeed + 1);
  Tensor x(DType::f32, {2, 3, 37, 41});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = special_or_uniform(rng);
  Tensor xh(DType::f32, {2, 3, 37, 41}, Layout::nhwc);  // strided (NHWC) views: reference path
  copy(x, xh);
  for (UnaryOp op : {UnaryOp::sigmoid, UnaryOp::hard_swish, UnaryOp::tanh, UnaryOp::exp}) {
    set_impl(Impl::reference);
    Tensor want(DType::f32, x.shape());
    unary(op, x, want);
    set_impl(Impl::fast);
    for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512}) {
      if (isa > host_isa()) continue;
      set_max_isa(isa);
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        Tensor got(DType::f32, x.shape());
        unary(op, x, got);
        EXPECT_TRUE(same_bits(got, want.to_vector<float>()))
            << unary_op_name(op) << " isa " << isa_name(isa) << " threads " << threads;
        Tensor goth(DType::f32, x.shape(), Layout::nhwc);
        unary(op, xh, goth);
        Tensor dense(DType::f32, x.shape());
        copy(goth, dense);
        EXPECT_TRUE(same_bits(dense, want.to_vector<float>())) << unary_op_name(op) << " nhwc";
      }
    }
    Tensor inplace = x;  // y may be x
    unary(op, inplace, inplace);
    EXPECT_TRUE(same_bits(inplace, want.to_vector<float>())) << unary_op_name(op) << " in place";
  }
}

TEST(OnnxMathUnary, BadInput) {
  Tensor x(DType::f32, {2, 3}), y(DType::f32, {3, 2}), s(DType::s32, {2, 3});
  EXPECT_TRUE(raises([&] { unary(UnaryOp::sigmoid, x, y); }, "npukit::unary", "y"));
  EXPECT_TRUE(raises([&] { unary(UnaryOp::sigmoid, s, x); }, "npukit::unary", "x.dtype"));
  EXPECT_TRUE(raises([&] { unary(static_cast<UnaryOp>(99), x, x); }, "npukit::unary", "op"));
}

std::vector<float> binary_values(BroadcastOp op, const Tensor& a, const Tensor& b,
                                 const Shape& out) {
  Tensor y(DType::f32, out);
  broadcast_binary(op, a, b, y);
  return y.to_vector<float>();
}

TEST(OnnxMathBinary, HandValuesAndSpecials) {
  Tensor a = Tensor::from<float>({4}, {1.0f, -2.0f, kNaN, 0.0f});
  Tensor b = Tensor::from<float>({4}, {2.0f, kNaN, 1.0f, -0.0f});
  EXPECT_TRUE(same_bits(binary_values(BroadcastOp::sub, a, b, {4}), {-1.0f, kNaN, kNaN, 0.0f}));
  EXPECT_TRUE(same_bits(binary_values(BroadcastOp::div, a, b, {4}), {0.5f, kNaN, kNaN, kNaN}));
  // Min/Max: NaN in either operand gives NaN; -0 vs +0 keeps the first operand.
  EXPECT_TRUE(same_bits(binary_values(BroadcastOp::min, a, b, {4}), {1.0f, kNaN, kNaN, 0.0f}));
  EXPECT_TRUE(same_bits(binary_values(BroadcastOp::max, a, b, {4}), {2.0f, kNaN, kNaN, 0.0f}));
  // Pow with a one-element exponent of 2 or 3 multiplies; others call pow.
  Tensor x = Tensor::from<float>({3}, {1.1f, -3.0f, 0.7f});
  EXPECT_TRUE(same_bits(binary_values(BroadcastOp::pow, x, Tensor::from<float>({1}, {3.0f}), {3}),
                        {1.1f * 1.1f * 1.1f, -27.0f, 0.7f * 0.7f * 0.7f}));
  EXPECT_TRUE(same_bits(binary_values(BroadcastOp::pow, x, Tensor::from<float>({}, {0.5f}), {3}),
                        {std::pow(1.1f, 0.5f), kNaN, std::pow(0.7f, 0.5f)}));
}

TEST(OnnxMathBinary, BroadcastingMatchesNaiveLoops) {
  std::mt19937 rng(kSeed + 2);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4, 5}, {5}}, {{2, 1, 4, 1}, {3, 1, 5}}, {{1}, {2, 3}},
      {{}, {3, 1, 2}},     {{4, 1}, {1, 6}},          {{2, 3, 1, 1}, {2, 3, 4, 1}},
  };
  for (const auto& [sa, sb] : cases) {
    const Shape out = broadcast_shape(sa, sb);
    Tensor a = random_f32(sa, rng()), b = random_f32(sb, rng());
    for (BroadcastOp op : {BroadcastOp::sub, BroadcastOp::div, BroadcastOp::max}) {
      const std::vector<float> got = binary_values(op, a, b, out);
      // Index each operand through its own shape, right-aligned.
      Shape o4(4 - out.size(), 1);
      o4.insert(o4.end(), out.begin(), out.end());
      auto pick = [&](const Tensor& t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        const int64_t idx[4] = {i0, i1, i2, i3};
        int64_t off = 0;
        const int r = t.view().rank();
        for (int k = 0; k < r; ++k) {
          const int64_t d = t.view().dim(k);
          off = off * d + (d == 1 ? 0 : idx[4 - r + k]);
        }
        return t.data<float>()[off];
      };
      size_t i = 0;
      for (int64_t n = 0; n < o4[0]; ++n)
        for (int64_t c = 0; c < o4[1]; ++c)
          for (int64_t h = 0; h < o4[2]; ++h)
            for (int64_t w = 0; w < o4[3]; ++w, ++i) {
              const float u = pick(a, n, c, h, w), v = pick(b, n, c, h, w);
              const float want = op == BroadcastOp::sub   ? u - v
                                 : op == BroadcastOp::div ? u / v
                                                          : (v > u ? v : u);
              ASSERT_EQ(bits(got[i]), bits(want))
                  << broadcast_op_name(op) << " " << shape_text(sa) << " " << shape_text(sb);
            }
    }
  }
  Tensor a(DType::f32, {2, 3}), b(DType::f32, {4}), y(DType::f32, {2, 3});
  EXPECT_TRUE(raises([&] { broadcast_binary(BroadcastOp::sub, a, b, y); },
                     "npukit::broadcast_binary", "b"));
}

TEST(OnnxMathReduce, HandValuesShapesAndErrors) {
  Tensor x = iota4({2, 3, 4, 1});  // 1..24
  auto run = [&](ReduceOp op, std::vector<int64_t> axes, bool keep) {
    ReduceParams p{std::move(axes), keep};
    Tensor y(DType::f32, reduce_output_shape(x.shape(), p, "test"));
    reduce(op, x, y, p);
    return y;
  };
  Tensor s = run(ReduceOp::sum, {1}, true);
  EXPECT_EQ(s.shape(), (Shape{2, 1, 4, 1}));
  EXPECT_TRUE(same_bits(s, {1 + 5 + 9.0f, 2 + 6 + 10.0f, 3 + 7 + 11.0f, 4 + 8 + 12.0f,
                            13 + 17 + 21.0f, 14 + 18 + 22.0f, 15 + 19 + 23.0f, 16 + 20 + 24.0f}));
  Tensor m = run(ReduceOp::mean, {-3, -2}, false);  // axes 1 and 2: 12 values per output
  EXPECT_EQ(m.shape(), (Shape{2, 1}));
  EXPECT_TRUE(same_bits(m, {78.0f / 12.0f, 222.0f / 12.0f}));
  Tensor all = run(ReduceOp::max, {}, false);
  EXPECT_EQ(all.shape(), Shape{});
  EXPECT_TRUE(same_bits(all, {24.0f}));
  Tensor mn = run(ReduceOp::min, {0, 3}, true);
  EXPECT_TRUE(same_bits(mn, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  // l2: squares rounded and summed in row-major order, then sqrt.
  Tensor l2 = run(ReduceOp::l2, {1}, false);
  EXPECT_EQ(l2.shape(), (Shape{2, 4, 1}));
  EXPECT_TRUE(same_bits(l2, {std::sqrt(1 + 25 + 81.0f), std::sqrt(4 + 36 + 100.0f),
                             std::sqrt(9 + 49 + 121.0f), std::sqrt(16 + 64 + 144.0f),
                             std::sqrt(169 + 289 + 441.0f), std::sqrt(196 + 324 + 484.0f),
                             std::sqrt(225 + 361 + 529.0f), std::sqrt(256 + 400 + 576.0f)}));
  // NaN wins in max/min.
  Tensor xn = Tensor::from<float>({3}, {1.0f, kNaN, 5.0f});
  Tensor yn(DType::f32, {});
  reduce(ReduceOp::max, xn, yn, {{}, false});
  EXPECT_TRUE(std::isnan(yn.data<float>()[0]));
  ReduceParams dup{{1, -3}, true};
  EXPECT_TRUE(raises([&] { reduce_output_shape(x.shape(), dup, "npukit::reduce"); },
                     "npukit::reduce", "axes", "-3"));
  ReduceParams far{{4}, true};
  EXPECT_TRUE(raises([&] { reduce_output_shape(x.shape(), far, "npukit::reduce"); },
                     "npukit::reduce", "axes", "4"));
}

TEST(OnnxMathLayerNorm, HandValuesStatsAndErrors) {
  // Rows (1, 2, 3, 6): mean 3, deviations (-2, -1, 0, 3), variance 14/4.
  Tensor x = Tensor::from<float>({1, 4}, {1, 2, 3, 6});
  Tensor s = Tensor::from<float>({4}, {1, 2, 1, 1});
  Tensor b = Tensor::from<float>({4}, {0, 0, 1, 0});
  Tensor y(DType::f32, {1, 4}), mean(DType::f32, {1, 1}), inv(DType::f32, {1, 1});
  const float eps = 1e-5f;
  layer_norm(x, s, b, y, mean, inv, {-1, eps});
  const float d = std::sqrt(14.0f / 4.0f + eps);
  EXPECT_TRUE(
      same_bits(y, {-2.0f / d * 1.0f, -1.0f / d * 2.0f, 0.0f / d * 1.0f + 1.0f, 3.0f / d * 1.0f}));
  EXPECT_TRUE(same_bits(mean, {3.0f}));
  EXPECT_TRUE(same_bits(inv, {1.0f / d}));
  // Strided (NHWC) input and output give the contiguous result.
  Tensor x4 = random_f32({2, 3, 4, 5}, kSeed), x4h(DType::f32, {2, 3, 4, 5}, Layout::nhwc);
  copy(x4, x4h);
  Tensor s4 = random_f32({4, 5}, kSeed + 1), y4(DType::f32, {2, 3, 4, 5});
  Tensor y4h(DType::f32, {2, 3, 4, 5}, Layout::nhwc), dense(DType::f32, {2, 3, 4, 5});
  layer_norm(x4, s4, TensorView(), y4, TensorView(), TensorView(), {2, eps});
  layer_norm(x4h, s4, TensorView(), y4h, TensorView(), TensorView(), {-2, eps});
  copy(y4h, dense);
  EXPECT_TRUE(same_bits(dense, y4.to_vector<float>()));
  Tensor bad = Tensor::from<float>({3}, {1, 1, 1});
  EXPECT_TRUE(raises(
      [&] {
        layer_norm(x, bad, b, y, {}, {}, {-1, eps});
      },
      "npukit::layer_norm", "scale", "[3]"));
  EXPECT_TRUE(raises(
      [&] {
        layer_norm(x, s, b, y, {}, {}, {2, eps});
      },
      "npukit::layer_norm", "axis", "2"));
}

// A row of 13 (8 vector lanes + a tail of 5) whose statistics depend on the
// exact order: its inv_std_dev differs both when every tail square is fused
// and when none is. Bits recorded from ONNX Runtime 1.30 (onnxruntime-node,
// x86-64): the first 4 tail squares rounded, the fifth fused.
TEST(OnnxMathLayerNorm, OrtRecordedBitsOfAnOrderSensitiveRow) {
  const std::vector<int> k{-702, 1250,  1580,  -538,  -91,  -568, -1388,
                           540,  -1653, -1748, -1508, 1472, -1577};
  std::vector<float> xs;
  for (int v : k) xs.push_back(static_cast<float>(v) / 256.0f);
  Tensor x = Tensor::from<float>({1, 13}, xs);
  Tensor s = Tensor::from<float>({13}, std::vector<float>(13, 1.0f));
  Tensor y(DType::f32, {1, 13}), mean(DType::f32, {1, 1}), inv(DType::f32, {1, 1});
  layer_norm(x, s, TensorView(), y, mean, inv, {-1, 1e-5f});
  EXPECT_EQ(bits(mean.to_vector<float>()[0]), 0xbfbda762u);
  EXPECT_EQ(bits(inv.to_vector<float>()[0]), 0x3e5d560fu);
  const std::vector<uint32_t> want{0xbe8b7fbe, 0x3fb01616, 0x3fd3c034, 0xbe09345a, 0x3e7944eb,
                                   0xbe23246f, 0xbf5a0706, 0x3f46b502, 0xbf89a746, 0xbf93eba4,
                                   0xbf73f71c, 0x3fc8142b, 0xbf817094};
  const std::vector<float> got = y.to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(bits(got[i]), want[i]) << "y[" << i << "]";
}

TEST(OnnxMathLogSoftmax, HandValuesAxesAndErrors) {
  Tensor x = Tensor::from<float>({2, 3}, {1, 2, 3, 0, 0, kNaN});
  Tensor y(DType::f32, {2, 3});
  log_softmax(x, y, -1);
  const float ls = std::log(std::exp(-2.0f) + std::exp(-1.0f) + std::exp(0.0f));
  const std::vector<float> got = y.to_vector<float>();
  EXPECT_TRUE(same_bits({got[0], got[1], got[2]}, {-2.0f - ls, -1.0f - ls, 0.0f - ls}));
  EXPECT_TRUE(std::isnan(got[3]) && std::isnan(got[4]) && std::isnan(got[5]));  // NaN row
  Tensor z(DType::f32, {2, 3});
  log_softmax(Tensor::from<float>({2, 3}, {1, 2, 3, 1, 2, 3}), z, 0);  // equal rows: -log 2
  EXPECT_TRUE(same_bits(z, std::vector<float>(6, 0.0f - std::log(2.0f))));
  EXPECT_TRUE(raises([&] { log_softmax(x, y, 2); }, "npukit::log_softmax", "axis", "2"));
}

}  // namespace
}  // namespace test_onnx_math_ops
}  // namespace npukit::test
