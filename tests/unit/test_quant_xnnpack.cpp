// XNNPACK-style requantization: hand-computed cases, the rndnu scheme against
// an exact rational rounding, and the Q31 scheme against libgemmlowp-dev.
#include <gemmlowp/fixedpoint/fixedpoint.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "npukit/quant/xnnpack_requantization.hpp"

namespace npukit {
namespace test_quant_xnnpack {
namespace {

constexpr int32_t kWideMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kWideMax = std::numeric_limits<int32_t>::max();

TEST(Xnnpack, MultipliersHandCases) {
  XnnpackMantissaMultiplier m = xnnpack_mantissa_multiplier(0.5f);
  EXPECT_EQ(m.mantissa, 1 << 23);
  EXPECT_EQ(m.shift, 24);
  m = xnnpack_mantissa_multiplier(0.75f);
  EXPECT_EQ(m.mantissa, 12582912);  // 0.75 * 2^24
  EXPECT_EQ(m.shift, 24);
  m = xnnpack_mantissa_multiplier(std::ldexp(1.0f, -32));
  EXPECT_EQ(m.mantissa, 1 << 23);
  EXPECT_EQ(m.shift, 55);
  m = xnnpack_mantissa_multiplier(std::nextafter(1.0f, 0.0f));  // 1 - 2^-24
  EXPECT_EQ(m.mantissa, (1 << 24) - 1);
  EXPECT_EQ(m.shift, 24);
  const XnnpackQ31Multiplier q = xnnpack_q31_multiplier(std::nextafter(1.0f, 0.0f));
  EXPECT_EQ(q.multiplier, 0x7FFFFF80);
  EXPECT_EQ(q.right_shift, 0);
  const XnnpackQ31Multiplier r = xnnpack_q31_multiplier(std::ldexp(1.0f, -32));
  EXPECT_EQ(r.multiplier, 0x40000000);
  EXPECT_EQ(r.right_shift, 31);
}

TEST(Xnnpack, MultipliersAreExact) {
  std::mt19937 rng(2001);
  std::uniform_real_distribution<float> log2s(-32.0f, -0.0001f);
  for (int i = 0; i < 100000; ++i) {
    const float s = std::exp2(log2s(rng));
    const XnnpackMantissaMultiplier m = xnnpack_mantissa_multiplier(s);
    ASSERT_EQ(std::ldexp(static_cast<double>(m.mantissa), -m.shift), static_cast<double>(s));
    const XnnpackQ31Multiplier q = xnnpack_q31_multiplier(s);
    ASSERT_EQ(std::ldexp(static_cast<double>(q.multiplier), -31 - q.right_shift),
              static_cast<double>(s));
  }
}

TEST(Xnnpack, ScaleOutOfRangeIsAnError) {
  for (float bad : {1.0f, 2.0f, std::ldexp(1.0f, -33), 0.0f, -0.5f, std::nanf("")}) {
    try {
      xnnpack_mantissa_multiplier(bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.parameter(), "scale");
      EXPECT_NE(e.allowed().find("[2^-32, 1)"), std::string::npos);
    }
    EXPECT_THROW(xnnpack_q31_multiplier(bad), Error);
  }
  EXPECT_NO_THROW(xnnpack_check_fp32_scale(255.0f));
  EXPECT_THROW(xnnpack_check_fp32_scale(256.0f), Error);
  EXPECT_THROW(xnnpack_check_fp32_scale(std::ldexp(1.0f, -33)), Error);
}

TEST(Xnnpack, SchemesDifferWhereExpected) {
  const auto rndnu = [](int32_t acc, float s) {
    return xnnpack_requantize_rndnu(acc, xnnpack_mantissa_multiplier(s), 0, kWideMin, kWideMax);
  };
  const auto q31 = [](int32_t acc, float s) {
    return xnnpack_requantize_gemmlowp(acc, xnnpack_q31_multiplier(s), 0, kWideMin, kWideMax);
  };
  const auto fp32 = [](int32_t acc, float s) {
    return xnnpack_requantize_fp32(acc, s, 0, kWideMin, kWideMax);
  };
  // Ties: rndnu goes up, fp32 to even, gemmlowp's double rounding away from zero at the end.
  EXPECT_EQ(rndnu(3, 0.5f), 2);
  EXPECT_EQ(rndnu(-3, 0.5f), -1);
  EXPECT_EQ(fp32(-3, 0.5f), -2);
  EXPECT_EQ(q31(-3, 0.5f), -1);    // SRDHM(-3, 2^30) = round_up(-1.5) = -1, no second shift
  EXPECT_EQ(rndnu(10, 0.25f), 3);  // 2.5
  EXPECT_EQ(fp32(10, 0.25f), 2);
  EXPECT_EQ(q31(10, 0.25f), 3);  // SRDHM -> 5, then 5/2 -> 3
  // Double rounding: 5 * 0.25 = 1.25 -> SRDHM(5, 2^30) = 3 -> RoundingDivideByPOT(3, 1) = 2.
  EXPECT_EQ(q31(5, 0.25f), 2);
  EXPECT_EQ(rndnu(5, 0.25f), 1);
  EXPECT_EQ(fp32(5, 0.25f), 1);
  // fp32 rounds the accumulator to float first: 2^24 + 1 becomes 2^24.
  EXPECT_EQ(fp32((1 << 24) + 1, 0.5f), 1 << 23);
  EXPECT_EQ(rndnu((1 << 24) + 1, 0.5f), (1 << 23) + 1);  // exact 8388608.5 rounds up
}

TEST(Xnnpack, ClampAndZeroPoint) {
  const XnnpackMantissaMultiplier m = xnnpack_mantissa_multiplier(0.5f);
  EXPECT_EQ(xnnpack_requantize_rndnu(1000, m, 3, -128, 127), 127);
  EXPECT_EQ(xnnpack_requantize_rndnu(-1000, m, 3, -128, 127), -128);
  EXPECT_EQ(xnnpack_requantize_rndnu(9, m, 3, -128, 127), 8);      // 4.5 -> 5, + 3
  EXPECT_EQ(xnnpack_requantize_rndnu(-9, m, 100, 0, 255), 96);     // -4.5 -> -4, + 100
  EXPECT_EQ(xnnpack_requantize_fp32(-9, 0.5f, 100, 0, 255), 96);   // -4.5 -> -4 (even)
  EXPECT_EQ(xnnpack_requantize_fp32(-11, 0.5f, 100, 0, 255), 94);  // -5.5 -> -6 (even)
  EXPECT_EQ(xnnpack_requantize_fp32(kWideMax, 0.9f, 0, 0, 255), 255);
  EXPECT_EQ(xnnpack_requantize_gemmlowp(kWideMin, xnnpack_q31_multiplier(0.9f), -5, -128, 127),
            -128);
}

TEST(Xnnpack, RndnuIsExactNearestTiesUp) {
  std::mt19937_64 rng(2002);
  std::uniform_real_distribution<float> log2s(-32.0f, -0.0001f);
  for (int i = 0; i < 1'000'000; ++i) {
    const float s = std::exp2(log2s(rng));
    const XnnpackMantissaMultiplier m = xnnpack_mantissa_multiplier(s);
    const auto acc = static_cast<int32_t>(static_cast<uint32_t>(rng())) >> (rng() % 32);
    // Oracle: the exact rational acc * mantissa / 2^shift rounded half up by div_round.
    const int64_t want =
        div_round(static_cast<int64_t>(acc) * m.mantissa, int64_t{1} << m.shift, Rounding::half_up);
    ASSERT_EQ(xnnpack_requantize_rndnu(acc, m, 0, kWideMin, kWideMax), want)
        << "acc=" << acc << " scale=" << s;
  }
}

TEST(Xnnpack, Q31MatchesGemmlowpHeader) {
  std::mt19937_64 rng(2003);
  std::uniform_real_distribution<float> log2s(-32.0f, -0.0001f);
  for (int i = 0; i < 1'000'000; ++i) {
    const float s = std::exp2(log2s(rng));
    const XnnpackQ31Multiplier m = xnnpack_q31_multiplier(s);
    const auto acc = static_cast<int32_t>(static_cast<uint32_t>(rng())) >> (rng() % 32);
    const int32_t want = gemmlowp::RoundingDivideByPOT(
        gemmlowp::SaturatingRoundingDoublingHighMul(acc, m.multiplier), m.right_shift);
    ASSERT_EQ(xnnpack_requantize_gemmlowp(acc, m, 0, kWideMin, kWideMax), want)
        << "acc=" << acc << " scale=" << s;
  }
}

TEST(Xnnpack, Fp32MatchesFloatArithmetic) {
  std::mt19937_64 rng(2004);
  std::uniform_real_distribution<float> log2s(-32.0f, 7.9f);
  for (int i = 0; i < 1'000'000; ++i) {
    const float s = std::exp2(log2s(rng));
    const auto acc = static_cast<int32_t>(static_cast<uint32_t>(rng())) >> (rng() % 32);
    // std::nearbyint rounds ties to even in the default environment.
    const float prod = static_cast<float>(acc) * s;
    const float clamped = std::fmin(std::fmax(prod, -128.0f - 7.0f), 127.0f - 7.0f);
    const auto want = static_cast<int32_t>(std::nearbyint(clamped)) + 7;
    ASSERT_EQ(xnnpack_requantize_fp32(acc, s, 7, -128, 127), want)
        << "acc=" << acc << " scale=" << s;
  }
}

}  // namespace
}  // namespace test_quant_xnnpack
}  // namespace npukit
