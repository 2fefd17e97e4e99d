// GHP-FPGA fixed point: multiplier decomposition and the PPU's two semantics.
// Expected values are hand-computed or taken from the hardware's public
// testbench (wkid-neu/GHP-FPGA-CNN, FPGA_linux/hdl/tb/sim_avgp/ins.txt).
#include <gtest/gtest.h>

#include <cmath>

#include "npukit/ops/ghp_pool.hpp"
#include "npukit/ops/quantized.hpp"
#include "npukit/quant/ghp.hpp"

namespace npukit::ghp {
namespace test_ghp_quant {
namespace {

// M = x_scale / (KH*KW*y_scale) of the six public avgp testbench cases; the
// scales were recomputed from the generator's documented recipe (numpy seed
// 2023, quant_auto) whose X reproduces the published X<k>.hex byte for byte.
struct TbCase {
  double M;
  int64_t m1;
  int n1_field;
};
const TbCase kTestbench[] = {
    {0x1.966bd77b296d4p-1, 53270447, 25},  // 0.7937915170520804, the worked example
    {0x1.1bc01d99c6c41p-1, 37191739, 25}, {0x1.2f8a37c57f8d5p-1, 39785584, 25},
    {0x1.657c260e1acefp-1, 46856268, 25}, {0x1.7fb86611d5cf8p-2, 50294988, 26},
    {0x1.167a27f37bad3p-1, 36500560, 25},
};

TEST(GhpMultiplier, ReproducesTheTestbenchFields) {
  for (const TbCase& c : kTestbench) {
    const Multiplier m = decompose_multiplier(c.M);
    EXPECT_EQ(m.m1, c.m1) << c.M;
    EXPECT_EQ(m.n1_field(), c.n1_field) << c.M;
    EXPECT_NEAR(m.value(), c.M, c.M * 0x1p-25);
  }
  EXPECT_DOUBLE_EQ(0.022650742800256075 / (4 * 0.007133719091750501), kTestbench[0].M);
}

TEST(GhpMultiplier, PowersOfTwo) {
  EXPECT_EQ(decompose_multiplier(0.5).m1, int64_t{1} << 25);
  EXPECT_EQ(decompose_multiplier(0.5).n1, 26);
  EXPECT_EQ(decompose_multiplier(1.0).n1, 25);
  EXPECT_EQ(decompose_multiplier(0.25).n1, 27);
  EXPECT_EQ(decompose_multiplier(0x1p24).n1, 1);  // largest exponent range: M in [2^24, 2^25)
  EXPECT_EQ(decompose_multiplier(0x1p-231).n1, 256);
  EXPECT_EQ(decompose_multiplier(0x1p-231).m1, int64_t{1} << 25);
}

TEST(GhpMultiplier, RoundsHalfToEven) {
  // M * 2^26 = 2^25 + 0.5 -> 2^25 (even); 2^25 + 1.5 -> 2^25 + 2.
  EXPECT_EQ(decompose_multiplier((0x1p25 + 0.5) * 0x1p-26).m1, (int64_t{1} << 25));
  EXPECT_EQ(decompose_multiplier((0x1p25 + 1.5) * 0x1p-26).m1, (int64_t{1} << 25) + 2);
  EXPECT_EQ(decompose_multiplier((0x1p25 + 2.5) * 0x1p-26).m1, (int64_t{1} << 25) + 2);
}

TEST(GhpMultiplier, M1EdgeAt2To26) {
  // M = 1 - 2^-27: M * 2^26 = 2^26 - 0.5 rounds (to even) up to 2^26.
  const double M = 1.0 - 0x1p-27;
  const Multiplier raw = compiler_decompose(M);
  EXPECT_EQ(raw.m1, int64_t{1} << 26);
  EXPECT_EQ(raw.n1, 26);
  const Multiplier fixed = decompose_multiplier(M);
  EXPECT_EQ(fixed.m1, int64_t{1} << 25);
  EXPECT_EQ(fixed.n1, 25);
  EXPECT_EQ(fixed.value(), raw.value());
  try {
    decompose_multiplier(M, M1Edge::reject);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "m1");
    EXPECT_NE(e.value().find("67108864"), std::string::npos);
    EXPECT_NE(e.allowed().find("67108863"), std::string::npos);
  }
  // One step below the tie stays below 2^26.
  EXPECT_EQ(decompose_multiplier(1.0 - 0x1p-26).m1, (int64_t{1} << 26) - 1);
}

TEST(GhpMultiplier, RejectsOutOfRange) {
  for (double bad : std::vector<double>{0.0, -1.0, std::nan(""), HUGE_VAL, 0x1p25, 1e9,
                                        std::nextafter(0x1p-231, 0.0)}) {
    try {
      decompose_multiplier(bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.parameter(), "M") << bad;
      EXPECT_NE(std::string(e.what()).find("decompose_multiplier"), std::string::npos);
    }
  }
  // Just below 2^25: n1 = 1 and 2M rounds to 2^26, which cannot be renormalized.
  EXPECT_THROW(decompose_multiplier(std::nextafter(0x1p25, 0.0)), Error);
  EXPECT_EQ(decompose_multiplier(0x1p25 - 1).m1, (int64_t{1} << 26) - 2);
}

TEST(GhpPostProc, RtlRoundsHalfUpGoldenAwayFromZero) {
  const int64_t half = int64_t{1} << 25;  // M = 0.5 with n1 = 26
  EXPECT_EQ(rtl_round(3, half, 26), 2);   // 1.5 -> 2
  EXPECT_EQ(golden_round(3, half, 26), 2);
  EXPECT_EQ(rtl_round(-3, half, 26), -1);  // -1.5 -> -1 (towards +inf)
  EXPECT_EQ(golden_round(-3, half, 26), -2);
  EXPECT_EQ(rtl_round(-1, half, 26), 0);  // -0.5 -> 0
  EXPECT_EQ(golden_round(-1, half, 26), -1);
  EXPECT_EQ(rtl_round(-4, half, 26), -2);
  EXPECT_EQ(golden_round(-5, half, 26), -3);
}

TEST(GhpPostProc, TenBitRegisterWraps) {
  const int64_t half = int64_t{1} << 25;
  // t = acc for M = 0.5; the register holds [-512, 511].
  EXPECT_EQ(rtl_shift_register(511, half, 26), 511);
  EXPECT_EQ(rtl_shift_register(512, half, 26), -512);
  EXPECT_EQ(rtl_shift_register(600, half, 26), 600 - 1024);
  EXPECT_EQ(rtl_shift_register(1024, half, 26), 0);
  EXPECT_EQ(rtl_shift_register(-513, half, 26), 511);
  EXPECT_EQ(rtl_requantize(511, half, 26, 0), 255);  // 256 clamps
  EXPECT_EQ(rtl_requantize(600, half, 26, 0), 0);    // wrapped to -212
  EXPECT_EQ(golden_requantize(600, half, 26, 0), 255);
  EXPECT_EQ(rtl_requantize(1024, half, 26, 77), 77);
  EXPECT_EQ(golden_requantize(1024, half, 26, 77), 255);
}

TEST(GhpPostProc, ClampsBeforeAndAfterZeroPoint) {
  const int64_t half = int64_t{1} << 25;
  EXPECT_EQ(rtl_requantize(500, half, 26, 10), 255);     // 250 + 10
  EXPECT_EQ(rtl_requantize(-500, half, 26, 200), 0);     // -250 + 200 = -50
  EXPECT_EQ(rtl_requantize(-500, half, 26, 255), 5);     // -250 + 255
  EXPECT_EQ(golden_requantize(-511, half, 26, 255), 0);  // -256 (clamped) + 255 = -1
  EXPECT_EQ(golden_requantize(-520, half, 26, 255), 0);
}

TEST(GhpPostProc, MaxPoolConstantsAreIdentity) {
  for (int v = 0; v <= 255; ++v) {
    EXPECT_EQ(rtl_requantize(v, 1024, 10, 0), v);
    EXPECT_EQ(golden_requantize(v, 1024, 10, 0), v);
  }
}

TEST(GhpPostProc, AccumulatorEntersAs35Bits) {
  EXPECT_EQ(wrap_signed(int64_t{1} << 34, 35), -(int64_t{1} << 34));
  EXPECT_EQ(wrap_signed((int64_t{1} << 34) - 1, 35), (int64_t{1} << 34) - 1);
  EXPECT_EQ(rtl_product(int64_t{1} << 34, 3), -(int64_t{3} << 34));
  EXPECT_EQ(wrap_signed(-1, 10), -1);
  EXPECT_EQ(wrap_signed(1023, 10), -1);
}

TEST(GhpPostProc, ProfilesFillTheRounding) {
  EXPECT_EQ(post_rounding_for(Profile::ghp_rtl), PostRounding::rtl_wrap10_half_up);
  EXPECT_EQ(post_rounding_for(Profile::ghp_golden), PostRounding::golden_half_away);
  EXPECT_THROW(post_rounding_for(Profile::onnxruntime), Error);
  PostProc p{int64_t{1} << 26, 26, 0};
  EXPECT_THROW(check_post_proc(p, "t"), Error);
  p.m1 = 5;
  p.n1 = 65;
  EXPECT_THROW(check_post_proc(p, "t"), Error);
  p.n1 = 64;
  EXPECT_NO_THROW(check_post_proc(p, "t"));
  p.y_zp = 256;
  EXPECT_THROW(check_post_proc(p, "t"), Error);
}

// The accelerator's QLinearAveragePool is qlinear_average_pool under a GHP
// profile (one implementation); these check it through that entry point.
QLinearAvgPoolParams ghp_avg(Profile profile, int64_t k, int64_t stride, int64_t pad, int x_zp,
                             int y_zp) {
  QLinearAvgPoolParams p;
  p.window.kernel_h = p.window.kernel_w = k;
  p.window.stride_h = p.window.stride_w = stride;
  p.window.pad_top = p.window.pad_left = p.window.pad_bottom = p.window.pad_right = pad;
  p.count_include_pad = true;
  p.x_zero_point = x_zp;
  p.y_zero_point = y_zp;
  p.x_scale = 1.0f;
  p.y_scale = 1.0f;
  apply_profile(p, profile);
  return p;
}

TEST(GhpAvgPool, HandComputedWithPaddingHoldingXz) {
  // 1x1x2x2 = [10 20; 30 41], kernel 2x2, stride 2, pad 1, x_zp 5, y_zp 3, M = 1/4.
  Tensor x = Tensor::from<uint8_t>({1, 1, 2, 2}, {10, 20, 30, 41});
  const QLinearAvgPoolParams p = ghp_avg(Profile::ghp_rtl, 2, 2, 1, 5, 3);
  Tensor y(DType::u8, qlinear_average_pool_output_shape(x.shape(), p));
  ASSERT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  qlinear_average_pool(x, y, p);
  // windows hold one element and three X_z: acc = v - 5; (v-5)/4 rounded, + 3.
  // 5/4 = 1.25 -> 1; 15/4 = 3.75 -> 4; 25/4 = 6.25 -> 6; 36/4 = 9.
  EXPECT_EQ(y.to_vector<uint8_t>(), (std::vector<uint8_t>{4, 7, 9, 12}));
}

TEST(GhpAvgPool, RejectsWhatTheEngineLacks) {
  Tensor x(DType::u8, {1, 1, 4, 4});
  Tensor y(DType::u8, {1, 1, 3, 3});
  QLinearAvgPoolParams p = ghp_avg(Profile::ghp_rtl, 2, 1, 0, 0, 0);
  p.window.dilation_h = 2;
  EXPECT_THROW(qlinear_average_pool(x, y, p), Error);
  p.window.dilation_h = 1;
  p.x_zero_point = 256;
  EXPECT_THROW(qlinear_average_pool(x, y, p), Error);
  p.x_zero_point = 0;
  Tensor xf(DType::f32, {1, 1, 4, 4});
  EXPECT_THROW(qlinear_average_pool(xf, y, p), Error);
  EXPECT_NO_THROW(qlinear_average_pool(x, y, p));
}

TEST(GhpMaxPool, PaddingReadsZero) {
  Tensor x = Tensor::from<uint8_t>({1, 1, 2, 2}, {1, 3, 0, 7});
  Window2d w;
  w.kernel_h = w.kernel_w = 2;
  w.pad_top = w.pad_left = 1;
  Tensor y(DType::u8, {1, 1, 2, 2});
  ghp_max_pool_u8(x, y, w);
  EXPECT_EQ(y.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 3, 1, 7}));
}

TEST(GhpAdd, SecondModeRounding) {
  AddParams p;
  p.m1 = p.m2 = int64_t{1} << 25;  // 0.5 each
  p.n = 26;
  EXPECT_EQ(add_requantize(10, 21, p), 16);  // 15.5 -> 16
  p.a_zp = p.b_zp = 20;
  p.c_zp = 100;
  EXPECT_EQ(add_requantize(10, 21, p), 96);  // -4.5 -> -4 (RTL)
  p.rounding = PostRounding::golden_half_away;
  EXPECT_EQ(add_requantize(10, 21, p), 95);  // -4.5 -> -5
  // Two large products exceed 35 bits but not the 37-bit adder: no wrap here.
  p = AddParams{};
  p.m1 = p.m2 = kM1Max;
  p.n = 33;  // (255*2 * (2^26-1)) / 2^33 = 3.98 -> 4
  EXPECT_EQ(add_requantize(255, 255, p), 4);
}

TEST(GhpAdd, SharedExponent) {
  // a/c = 0.75, b/c = 0.375: both doubled until 0.75 reaches 2^26.
  const AddParams p = add_params(Profile::ghp_rtl, 0.75, 0, 0.375, 0, 1.0, 0);
  EXPECT_EQ(p.n, 26);
  EXPECT_EQ(p.m1, 3 * (int64_t{1} << 24));
  EXPECT_EQ(p.m2, 3 * (int64_t{1} << 23));
}

}  // namespace
}  // namespace test_ghp_quant
}  // namespace npukit::ghp
