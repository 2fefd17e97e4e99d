// MRT / CVM integer math (seed 001): cvm_float, cvm_right_shift and the
// calibration formulas, all against hand-computed values and CVM's documented
// int32 formula.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "npukit/quant/cvm.hpp"
#include "npukit/quant/mrt_quant.hpp"

namespace npukit {
namespace test_quant_mrt {
namespace {

TEST(CvmFloat, HandComputed) {
  struct Case {
    double r;
    int bits;
    int64_t frac;
    int exp;
  };
  const Case cases[] = {
      {0.0, 24, 0, 0},       {0.5, 8, 1, -1},  // [1, 2) at once and integral
      {3.0, 24, 3, 0},                         // 1.5 * 2^1 -> one doubling -> 3
      {1000.0, 24, 125, 3},                    // 1000 = 125 * 2^3
      {0.1, 8, 102, -10},                      // 1.6 * 2^-4, six doublings: 102.4 -> 102
      {1.99999, 8, 127, -6},                   // 127.99936 rounds to 128, clipped to 2^7 - 1
      {1.25, 3, 2, -1},  // one doubling: 2.5, Python round() -> 2 (ties to even)
      {1.75, 3, 3, -1},  // 3.5 -> 4, clipped to 3
      {1.5, 1, 1, 0},    // bits 1: no doubling, round(1.5) = 2, clipped to max(0, 1) = 1
      {0.75, 1, 1, -1},      {std::ldexp(1.0, -1074), 24, 1, -1074},  // the smallest subnormal
  };
  for (const Case& c : cases) {
    const CvmFloat f = cvm_float(c.r, c.bits);
    EXPECT_EQ(f.frac, c.frac) << c.r << " bits " << c.bits;
    EXPECT_EQ(f.exp, c.exp) << c.r << " bits " << c.bits;
  }
  EXPECT_DOUBLE_EQ(cvm_float(0.1, 8).value(), 102.0 / 1024.0);
}

TEST(CvmFloat, RelativeErrorWithinBudget) {
  // With the full budget the mantissa has bits-1 significant bits (unless clipped).
  for (double r = 1e-6; r < 1e6; r *= 1.37) {
    const CvmFloat f = cvm_float(r, 16);
    ASSERT_LE(f.frac, (1 << 15) - 1);
    ASSERT_LE(std::fabs(f.value() - r) / r, std::ldexp(1.0, -14)) << r;
  }
}

TEST(CvmFloat, Errors) {
  for (double bad : {-0.5, std::nan(""), double{INFINITY}}) {
    try {
      cvm_float(bad, 8);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.parameter(), "r");
    }
  }
  for (int bad : {0, 33}) {
    try {
      cvm_float(1.0, bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.parameter(), "bits");
      EXPECT_EQ(e.allowed(), "[1, 32]");
    }
  }
}

// CVM's formula on int32 as its documentation states it.
int64_t cvm_doc_right_shift(int32_t x, int b, int precision) {
  const int32_t t = ((x >> (b - 1)) + 1) >> 1;  // callers avoid x = INT32_MAX with b = 1
  const int64_t a = (int64_t{1} << (precision - 1)) - 1;
  return std::clamp<int64_t>(t, -a, a);
}

TEST(CvmRightShift, HandComputed) {
  EXPECT_EQ(cvm_right_shift(5, 1, 8), 3);
  EXPECT_EQ(cvm_right_shift(-5, 1, 8), -2);  // -2.5 -> -2 (ties toward +inf)
  EXPECT_EQ(cvm_right_shift(-6, 2, 8), -1);  // -1.5 -> -1
  EXPECT_EQ(cvm_right_shift(1000, 2, 8), 127);
  EXPECT_EQ(cvm_right_shift(-1000, 2, 8), -127);  // symmetric clip: never -128
  EXPECT_EQ(cvm_right_shift(-2, 1, 1), 0);        // precision 1 clips to [0, 0]
  EXPECT_EQ(cvm_right_shift(std::numeric_limits<int32_t>::min(), 32, 32), 0);  // -0.5 -> 0
  EXPECT_EQ(cvm_right_shift(std::numeric_limits<int32_t>::max(), 1, 32),
            1 << 30);  // exact (CVM wraps)
  EXPECT_EQ(cvm_clip(std::numeric_limits<int32_t>::min(), 32),
            -std::numeric_limits<int32_t>::max());
  EXPECT_EQ(cvm_left_shift(3, 2, 8), 12);
  EXPECT_EQ(cvm_left_shift(-100, 1, 8), -127);
  EXPECT_EQ(cvm_left_shift(int64_t{1} << 40, 32, 32), std::numeric_limits<int32_t>::max());
}

TEST(CvmRightShift, MatchesCvmFormulaExhaustively) {
  int64_t n = 0;
  for (int precision : {1, 2, 8, 16, 31, 32})
    for (int b = 1; b <= 32; ++b) {
      for (int32_t x = -70000; x <= 70000; x += (b < 4 ? 1 : 7), ++n)
        ASSERT_EQ(cvm_right_shift(x, b, precision), cvm_doc_right_shift(x, b, precision))
            << "x=" << x << " shift=" << b << " prec=" << precision;
      for (int32_t x :
           {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::min() + 1,
            std::numeric_limits<int32_t>::max() - 1})
        ASSERT_EQ(cvm_right_shift(x, b, precision), cvm_doc_right_shift(x, b, precision));
    }
  EXPECT_GT(n, 1'000'000);
}

TEST(CvmRightShift, Errors) {
  for (int bad : {0, 33}) {
    try {
      cvm_right_shift(1, bad, 8);
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.parameter(), "shift");
      EXPECT_EQ(e.value(), std::to_string(bad));
      EXPECT_EQ(e.allowed(), "[1, 32]");
    }
  }
  for (int bad : {0, 33}) {
    try {
      cvm_right_shift(1, 1, bad);
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.parameter(), "precision");
    }
  }
  EXPECT_THROW(cvm_left_shift(1, 0, 8), Error);
}

TEST(CvmRequantize, MultiplyThenShift) {
  const CvmFloat f = cvm_float(0.1, 8);        // 102 * 2^-10
  EXPECT_EQ(cvm_requantize(100, f, 8), 10);    // 10200 / 1024 = 9.96 -> 10
  EXPECT_EQ(cvm_requantize(-5, f, 8), 0);      // -510 / 1024 = -0.498 -> 0
  EXPECT_EQ(cvm_requantize(2000, f, 8), 127);  // 199.2 clipped
  EXPECT_EQ(cvm_requantize(7, {3, 0}, 8), 21);
  EXPECT_EQ(cvm_requantize(7, {3, 2}, 8), 84);
  EXPECT_EQ(cvm_requantize(-7, {3, 3}, 8), -127);
}

TEST(CvmRequantize, ShiftBeyondCvmFieldIsAnError) {
  // CVM's shift_bit field holds 1..32: a factor below 2^-32 cannot be applied.
  try {
    cvm_requantize(5, {1, -40}, 8);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "shift");
    EXPECT_EQ(e.value(), "40");
    EXPECT_EQ(e.allowed(), "[1, 32]");
  }
  EXPECT_THROW(cvm_requantize(5, {1, 33}, 8), Error);
  EXPECT_EQ(cvm_requantize(int64_t{1} << 31, {1, -32}, 8), 1);  // 0.5 rounds up
  const MrtQuantParams from{MrtScheme::symmetric, 8, -1, {1e12}, {0.0}};
  const MrtQuantParams to{MrtScheme::symmetric, 8, -1, {1.0}, {0.0}};
  EXPECT_THROW(mrt_requantize(Tensor::from<int32_t>({1}, {1}), from, to), Error);
}

Tensor f32(const Shape& s, const std::vector<float>& v) {
  return Tensor::from<float>(s, v);
}

TEST(MrtQuant, SymmetricLayerWise) {
  const Tensor x = f32({4}, {-2.0f, 0.5f, 1.0f, 0.3f});
  const MrtQuantParams p = mrt_calibrate(x, MrtScheme::symmetric, 8);
  ASSERT_EQ(p.sc.size(), 1u);
  EXPECT_DOUBLE_EQ(p.sc[0], 63.5);  // 127 / 2
  EXPECT_EQ(p.q_min(), -127);
  // floor(63.5 * [-2, 0.5, 1, 0.3]) = floor([-127, 31.75, 63.5, 19.05])
  EXPECT_EQ(mrt_quantize(x, p).to_vector<int32_t>(), (std::vector<int32_t>{-127, 31, 63, 19}));
  const Tensor q = Tensor::from<int32_t>({2}, {31, -127});
  EXPECT_EQ(mrt_dequantize(q, p).to_vector<float>(),
            (std::vector<float>{static_cast<float>(31 / 63.5), -2.0f}));
  // Data outside the calibrated range is clipped to the CVM range.
  EXPECT_EQ(mrt_quantize_value(-5.0, 63.5, 0, MrtScheme::symmetric, 8), -127);
  EXPECT_EQ(mrt_quantize_value(5.0, 63.5, 0, MrtScheme::symmetric, 8), 127);
}

TEST(MrtQuant, SeedAffineAsWritten) {
  const Tensor x = f32({3}, {-1.0f, 0.0f, 3.0f});
  const MrtQuantParams p = mrt_calibrate(x, MrtScheme::seed_affine, 4);
  EXPECT_DOUBLE_EQ(p.sc[0], 3.75);   // 15 / 4
  EXPECT_DOUBLE_EQ(p.zp[0], -3.75);  // min * 15 / 4
  // floor(3.75 X + 3.75) = floor([0, 3.75, 15])
  EXPECT_EQ(mrt_quantize(x, p).to_vector<int32_t>(), (std::vector<int32_t>{0, 3, 15}));
  // (Xq + zp) / sc
  EXPECT_EQ(mrt_dequantize(Tensor::from<int32_t>({3}, {0, 3, 15}), p).to_vector<float>(),
            (std::vector<float>{-1.0f, -0.2f, 3.0f}));
}

TEST(MrtQuant, ZeroPointLayerWise) {
  const Tensor x = f32({3}, {-1.0f, 0.0f, 3.0f});
  const MrtQuantParams p = mrt_calibrate(x, MrtScheme::zero_point, 4);
  EXPECT_DOUBLE_EQ(p.sc[0], 3.75);
  EXPECT_DOUBLE_EQ(p.zp[0], 4.0);  // ceil(3.75)
  // floor(3.75 X + 4) = floor([0.25, 4, 15.25])
  EXPECT_EQ(mrt_quantize(x, p).to_vector<int32_t>(), (std::vector<int32_t>{0, 4, 15}));
  EXPECT_EQ(
      mrt_dequantize(Tensor::from<uint8_t>({3}, {0, 4, 15}), p).to_vector<float>(),
      (std::vector<float>{static_cast<float>(-4 / 3.75), 0.0f, static_cast<float>(11 / 3.75)}));
}

TEST(MrtQuant, ZeroPointChannelWise) {
  const Tensor x = f32({2, 3}, {-1.0f, 0.0f, 3.0f, 0.0f, 1.0f, 2.0f});
  const MrtQuantParams p = mrt_calibrate(x, MrtScheme::zero_point, 2, 0);
  ASSERT_EQ(p.sc.size(), 2u);
  EXPECT_DOUBLE_EQ(p.sc[0], 0.75);  // 3 / 4
  EXPECT_DOUBLE_EQ(p.zp[0], 1.0);   // ceil(0.75)
  EXPECT_DOUBLE_EQ(p.sc[1], 1.5);   // 3 / 2
  EXPECT_DOUBLE_EQ(p.zp[1], 0.0);
  EXPECT_EQ(mrt_quantize(x, p).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 3, 0, 1, 3}));
  // Along axis 1 every column is its own channel.
  const MrtQuantParams q = mrt_calibrate(x, MrtScheme::symmetric, 3, 1);
  ASSERT_EQ(q.sc.size(), 3u);
  EXPECT_DOUBLE_EQ(q.sc[0], 3.0);  // (2^2 - 1) / 1
  EXPECT_DOUBLE_EQ(q.sc[2], 1.0);  // 3 / 3
  EXPECT_EQ(mrt_quantize(x, q).to_vector<int32_t>(), (std::vector<int32_t>{-3, 0, 3, 0, 3, 2}));
}

TEST(MrtQuant, StridedViewUsesLogicalOrder) {
  Tensor x(DType::f32, {1, 2, 1, 2}, Layout::nhwc);
  const std::vector<float> v = {-1.0f, 1.0f, 0.5f, -0.25f};  // logical NCHW order
  int k = 0;
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t w = 0; w < 2; ++w) x.view().at<float>(0, c, 0, w) = v[static_cast<size_t>(k++)];
  const MrtQuantParams p = mrt_calibrate(x, MrtScheme::symmetric, 8, 1);
  EXPECT_DOUBLE_EQ(p.sc[0], 127.0);
  EXPECT_DOUBLE_EQ(p.sc[1], 254.0);
  EXPECT_EQ(mrt_quantize(x, p).to_vector<int32_t>(), (std::vector<int32_t>{-127, 127, 127, -64}));
}

TEST(MrtQuant, RequantizeThroughCvm) {
  const MrtQuantParams from{MrtScheme::symmetric, 8, -1, {2.0}, {0.0}};
  const MrtQuantParams to{MrtScheme::symmetric, 4, -1, {0.5}, {0.0}};  // ratio 1/4 = 1 * 2^-2
  const Tensor q = Tensor::from<int32_t>({4}, {-6, -5, 6, 100});
  // cvm_right_shift(x, 2, 4): -1.5 -> -1, -1.25 -> -1, 1.5 -> 2, 25 -> clipped to 7
  EXPECT_EQ(mrt_requantize(q, from, to).to_vector<int32_t>(), (std::vector<int32_t>{-1, -1, 2, 7}));
  // To a zero-point target (range [0, 15], zp 1): round(q / 4) ties up, + 1, clip:
  // -1.5 -> -1 + 1 = 0, -1.25 -> -1 + 1 = 0, 1.5 -> 2 + 1 = 3, 25 + 1 -> 15.
  const MrtQuantParams zp{MrtScheme::zero_point, 4, -1, {0.5}, {1.0}};
  EXPECT_EQ(mrt_requantize(q, from, zp).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 3, 15}));
  // Back from zp (sc 0.5, zp 1) to symmetric sc 2: (q - 1) * 4, clip to +-127.
  const Tensor qz = Tensor::from<int32_t>({3}, {0, 1, 15});
  EXPECT_EQ(mrt_requantize(qz, zp, from).to_vector<int32_t>(), (std::vector<int32_t>{-4, 0, 56}));
  const MrtQuantParams seed{MrtScheme::seed_affine, 4, -1, {0.5}, {0.25}};
  EXPECT_THROW(mrt_requantize(q, from, seed), Error);
}

TEST(MrtQuant, Errors) {
  const Tensor x = f32({3}, {-1.0f, 0.0f, 3.0f});
  for (int bad : {1, 17}) {
    try {
      mrt_calibrate(x, MrtScheme::symmetric, bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.parameter(), "precision");
      EXPECT_EQ(e.allowed(), "[2, 16]");
    }
  }
  EXPECT_NO_THROW(mrt_calibrate(x, MrtScheme::zero_point, 16));
  EXPECT_THROW(mrt_calibrate(f32({2}, {0.0f, 0.0f}), MrtScheme::symmetric, 8), Error);
  EXPECT_THROW(mrt_calibrate(f32({2}, {1.0f, 1.0f}), MrtScheme::zero_point, 8), Error);
  EXPECT_THROW(mrt_calibrate(x, MrtScheme::symmetric, 8, 1), Error);  // axis out of range
  EXPECT_THROW(mrt_calibrate(Tensor::from<int32_t>({1}, {1}), MrtScheme::symmetric, 8), Error);
  const MrtQuantParams wrong{MrtScheme::symmetric, 8, -1, {1.0, 2.0}, {0.0, 0.0}};
  EXPECT_THROW(mrt_quantize(x, wrong), Error);
  EXPECT_EQ(mrt_scheme_from_name("seed_affine"), MrtScheme::seed_affine);
  EXPECT_THROW(mrt_scheme_from_name("asymmetric"), Error);
}

}  // namespace
}  // namespace test_quant_mrt
}  // namespace npukit
