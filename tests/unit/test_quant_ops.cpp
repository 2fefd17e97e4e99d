// Quantized operators on hand-computed cases: the tflite, mico and ghp
// average-pool profiles, ONNX Runtime's float rounding, the documented errors,
// and int32 accumulators at the limits of every face.
#include <random>

#include "npukit/ops/ghp_pool.hpp"
#include "npukit/ops/quantized.hpp"
#include "unit/test_util.hpp"

namespace npukit {
namespace test_quant_ops {
namespace {

using test::raises;

template <class T>
Tensor codes(const Shape& s, const std::vector<int>& v) {
  std::vector<T> c(v.begin(), v.end());
  return Tensor::from<T>(s, c);
}

template <class T>
std::vector<int> ints(const Tensor& t) {
  std::vector<T> v = t.to_vector<T>();
  return std::vector<int>(v.begin(), v.end());
}

QLinearAvgPoolParams avg(Profile prof, int64_t k, int64_t s, int64_t pad, bool cip, float xs = 1,
                         int xz = 0, float ys = 1, int yz = 0) {
  QLinearAvgPoolParams p;
  p.window.kernel_h = p.window.kernel_w = k;
  p.window.stride_h = p.window.stride_w = s;
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = pad;
  p.count_include_pad = cip;
  p.x_scale = xs;
  p.y_scale = ys;
  p.x_zero_point = xz;
  p.y_zero_point = yz;
  apply_profile(p, prof);
  return p;
}

template <class T>
std::vector<int> run_avg(const Tensor& x, const QLinearAvgPoolParams& p) {
  Tensor y(x.dtype(), qlinear_average_pool_output_shape(x.shape(), p));
  qlinear_average_pool(x, y, p);
  return ints<T>(y);
}

// ---- tflite: mean of the codes, ties away from zero -------------------------

TEST(QuantAvgPool, TfliteTiesAwayFromZero) {
  // 1+2+3+4 = 10, 10/4 = 2.5 -> 3; negated -> -3.
  EXPECT_EQ(run_avg<int8_t>(codes<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4}),
                            avg(Profile::tflite, 2, 1, 0, false)),
            std::vector<int>{3});
  EXPECT_EQ(run_avg<int8_t>(codes<int8_t>({1, 1, 2, 2}, {-1, -2, -3, -4}),
                            avg(Profile::tflite, 2, 1, 0, false)),
            std::vector<int>{-3});
  // 1+2+4 = 7 / 3 = 2.33 -> 2 (below half).
  QLinearAvgPoolParams row = avg(Profile::tflite, 3, 1, 0, false);
  row.window.kernel_h = 1;
  EXPECT_EQ(run_avg<int8_t>(codes<int8_t>({1, 1, 1, 3}, {1, 2, 4}), row), std::vector<int>{2});
}

TEST(QuantAvgPool, TflitePaddingExcluded) {
  // 2x2 image [5 6; 7 8], k 2, s 1, pad 1 -> 3x3. Corner (0,0) sees only 5;
  // (0,1) sees 5,6 -> 5.5 -> 6; centre sees all four -> 26/4 = 6.5 -> 7;
  // (1,0) sees 5,7 -> 6; (2,2) sees 8.
  const auto y = run_avg<int8_t>(codes<int8_t>({1, 1, 2, 2}, {5, 6, 7, 8}),
                                 avg(Profile::tflite, 2, 1, 1, false, 0.5f, 3, 0.5f, 3));
  EXPECT_EQ(y, (std::vector<int>{5, 6, 6, 6, 7, 7, 7, 8, 8}));
}

TEST(QuantAvgPool, TfliteRejectsRescaling) {
  const Tensor x = codes<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor y(DType::s8, {1, 1, 1, 1});
  EXPECT_TRUE(
      raises([&] { qlinear_average_pool(x, y, avg(Profile::tflite, 2, 1, 0, false, 1, 0, 2, 0)); },
             "npukit::qlinear_average_pool", "y_scale"));
  EXPECT_TRUE(
      raises([&] { qlinear_average_pool(x, y, avg(Profile::tflite, 2, 1, 0, false, 1, 0, 1, 5)); },
             "npukit::qlinear_average_pool", "y_zero_point"));
}

// ---- mico: C division (toward zero), empty window = 0 -------------------------

TEST(QuantAvgPool, MicoTruncates) {
  // 10/4 = 2 and -10/4 = -2 (C truncation; floor would give -3).
  EXPECT_EQ(run_avg<int8_t>(codes<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4}),
                            avg(Profile::mico, 2, 1, 0, false)),
            std::vector<int>{2});
  EXPECT_EQ(run_avg<int8_t>(codes<int8_t>({1, 1, 2, 2}, {-1, -2, -3, -4}),
                            avg(Profile::mico, 2, 1, 0, false)),
            std::vector<int>{-2});
  // -128 * 4 / 4 = -128 and 127 stay exact.
  EXPECT_EQ(run_avg<int8_t>(codes<int8_t>({1, 1, 2, 2}, {-128, -128, -128, -128}),
                            avg(Profile::mico, 2, 1, 0, false)),
            std::vector<int>{-128});
}

TEST(QuantAvgPool, MicoEmptyWindowIsZero) {
  // 1x1 image holding 9, k 1, s 1, pad 1: 3x3 outputs, only the centre sees it.
  EXPECT_EQ(run_avg<int8_t>(codes<int8_t>({1, 1, 1, 1}, {9}), avg(Profile::mico, 1, 1, 1, false)),
            (std::vector<int>{0, 0, 0, 0, 9, 0, 0, 0, 0}));
}

TEST(QuantAvgPool, MicoRejectsZeroPoint) {
  const Tensor x = codes<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor y(DType::s8, {1, 1, 1, 1});
  EXPECT_TRUE(
      raises([&] { qlinear_average_pool(x, y, avg(Profile::mico, 2, 1, 0, false, 1, 3, 1, 3)); },
             "npukit::qlinear_average_pool", "x_zero_point", "3"));
}

// ---- ghp: M1 = X_S/(N*Y_S) = m1 * 2^-n1, RTL half up vs golden away ----------

TEST(QuantAvgPool, GhpTiesRtlUpGoldenAway) {
  // N = 4, M1 = 1/4 exactly (m1 = 2^25, n1 = 27). X_z = 10: acc = 1+2+3+4 - 40
  // = -30, -30/4 = -7.5: RTL floor(-7.5 + 0.5) = -7, golden -8; + Y_z 100.
  const Tensor x = codes<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(run_avg<uint8_t>(x, avg(Profile::ghp_rtl, 2, 1, 0, true, 1, 10, 1, 100)),
            std::vector<int>{93});
  EXPECT_EQ(run_avg<uint8_t>(x, avg(Profile::ghp_golden, 2, 1, 0, true, 1, 10, 1, 100)),
            std::vector<int>{92});
  // X_z = 0: 10/4 = 2.5 -> 3 under both.
  EXPECT_EQ(run_avg<uint8_t>(x, avg(Profile::ghp_rtl, 2, 1, 0, true)), std::vector<int>{3});
  EXPECT_EQ(run_avg<uint8_t>(x, avg(Profile::ghp_golden, 2, 1, 0, true)), std::vector<int>{3});
}

TEST(QuantAvgPool, GhpPadsHoldZeroPoint) {
  // 1x1 image 200, X_z 40, k 2, s 1, pad 1 -> 2x2; each window has the pixel
  // and three pads of X_z: acc = 200 + 3*40 - 4*40 = 160, M1 = 1/4 -> 40, + Y_z 5 = 45.
  EXPECT_EQ(run_avg<uint8_t>(codes<uint8_t>({1, 1, 1, 1}, {200}),
                             avg(Profile::ghp_golden, 2, 1, 1, true, 1, 40, 1, 5)),
            (std::vector<int>{45, 45, 45, 45}));
}

TEST(QuantAvgPool, GhpRtlRegisterWraps) {
  // k 1, M1 = X_S/Y_S = 64 (m1 = 2^25, n1 = 19). x = 255, X_z = 0: the exact
  // result 16320 saturates to 255 in the golden model; the RTL keeps
  // t = prod >> 18 = 32640 in a 10-bit register: 32640 mod 1024 = 896 = -128
  // signed, r = -64, clamp and + Y_z 0 -> 0.
  const Tensor x = codes<uint8_t>({1, 1, 1, 1}, {255});
  EXPECT_EQ(run_avg<uint8_t>(x, avg(Profile::ghp_golden, 1, 1, 0, true, 1, 0, 1.0f / 64, 0)),
            std::vector<int>{255});
  EXPECT_EQ(run_avg<uint8_t>(x, avg(Profile::ghp_rtl, 1, 1, 0, true, 1, 0, 1.0f / 64, 0)),
            std::vector<int>{0});
}

TEST(QuantAvgPool, GhpRtlSumRegisterWraps) {
  // 9x9 window of 255: sum 20655; the RTL's 14-bit sum register holds
  // 20655 - 16384 = 4271, and 4271/81 = 52.7 -> 53; the golden model: 255.
  Tensor x(DType::u8, {1, 1, 9, 9});
  std::fill(x.data<uint8_t>(), x.data<uint8_t>() + 81, uint8_t{255});
  EXPECT_EQ(run_avg<uint8_t>(x, avg(Profile::ghp_rtl, 9, 1, 0, true)), std::vector<int>{53});
  EXPECT_EQ(run_avg<uint8_t>(x, avg(Profile::ghp_golden, 9, 1, 0, true)), std::vector<int>{255});
}

TEST(QuantAvgPool, GhpMatchesThePoolEngineAnInstructionDrives) {
  // The ONNX operator under a GHP profile and the pool engine run with the
  // fields the compiler gives an AVGP instruction (avg_pool_engine_params) give
  // the same codes, both profiles. Seed 7.
  std::mt19937 gen(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t k = 1 + trial % 3, s = 1 + trial % 2, pad = trial % 2, H = 4 + trial % 5;
    Tensor x(DType::u8, {1, 2, H, H + 1});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>(gen());
    const float xs = 0.02f + 0.01f * static_cast<float>(trial % 7), ys = 0.03f;
    const int xz = static_cast<int>(gen() % 256), yz = static_cast<int>(gen() % 256);
    for (Profile prof : {Profile::ghp_rtl, Profile::ghp_golden}) {
      QLinearAvgPoolParams p = avg(prof, k, s, pad, true, xs, xz, ys, yz);
      Tensor y(DType::u8, qlinear_average_pool_output_shape(x.shape(), p));
      qlinear_average_pool(x, y, p);
      const ghp::PoolEngineParams e = ghp::avg_pool_engine_params(prof, p.window, xs, xz, ys, yz);
      Tensor y2(DType::u8, y.shape());
      ghp::ghp_pool_engine_u8(x, y2, e);
      EXPECT_EQ(ints<uint8_t>(y), ints<uint8_t>(y2))
          << profile_name(prof) << " trial " << trial << " k " << k << " s " << s << " pad " << pad;
    }
  }
}

TEST(QuantAvgPool, GhpRejectsCountIncludePad0) {
  QLinearAvgPoolParams p;
  EXPECT_TRUE(raises([&] { apply_profile(p, Profile::ghp_rtl); }, "npukit::qlinear_average_pool",
                     "count_include_pad"));
}

// ---- onnxruntime: float path, zero point added before rounding to even -------

TEST(QuantAvgPool, OnnxruntimeFloatPathRoundsToEven) {
  // x_scale 0.5, k 2x1 (columns): windows [2, 8] -> (1 + 4)/2 = 2.5 -> 2 and
  // [2, 12] -> (1 + 6)/2 = 3.5 -> 4; [1, 4] -> 1.25 -> 1. Pads make it take
  // the float path (not the whole-image integer path).
  QLinearAvgPoolParams p = avg(Profile::onnxruntime, 1, 1, 0, false, 0.5f, 0, 1.0f, 0);
  p.window.kernel_h = 2;
  p.window.pad_left = 1;
  const Tensor x = codes<uint8_t>({1, 1, 2, 3}, {2, 2, 1, 8, 12, 4});
  // Output 1x4; count_include_pad = 1 divides by 2 everywhere, so the
  // all-padding column -1 gives 0.
  p.count_include_pad = true;
  apply_profile(p, Profile::onnxruntime);
  EXPECT_EQ(run_avg<uint8_t>(x, p), (std::vector<int>{0, 2, 4, 1}));
}

TEST(QuantAvgPool, OnnxruntimeGlobalIntegerPath) {
  // Whole image, N = 4, x_zp 1: acc = 1+2+3+4 - 4 = 6, M = 1/(1*4): 1.5 -> 2
  // (to even), + y_zp 10 = 12. The ORT global path adds y_zp after rounding.
  QLinearAvgPoolParams p = avg(Profile::onnxruntime, 1, 1, 0, false, 1.0f, 1, 1.0f, 10);
  Tensor y(DType::u8, {1, 1, 1, 1});
  qlinear_global_average_pool(codes<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4}), y, p);
  EXPECT_EQ(ints<uint8_t>(y), std::vector<int>{12});
}

// ---- QuantizeLinear / QLinearConv rounding ---------------------------------

// ---- pytorch: int32 acc - zp*valid, fp32 multiplier, zp in or out of the rounding --

TEST(QuantAvgPool, PytorchZeroPointInsideOrOutsideTheRounding) {
  // u8, zp 249, 2x2 windows of one channel each (C = 2): codes 10, 11 / 10, 11 (sum 42):
  // acc = 42 - 4*249 = -954, v = -954 / 4 = -238.5.
  // NCHW kernel (C > 1): round(-238.5 + 249) = round(10.5) = 10 (to even).
  // channels-last kernel (C == 1, or NHWC strides): round(-238.5) + 249 = -238 + 249 = 11.
  const Tensor two = codes<uint8_t>({1, 2, 2, 2}, {10, 11, 10, 11, 10, 11, 10, 11});
  const QLinearAvgPoolParams p = avg(Profile::pytorch, 2, 1, 0, false, 0.5f, 249, 0.5f, 249);
  EXPECT_EQ(run_avg<uint8_t>(two, p), (std::vector<int>{10, 10}));
  const Tensor one = codes<uint8_t>({1, 1, 2, 2}, {10, 11, 10, 11});
  EXPECT_EQ(run_avg<uint8_t>(one, p), std::vector<int>{11});
  // NHWC strides for the C = 2 tensor: the channels-last kernel.
  const Tensor nhwc = codes<uint8_t>({1, 2, 2, 2}, {10, 10, 11, 11, 10, 10, 11, 11});
  const TensorView v(nhwc.view().raw(), DType::u8, {1, 2, 2, 2}, {8, 1, 4, 2});
  Tensor y(DType::u8, {1, 2, 1, 1});
  qlinear_average_pool(v, y, p);
  EXPECT_EQ(ints<uint8_t>(y), (std::vector<int>{11, 11}));
  // count_include_pad: the divisor is the window clipped to input + padding. 1x1 input
  // 20 (zp 0), k 2, pad 1 (PyTorch's limit k/2): every window holds 1 input and 3 pads:
  // 20 / 4 = 5 with padding counted, 20 / 1 = 20 without.
  const Tensor x1 = codes<uint8_t>({1, 2, 1, 1}, {20, 20});
  EXPECT_EQ(run_avg<uint8_t>(x1, avg(Profile::pytorch, 2, 1, 1, true, 1, 0, 1, 0)),
            (std::vector<int>{5, 5, 5, 5, 5, 5, 5, 5}));
  EXPECT_EQ(run_avg<uint8_t>(x1, avg(Profile::pytorch, 2, 1, 1, false, 1, 0, 1, 0)),
            (std::vector<int>(8, 20)));
}

TEST(QuantOps, QuantizeLinearPytorchMultipliesByTheReciprocal) {
  // scale 0.1f: x = 1.55f. ONNX: 1.55f / 0.1f = 15.499999 -> 15; PyTorch:
  // 1.55f * (1 / 0.1f = 10.0f) = 15.5 -> 16 (to even).
  const Tensor x = Tensor::from<float>({1}, {1.55f});
  QuantizeParams p;
  p.q.scale = {0.1f};
  p.q.zero_point = {0};
  Tensor y(DType::u8, {1});
  apply_profile(p, Profile::onnxruntime);
  quantize_linear(x, y, p);
  EXPECT_EQ(ints<uint8_t>(y), std::vector<int>{15});
  apply_profile(p, Profile::pytorch);
  quantize_linear(x, y, p);
  EXPECT_EQ(ints<uint8_t>(y), std::vector<int>{16});
}

TEST(QuantOps, QuantizeLinearHalfToEvenAndSaturation) {
  QuantizeParams p;
  p.q.scale = {0.5f};
  p.q.zero_point = {0};
  apply_profile(p, Profile::onnxruntime);
  // x / 0.5: 0.25 -> 0.5 -> 0, 0.75 -> 1.5 -> 2, 1.25 -> 2.5 -> 2, -0.25 -> -0.5 -> 0,
  // 1000 -> 127, -1000 -> -128.
  const Tensor x = Tensor::from<float>({6}, {0.25f, 0.75f, 1.25f, -0.25f, 1000.f, -1000.f});
  Tensor y(DType::s8, {6});
  quantize_linear(x, y, p);
  EXPECT_EQ(ints<int8_t>(y), (std::vector<int>{0, 2, 2, 0, 127, -128}));
}

TEST(QuantOps, QLinearConvHandComputed) {
  // 1x1x2x2 x [10 20; 30 40], x_zp 10; 1x1x2x2 w [1 2; 3 4], w_zp 0;
  // acc = 0*1 + 10*2 + 20*3 + 30*4 = 200, + bias 5 = 205; M = (0.5*0.25)/1 =
  // 0.125: 25.625 -> 26, + y_zp 3 = 29.
  QLinearConvParams p;
  p.window.kernel_h = p.window.kernel_w = 2;
  p.x_scale = 0.5f;
  p.x_zero_point = 10;
  p.w.scale = {0.25f};
  p.w.zero_point = {0};
  p.y_scale = 1.0f;
  p.y_zero_point = 3;
  p.has_bias = true;
  apply_profile(p, Profile::onnxruntime);
  const Tensor b = Tensor::from<int32_t>({1}, {5});
  Tensor y(DType::u8, {1, 1, 1, 1});
  qlinear_conv(codes<uint8_t>({1, 1, 2, 2}, {10, 20, 30, 40}),
               codes<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4}), b, y, p);
  EXPECT_EQ(ints<uint8_t>(y), std::vector<int>{29});
}

TEST(QuantOps, QLinearAddProfiles) {
  // a = 3 (zp 1, scale 0.5) -> 1.0; b = 4 (zp 0, scale 0.25) -> 1.0; c scale
  // 0.8f (0.800000012), zp 2. pytorch's dequantize-add-quantize: 2.0/0.8f =
  // 2.49999996 -> 2, + 2 = 4. ORT's kernel: ra = 0.625, rb = 0.3125 (both
  // round to these), k = 2 - 0.625 = 1.375, 4*rb + k = 2.625, 3*ra + 2.625 =
  // 4.5 -> 4 (to even). a = 5: 3.0/0.8f = 3.75 -> 4 + 2 = 6; ORT 5.75 -> 6.
  QLinearAddParams p;
  p.a_scale = 0.5f;
  p.a_zero_point = 1;
  p.b_scale = 0.25f;
  p.c_scale = 0.8f;
  p.c_zero_point = 2;
  for (Profile prof : {Profile::pytorch, Profile::onnxruntime}) {
    apply_profile(p, prof);
    Tensor c(DType::u8, {2});
    qlinear_add(codes<uint8_t>({2}, {3, 5}), codes<uint8_t>({1}, {4}), c, p);
    EXPECT_EQ(ints<uint8_t>(c), (std::vector<int>{4, 6})) << profile_name(prof);
  }
}

// ---- int32 accumulators at the limits ------------------------------------------

TEST(QuantLimits, ConvIntegerAtMaximumDepth) {
  // K = kMaxInt32Products = 33025 products of 255 * 255: 2147450625 <= 2^31 - 1.
  const int64_t K = kMaxInt32Products;
  Tensor x(DType::u8, {1, K, 1, 1}), w(DType::u8, {1, K, 1, 1});
  std::fill(x.data<uint8_t>(), x.data<uint8_t>() + K, uint8_t{255});
  std::fill(w.data<uint8_t>(), w.data<uint8_t>() + K, uint8_t{255});
  ConvIntegerParams p;
  Tensor y(DType::s32, {1, 1, 1, 1});
  conv_integer(x, w, y, p);
  EXPECT_EQ(y.data<int32_t>()[0], 2147450625);
  // Signed extremes: (-128 - 127) * (127 - -128) = -65025 each.
  Tensor xs(DType::s8, {1, K, 1, 1}), ws(DType::s8, {1, K, 1, 1});
  std::fill(xs.data<int8_t>(), xs.data<int8_t>() + K, int8_t{-128});
  std::fill(ws.data<int8_t>(), ws.data<int8_t>() + K, int8_t{127});
  p.x_zero_point = 127;
  p.w_zero_point = {-128};
  conv_integer(xs, ws, y, p);
  EXPECT_EQ(y.data<int32_t>()[0], -2147450625);
  Tensor x2(DType::u8, {1, K + 1, 1, 1}), w2(DType::u8, {1, K + 1, 1, 1});
  EXPECT_TRUE(raises([&] { conv_integer(x2, w2, y, ConvIntegerParams{}); }, "npukit::conv_integer",
                     "C/groups*KH*KW", "33026"));
}

TEST(QuantLimits, MatMulIntegerAtMaximumDepth) {
  const int64_t K = kMaxInt32Products;
  Tensor a(DType::u8, {1, K}), b(DType::u8, {K, 1});
  std::fill(a.data<uint8_t>(), a.data<uint8_t>() + K, uint8_t{0});
  std::fill(b.data<uint8_t>(), b.data<uint8_t>() + K, uint8_t{255});
  MatMulIntegerParams p;
  p.a_zero_point = 255;  // (0 - 255) * 255 per product
  Tensor y(DType::s32, {1, 1});
  matmul_integer(a, b, y, p);
  EXPECT_EQ(y.data<int32_t>()[0], -2147450625);
  Tensor a2(DType::u8, {1, K + 1}), b2(DType::u8, {K + 1, 1});
  EXPECT_TRUE(raises([&] { matmul_integer(a2, b2, y, p); }, "npukit::matmul_integer", "K"));
}

TEST(QuantLimits, QLinearConvBiasRoom) {
  // K = 1: |acc| <= 65025, so |bias| may be at most 2^31 - 1 - 65025.
  QLinearConvParams p;
  p.has_bias = true;
  const Tensor x = codes<uint8_t>({1, 1, 1, 1}, {255}), w = codes<uint8_t>({1, 1, 1, 1}, {255});
  Tensor y(DType::u8, {1, 1, 1, 1});
  const Tensor ok = Tensor::from<int32_t>({1}, {INT32_MAX - 65025});
  qlinear_conv(x, w, ok, y, p);
  EXPECT_EQ(ints<uint8_t>(y), std::vector<int>{255});
  const Tensor bad = Tensor::from<int32_t>({1}, {INT32_MAX - 65024});
  EXPECT_TRUE(raises([&] { qlinear_conv(x, w, bad, y, p); }, "npukit::qlinear_conv", "B"));
}

TEST(QuantLimits, AveragePoolLargestWindow) {
  // 2048 x 4112 = 8421376 taps of 255 (<= kMaxInt32Taps = 8421504):
  // sum 2147450880 fits int32; ORT's global path: acc = sum - 0, M = 1/N -> 255.
  const int64_t H = 2048, W = 4112;
  Tensor x(DType::u8, {1, 1, H, W});
  std::fill(x.data<uint8_t>(), x.data<uint8_t>() + H * W, uint8_t{255});
  QLinearAvgPoolParams p = avg(Profile::onnxruntime, 1, 1, 0, false);
  Tensor y(DType::u8, {1, 1, 1, 1});
  qlinear_global_average_pool(x, y, p);
  EXPECT_EQ(ints<uint8_t>(y), std::vector<int>{255});
  Tensor big(DType::u8, {1, 1, 1, kMaxInt32Taps + 1});
  EXPECT_TRUE(raises([&] { qlinear_global_average_pool(big, y, p); },
                     "npukit::qlinear_average_pool", "kernel_h*kernel_w"));
}

// ---- documented errors -----------------------------------------------------------

TEST(QuantErrors, BadArguments) {
  const Tensor x = codes<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor y(DType::u8, {1, 1, 1, 1});
  QLinearAvgPoolParams p = avg(Profile::onnxruntime, 2, 1, 0, false);
  p.x_scale = 0.0f;
  EXPECT_TRUE(
      raises([&] { qlinear_average_pool(x, y, p); }, "npukit::qlinear_average_pool", "x_scale"));
  p = avg(Profile::onnxruntime, 2, 1, 0, false);
  p.y_zero_point = 300;
  EXPECT_TRUE(raises([&] { qlinear_average_pool(x, y, p); }, "npukit::qlinear_average_pool",
                     "y_zero_point", "300"));
  Tensor ys8(DType::s8, {1, 1, 1, 1});
  EXPECT_TRUE(
      raises([&] { qlinear_average_pool(x, ys8, avg(Profile::onnxruntime, 2, 1, 0, false)); },
             "npukit::qlinear_average_pool", "y.dtype"));
  QLinearAvgPoolParams q;
  EXPECT_TRUE(raises([&] { apply_profile(q, Profile::bm1684); }, "npukit::qlinear_average_pool",
                     "profile"));
  QuantizeParams qp;
  qp.q.scale = {1.0f, 2.0f};
  qp.q.axis = 0;
  Tensor xf(DType::f32, {3}), yq(DType::u8, {3});
  EXPECT_TRUE(raises([&] { quantize_linear(xf, yq, qp); }, "npukit::quantize_linear", "y_scale"));
  QLinearAddParams ap;
  Tensor a(DType::u8, {2, 3}), b(DType::u8, {4}), c(DType::u8, {2, 3});
  EXPECT_TRUE(raises([&] { qlinear_add(a, b, c, ap); }, "npukit::qlinear_add", "b"));
}

}  // namespace
}  // namespace test_quant_ops
}  // namespace npukit
