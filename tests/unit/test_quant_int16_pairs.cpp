// IntAccumulation::mlas_u8s8_int16_pairs (ONNX Runtime's MLAS u8 x s8 GEMM on
// x86 without VNNI) on hand-computed cases: which products pair, where the
// zero points enter, which dtypes and convolutions are exempt, and which
// profile / CPU gets which accumulation.
#include <fstream>
#include <random>
#include <sstream>

#include "npukit/cpu_features.hpp"
#include "npukit/ops/quantized.hpp"
#include "profile_compare.hpp"
#include "unit/test_util.hpp"

namespace npukit {
namespace test_quant_int16_pairs {
namespace {

using test::raises;

template <class T>
Tensor codes(const Shape& s, const std::vector<int>& v) {
  std::vector<T> c(v.begin(), v.end());
  return Tensor::from<T>(s, c);
}

// a (1 x K) times b (K x 1) through MatMulInteger under `prof`.
template <class A, class B>
int32_t dot(const std::vector<int>& a, const std::vector<int>& b, Profile prof, int az = 0,
            int bz = 0) {
  const auto K = static_cast<int64_t>(a.size());
  MatMulIntegerParams p;
  p.a_zero_point = az;
  p.b_zero_point = {bz};
  apply_profile(p, prof);
  Tensor y(DType::s32, {1, 1});
  matmul_integer(codes<A>({1, K}, a), codes<B>({K, 1}, b), y, p);
  return y.data<int32_t>()[0];
}

constexpr Profile kAvx2 = Profile::onnxruntime_avx2, kVnni = Profile::onnxruntime_vnni;

TEST(QuantInt16Pairs, PairSaturatesAt32767) {
  // 255*127 + 255*127 = 64770 -> int16 32767; VNNI sums exactly.
  EXPECT_EQ((dot<uint8_t, int8_t>({255, 255}, {127, 127}, kAvx2)), 32767);
  EXPECT_EQ((dot<uint8_t, int8_t>({255, 255}, {127, 127}, kVnni)), 64770);
  // 255*-128 * 2 = -65280 -> -32768.
  EXPECT_EQ((dot<uint8_t, int8_t>({255, 255}, {-128, -128}, kAvx2)), -32768);
  // A pair that fits is exact: 255*127 + 1*1 = 32386.
  EXPECT_EQ((dot<uint8_t, int8_t>({255, 1}, {127, 1}, kAvx2)), 32386);
}

TEST(QuantInt16Pairs, AdjacentPositionsPairAndOddKPadsWithZero) {
  // Pairs are (k0, k1), (k2, k3): [255, 0, 255, 0] never saturates (2 x 32385),
  // [255, 255, 0, 0] does (32767 + 0).
  EXPECT_EQ((dot<uint8_t, int8_t>({255, 0, 255, 0}, {127, 127, 127, 127}, kAvx2)), 64770);
  EXPECT_EQ((dot<uint8_t, int8_t>({255, 255, 0, 0}, {127, 127, 127, 127}, kAvx2)), 32767);
  // K = 3: 32767 + the lone 32385 = 65152 (exact 97155).
  EXPECT_EQ((dot<uint8_t, int8_t>({255, 255, 255}, {127, 127, 127}, kAvx2)), 65152);
  EXPECT_EQ((dot<uint8_t, int8_t>({255, 255, 255}, {127, 127, 127}, kVnni)), 97155);
}

TEST(QuantInt16Pairs, ZeroPointsAreRemovedAfterTheSaturatedSum) {
  // Raw codes saturate: S = 32767. a_zp 128: 32767 - 128*(127+127) = 255
  // (exact: (255-128)*127*2 = 32258).
  EXPECT_EQ((dot<uint8_t, int8_t>({255, 255}, {127, 127}, kAvx2, 128, 0)), 255);
  EXPECT_EQ((dot<uint8_t, int8_t>({255, 255}, {127, 127}, kVnni, 128, 0)), 32258);
  // b_zp 27: 32767 - 27*(255+255) = 18997 (exact: 255*100*2 = 51000).
  EXPECT_EQ((dot<uint8_t, int8_t>({255, 255}, {127, 127}, kAvx2, 0, 27)), 18997);
  EXPECT_EQ((dot<uint8_t, int8_t>({255, 255}, {127, 127}, kVnni, 0, 27)), 51000);
  // Both: 32767 - 10*254 - 27*510 + 2*10*27 = 16997 (exact 2*245*100 = 49000).
  EXPECT_EQ((dot<uint8_t, int8_t>({255, 255}, {127, 127}, kAvx2, 10, 27)), 16997);
}

TEST(QuantInt16Pairs, OnlyU8TimesS8Saturates) {
  // MLAS's u8 x u8 and s8 x s8 kernels widen to int16 first: exact.
  EXPECT_EQ((dot<uint8_t, uint8_t>({255, 255}, {255, 255}, kAvx2)), 130050);
  EXPECT_EQ((dot<int8_t, int8_t>({-128, -128}, {-128, -128}, kAvx2)), 32768);
}

QLinearConvParams conv_params(Profile prof, float y_scale, int x_zp = 0, int y_zp = 0) {
  QLinearConvParams p;
  p.x_zero_point = x_zp;
  p.y_scale = y_scale;
  p.y_zero_point = y_zp;
  apply_profile(p, prof);
  return p;
}

int conv1(const Tensor& x, const Tensor& w, QLinearConvParams p, int64_t kh, int64_t kw) {
  p.window.kernel_h = kh;
  p.window.kernel_w = kw;
  Tensor y(DType::u8, qlinear_conv_output_shape(x.shape(), w.shape(), p));
  qlinear_conv(x, w, TensorView(), y, p);
  return y.data<uint8_t>()[0];
}

TEST(QuantInt16Pairs, ConvPairsChannelsInsideEachKernelPosition) {
  // x (1, 2, 1, 2): channel 0 = [255, 0], channel 1 = [255, 0]; w all 127,
  // kernel 1x2. ORT's NHWC im2col order (kw, ic) pairs the two channels of
  // kw = 0: 255*127*2 -> 32767, then 0. (NCHW order would pair kw 0 and 1 of
  // one channel and sum exactly, 64770.) y_scale 512: 32767/512 = 63.998 -> 64;
  // exact 64770/512 = 126.5 -> 127 (126.50390625 rounds up).
  const Tensor x = codes<uint8_t>({1, 2, 1, 2}, {255, 0, 255, 0});
  const Tensor w = codes<int8_t>({1, 2, 1, 2}, {127, 127, 127, 127});
  EXPECT_EQ(conv1(x, w, conv_params(kAvx2, 512), 1, 2), 64);
  EXPECT_EQ(conv1(x, w, conv_params(kVnni, 512), 1, 2), 127);
}

TEST(QuantInt16Pairs, ConvPaddingTapReadsTheZeroPoint) {
  // x = [255], x_zp 255, pad left 1, kernel 1x2, w = [127, 127]: ORT's im2col
  // writes x_zp = 255 into the pad, so S = sat(255*127*2) = 32767 and
  // acc = 32767 - 255*254 = -32003 (exact: 0). y_scale 256, y_zp 128:
  // -32003/256 = -125.01 -> -125 + 128 = 3; exact 128.
  const Tensor x = codes<uint8_t>({1, 1, 1, 1}, {255});
  const Tensor w = codes<int8_t>({2, 1, 1, 2}, {127, 127, 127, 127});  // 2 OC: not depthwise
  for (auto [prof, want] : {std::pair{kAvx2, 3}, std::pair{kVnni, 128}}) {
    QLinearConvParams p = conv_params(prof, 256, 255, 128);
    p.window.pad_left = 1;
    EXPECT_EQ(conv1(x, w, p, 1, 2), want) << profile_name(prof);
  }
}

TEST(QuantInt16Pairs, DepthwiseConvIsExact) {
  // One input and one output channel per group: MLAS's depthwise kernel sums
  // exactly: 64770/512 -> 127 under both; with two output channels the GEMM
  // path saturates: 32767/512 -> 64.
  const Tensor x = codes<uint8_t>({1, 1, 1, 2}, {255, 255});
  const Tensor w1 = codes<int8_t>({1, 1, 1, 2}, {127, 127});
  const Tensor w2 = codes<int8_t>({2, 1, 1, 2}, {127, 127, 127, 127});
  EXPECT_EQ(conv1(x, w1, conv_params(kAvx2, 512), 1, 2), 127);
  EXPECT_EQ(conv1(x, w2, conv_params(kAvx2, 512), 1, 2), 64);
  // Two groups of one channel each (depthwise, groups 2).
  QLinearConvParams p = conv_params(kAvx2, 512);
  p.groups = 2;
  const Tensor x2 = codes<uint8_t>({1, 2, 1, 2}, {255, 255, 255, 255});
  EXPECT_EQ(conv1(x2, w2, p, 1, 2), 127);
}

TEST(QuantInt16Pairs, QLinearMatMulSaturates) {
  // 64770 vs 32767 through y_scale 512 as above.
  QLinearMatMulParams p;
  p.y_scale = 512;
  const Tensor a = codes<uint8_t>({1, 2}, {255, 255}), b = codes<int8_t>({2, 1}, {127, 127});
  for (auto [prof, want] : {std::pair{kAvx2, 64}, std::pair{kVnni, 127}}) {
    apply_profile(p, prof);
    Tensor y(DType::u8, {1, 1});
    qlinear_matmul(a, b, y, p);
    EXPECT_EQ(y.data<uint8_t>()[0], want) << profile_name(prof);
  }
}

TEST(QuantInt16Pairs, MlasKernelChoiceByCpu) {
  auto acc = [](bool avx2, bool avx_vnni, bool core, bool vnni512) {
    CpuFeatures f;
    f.avx2 = avx2;
    f.avx_vnni = avx_vnni;
    f.avx512_core = core;
    f.avx512_vnni = vnni512;
    return onnxruntime_accumulation(f);
  };
  using A = IntAccumulation;
  EXPECT_EQ(acc(false, false, false, false), A::exact_int32);           // SSE kernel
  EXPECT_EQ(acc(true, false, false, false), A::mlas_u8s8_int16_pairs);  // AVX2
  EXPECT_EQ(acc(true, true, false, false), A::exact_int32);             // AVX-VNNI
  EXPECT_EQ(acc(true, false, true, false), A::mlas_u8s8_int16_pairs);   // AVX512 core
  EXPECT_EQ(acc(true, true, true, false), A::mlas_u8s8_int16_pairs);    // core overrides AVX-VNNI
  EXPECT_EQ(acc(true, false, true, true), A::exact_int32);              // AVX512-VNNI
  EXPECT_EQ(profile_accumulation(Profile::onnxruntime_avx2), A::mlas_u8s8_int16_pairs);
  EXPECT_EQ(profile_accumulation(Profile::onnxruntime_vnni), A::exact_int32);
  EXPECT_EQ(profile_accumulation(Profile::pytorch), A::exact_int32);
  EXPECT_EQ(profile_accumulation(Profile::onnxruntime),
            onnxruntime_accumulation(host_cpu_features()));
  EXPECT_STREQ(int_accumulation_name(A::mlas_u8s8_int16_pairs), "mlas_u8s8_int16_pairs");
  CpuFeatures f;
  EXPECT_EQ(cpu_features_text(f), "none");
  f.avx2 = f.avx512_vnni = true;
  EXPECT_EQ(cpu_features_text(f), "avx2 avx512_vnni");
  EXPECT_EQ(profile_from_name("onnxruntime_avx2"), Profile::onnxruntime_avx2);
  EXPECT_EQ(semantics_base(Profile::onnxruntime_vnni), Profile::onnxruntime);
}

TEST(QuantInt16Pairs, HostFeaturesAgreeWithTheKernel) {
  // Linux's /proc/cpuinfo flags come from the same CPUID bits.
  std::ifstream in("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      flags = " " + line.substr(line.find(':') + 1) + " ";
      break;
    }
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags";
  auto has = [&](const char* f) {
    return flags.find(" " + std::string(f) + " ") != std::string::npos;
  };
  const CpuFeatures f = host_cpu_features();
  EXPECT_EQ(f.avx2, has("avx2") && has("fma"));
  if (f.avx2) {
    EXPECT_EQ(f.avx_vnni, has("avx_vnni"));
    EXPECT_EQ(f.avx512_vnni, has("avx512_vnni") && has("avx512f") && has("avx512bw") &&
                                 has("avx512dq") && has("avx512vl"));
  }
}

TEST(QuantInt16Pairs, MatMulIntegerRejectsOtherProfiles) {
  MatMulIntegerParams p;
  EXPECT_TRUE(raises([&] { apply_profile(p, Profile::ghp_rtl); }, "npukit::matmul_integer",
                     "profile", "ghp_rtl"));
}

TEST(QuantInt16Pairs, FastConvMatchesReference) {
  // cpu::conv_accumulate_mlas_pairs against the reference, bit for bit, over
  // seeded random geometries (odd and even K, groups, pads, dilation, NCHW and
  // NHWC strides), u8 x s8 with full-range codes and zero points.
  const uint32_t seed = 20261127;
  std::mt19937 rng(seed);
  auto r = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int it = 0; it < 200; ++it) {
    const int64_t groups = r(0, 2) == 0 ? r(2, 3) : 1, n = r(1, 2);
    const int64_t ic = groups * r(1, 5), oc = groups * r(1, 6), kh = r(1, 3), kw = r(1, 3);
    Window2d win;
    win.kernel_h = kh, win.kernel_w = kw, win.stride_h = r(1, 2), win.stride_w = r(1, 2);
    win.dilation_h = r(1, 2), win.dilation_w = r(1, 2);
    win.pad_top = r(0, 2), win.pad_bottom = r(0, 2), win.pad_left = r(0, 2),
    win.pad_right = r(0, 2);
    const int64_t h = r((kh - 1) * win.dilation_h + 1, 12),
                  wd = r((kw - 1) * win.dilation_w + 1, 12);
    Tensor x(DType::u8, {n, ic, h, wd}, it % 2 ? Layout::nhwc : Layout::nchw);
    Tensor w(DType::s8, {oc, ic / groups, kh, kw});
    auto* xp = static_cast<uint8_t*>(x.view().raw());
    for (int64_t i = 0; i < x.view().numel(); ++i) xp[i] = static_cast<uint8_t>(r(0, 255));
    auto* wp = static_cast<int8_t*>(w.view().raw());
    for (int64_t i = 0; i < w.view().numel(); ++i) wp[i] = static_cast<int8_t>(r(-128, 127));
    QuantParams wq;
    wq.axis = 0;
    wq.zero_point = {static_cast<int32_t>(r(-128, 127))};
    const auto x_zp = static_cast<int32_t>(r(0, 255));
    QLinearConvParams qp;
    qp.window = win;
    qp.groups = groups;
    const Shape out = qlinear_conv_output_shape(x.shape(), w.shape(), qp);
    Tensor a(DType::s32, out), b(DType::s32, out);
    ref::conv_accumulate_mlas_pairs(x.view(), w.view(), a.view(), win, groups, x_zp, wq);
    cpu::conv_accumulate_mlas_pairs(x.view(), w.view(), b.view(), win, groups, x_zp, wq);
    ASSERT_EQ(a.to_vector<int32_t>(), b.to_vector<int32_t>())
        << "seed " << seed << " case " << it << " x " << shape_text(x.shape()) << " w "
        << shape_text(w.shape()) << " groups " << groups;
  }
}

TEST(QuantInt16Pairs, CompareReportsTheKernelDifference) {
  // 3x3 conv over 8 random u8 channels (K = 72) with s8 weights: many pairs
  // exceed the int16 range, so the exact and pair-saturating semantics differ;
  // with u8 weights both sum exactly and agree everywhere.
  CompareConfig c;
  c.op = "qlinear_conv";
  c.shape = {1, 8, 6, 6};
  c.window.kernel_h = c.window.kernel_w = 3;
  c.x_scale = 1;
  c.w_scale = 1;
  c.y_scale = 64;  // one output code = 64 accumulator units
  c.y_zero_point = 128;
  const std::vector<Profile> profiles = {kVnni, kAvx2};
  const CompareReport r = compare_profiles(c, profiles);
  ASSERT_EQ(r.diffs.size(), 1u);
  EXPECT_GT(r.diffs[0].differing, 0);
  c.w_dtype = DType::u8;
  EXPECT_EQ(compare_profiles(c, profiles).diffs.at(0).differing, 0);
  c.op = "qlinear_matmul";  // (1, 8, 6, 6) x (6, 8): K = 6
  c.w_dtype = DType::s8;
  c.y_scale = 16;
  EXPECT_GT(compare_profiles(c, profiles).diffs.at(0).differing, 0);
}

}  // namespace
}  // namespace test_quant_int16_pairs
}  // namespace npukit
