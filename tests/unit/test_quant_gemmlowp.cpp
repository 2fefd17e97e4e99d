// gemmlowp / TFLite fixed point against Debian's libgemmlowp-dev header
// (fixedpoint/fixedpoint.h, scalar int32 overloads), on millions of sampled
// inputs, plus hand-computed TFLite QuantizeMultiplier and single-rounding cases.
#include <gemmlowp/fixedpoint/fixedpoint.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "npukit/quant/gemmlowp.hpp"
#include "npukit/quant/tflite_multiplier.hpp"

namespace npukit {
namespace test_quant_gemmlowp {
namespace {

constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();

// Values with every magnitude: a random int32 shifted right by 0..31, random
// sign, and a share of edge values (limits, powers of two +-1).
int32_t sample_int32(std::mt19937_64& rng) {
  const uint64_t r = rng();
  switch (r % 8) {
    case 0: {
      static const int32_t edges[] = {0,
                                      1,
                                      -1,
                                      2,
                                      -2,
                                      kMax32,
                                      kMin32,
                                      kMax32 - 1,
                                      kMin32 + 1,
                                      1 << 30,
                                      -(1 << 30),
                                      (1 << 30) + 1,
                                      -(1 << 30) - 1};
      return edges[(r >> 8) % (sizeof edges / sizeof edges[0])];
    }
    case 1: {
      const int k = static_cast<int>((r >> 8) % 31);
      const int32_t p = int32_t{1} << k;
      return static_cast<int32_t>((r >> 16) & 1 ? p : -p) + static_cast<int32_t>((r >> 20) % 3) - 1;
    }
    default:
      return static_cast<int32_t>(static_cast<uint32_t>(r >> 32)) >> ((r >> 3) % 32);
  }
}

TEST(Gemmlowp, SaturatingRoundingDoublingHighMulMatchesHeader) {
  std::mt19937_64 rng(1001);  // seed for reproduction
  constexpr int kSamples = 4'000'000;
  int ties = 0;
  for (int i = 0; i < kSamples; ++i) {
    const int32_t a = sample_int32(rng), b = sample_int32(rng);
    const int32_t want = gemmlowp::SaturatingRoundingDoublingHighMul(a, b);
    ASSERT_EQ(saturating_rounding_doubling_high_mul(a, b), want) << "a=" << a << " b=" << b;
    ties += (static_cast<int64_t>(a) * b) % (int64_t{1} << 31) == (int64_t{1} << 30) ||
            (static_cast<int64_t>(a) * b) % (int64_t{1} << 31) == -(int64_t{1} << 30);
  }
  EXPECT_GT(ties, 1000);  // the sample really exercises the tie rule
}

TEST(Gemmlowp, SaturatingRoundingDoublingHighMulHandCases) {
  EXPECT_EQ(saturating_rounding_doubling_high_mul(kMin32, kMin32), kMax32);     // saturation
  EXPECT_EQ(saturating_rounding_doubling_high_mul(1 << 30, 1 << 30), 1 << 29);  // 0.5 * 0.5
  EXPECT_EQ(saturating_rounding_doubling_high_mul(1, 1 << 30), 1);              // 0.5 -> 1
  EXPECT_EQ(saturating_rounding_doubling_high_mul(-1, 1 << 30), 0);   // -0.5 -> 0 (tie up)
  EXPECT_EQ(saturating_rounding_doubling_high_mul(-3, 1 << 30), -1);  // -1.5 -> -1
  EXPECT_EQ(saturating_rounding_doubling_high_mul(kMin32, kMax32), -kMax32);
}

TEST(Gemmlowp, RoundingDivideByPotMatchesHeader) {
  std::mt19937_64 rng(1002);
  for (int i = 0; i < 4'000'000; ++i) {
    const int32_t x = sample_int32(rng);
    const int e = static_cast<int>(rng() % 32);
    ASSERT_EQ(rounding_divide_by_pot(x, e), gemmlowp::RoundingDivideByPOT(x, e))
        << "x=" << x << " exponent=" << e;
  }
  for (int e = 0; e <= 31; ++e)
    for (int32_t x : {kMin32, kMin32 + 1, kMax32, kMax32 - 1, 0, 1, -1})
      ASSERT_EQ(rounding_divide_by_pot(x, e), gemmlowp::RoundingDivideByPOT(x, e));
  EXPECT_EQ(rounding_divide_by_pot(-3, 1), -2);  // -1.5: ties away from zero
  EXPECT_EQ(rounding_divide_by_pot(3, 1), 2);
  EXPECT_EQ(rounding_divide_by_pot(-5, 2), -1);  // -1.25
}

TEST(Gemmlowp, RoundingDivideByPotRejectsExponent) {
  for (int bad : {-1, 32}) {
    try {
      rounding_divide_by_pot(1, bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.parameter(), "exponent");
      EXPECT_EQ(e.allowed(), "[0, 31]");
    }
  }
}

// TFLite's double-rounding MultiplyByQuantizedMultiplier composed from the
// gemmlowp header (exactly how TFLite's common.h builds it).
int32_t gemmlowp_multiply(int32_t x, int32_t m, int shift) {
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  return gemmlowp::RoundingDivideByPOT(
      gemmlowp::SaturatingRoundingDoublingHighMul(x * (1 << left), m), right);
}

TEST(TfliteMultiplier, DoubleRoundingMatchesGemmlowpComposition) {
  std::mt19937_64 rng(1003);
  std::uniform_real_distribution<double> log2m(-32.0, 12.0);
  int checked = 0, overflow_rejected = 0;
  for (int i = 0; i < 2'000'000; ++i) {
    const QuantizedMultiplier q = quantize_multiplier(std::exp2(log2m(rng)));
    const int32_t x = sample_int32(rng);
    if (q.shift > 30) continue;
    const int64_t shifted = static_cast<int64_t>(x) << (q.shift > 0 ? q.shift : 0);
    if (shifted != static_cast<int32_t>(shifted)) {
      // TFLite overflows here; npukit refuses. Exceptions are slow: check a sample.
      if (overflow_rejected++ < 2000) {
        EXPECT_THROW(multiply_by_quantized_multiplier(x, q), Error);
      }
      continue;
    }
    ASSERT_EQ(multiply_by_quantized_multiplier(x, q), gemmlowp_multiply(x, q.multiplier, q.shift))
        << "x=" << x << " m=" << q.multiplier << " shift=" << q.shift;
    ++checked;
  }
  EXPECT_GT(checked, 1'500'000);
  EXPECT_GT(overflow_rejected, 0);
}

TEST(TfliteMultiplier, QuantizeMultiplierHandCases) {
  struct Case {
    double M;
    int32_t m;
    int shift;
  };
  const Case cases[] = {
      {0.0, 0, 0},
      {0.5, 1 << 30, 0},
      {1.0, 1 << 30, 1},
      {0.75, 1610612736, 0},
      {0.1, 1717986918, -3},                           // 0.8 * 2^31 = 1717986918.4
      {0.5 + std::ldexp(1.0, -32), (1 << 30) + 1, 0},  // q * 2^31 = 2^30 + 0.5: ties away
      {1.0 - std::ldexp(1.0, -40), 1 << 30, 1},        // q * 2^31 rounds to 2^31: halved, shift + 1
      {std::ldexp(1.0, -32), 1 << 30, -31},            // smallest kept shift
      {std::ldexp(1.0, -33), 0, 0},                    // shift -32: flushed to zero
      {std::ldexp(1.0, -32) * (1.0 - std::ldexp(1.0, -40)), 1 << 30, -31},  // rounds up into range
      {std::ldexp(1.0, 30), 1 << 30, 31},  // double rounding keeps shift 31
  };
  for (const Case& c : cases) {
    const QuantizedMultiplier q = quantize_multiplier(c.M);
    EXPECT_EQ(q.multiplier, c.m) << c.M;
    EXPECT_EQ(q.shift, c.shift) << c.M;
  }
  // Single rounding saturates a shift above 30 instead.
  const QuantizedMultiplier s =
      quantize_multiplier(std::ldexp(1.0, 30), TfliteRounding::single_rounding);
  EXPECT_EQ(s.multiplier, kMax32);
  EXPECT_EQ(s.shift, 30);
  const QuantizedMultiplier t = quantize_multiplier(0.1, TfliteRounding::single_rounding);
  EXPECT_EQ(t.multiplier, 1717986918);
  EXPECT_EQ(t.shift, -3);
}

TEST(TfliteMultiplier, QuantizeMultiplierIsClosest31BitMantissa) {
  std::mt19937_64 rng(1004);
  std::uniform_real_distribution<double> log2m(-31.0, 29.0);
  for (int i = 0; i < 200000; ++i) {
    const double M = std::exp2(log2m(rng));
    const QuantizedMultiplier q = quantize_multiplier(M);
    ASSERT_GE(q.multiplier, 1 << 30);
    // |M - m * 2^(shift-31)| <= 2^(shift-32): m is the nearest 31-bit mantissa.
    const double err = std::fabs(M - std::ldexp(static_cast<double>(q.multiplier), q.shift - 31));
    ASSERT_LE(err, std::ldexp(1.0, q.shift - 32)) << M;
  }
}

TEST(TfliteMultiplier, QuantizeMultiplierErrors) {
  for (double bad : {-1.0, std::nan(""), double{INFINITY}}) {
    try {
      quantize_multiplier(bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.parameter(), "multiplier");
    }
  }
  // The checked form refuses what TFLite would flush or saturate.
  try {
    quantize_multiplier_checked(1e-12);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "multiplier");
    EXPECT_NE(e.value().find("1e-12"), std::string::npos);
    EXPECT_NE(e.value().find("shift -39"), std::string::npos);
    EXPECT_NE(e.allowed().find("[-31, 30]"), std::string::npos);
  }
  try {
    quantize_multiplier_checked(std::ldexp(1.0, 30));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.value().find("shift 31"), std::string::npos);
  }
  EXPECT_EQ(quantize_multiplier_checked(std::ldexp(1.0, -32)).shift, -31);
  EXPECT_EQ(quantize_multiplier_checked(0.0).multiplier, 0);
}

// Single rounding: y = floor((x*m + 2^(30-shift)) / 2^(31-shift)). Hand-computed.
TEST(TfliteMultiplier, SingleRoundingHandCases) {
  const auto single = [](int32_t x, int32_t m, int shift) {
    return multiply_by_quantized_multiplier_single_rounding(x, {m, shift});
  };
  const auto twice = [](int32_t x, int32_t m, int shift) {
    return multiply_by_quantized_multiplier(x, {m, shift});
  };
  EXPECT_EQ(single(3, 1 << 30, 0), 2);      // 1.5 -> 2
  EXPECT_EQ(single(-3, 1 << 30, 0), -1);    // -1.5 -> -1 (ties toward +inf)
  EXPECT_EQ(single(-1, 1 << 30, 0), 0);     // -0.5 -> 0
  EXPECT_EQ(single(5, 1610612736, -2), 1);  // 5 * 0.1875 = 0.9375
  // x = 5, M = 0.25: exact 1.25. One rounding gives 1; gemmlowp's two roundings
  // give round(2.5) = 3, then round(3 / 2) = 2.
  EXPECT_EQ(single(5, 1 << 30, -1), 1);
  EXPECT_EQ(twice(5, 1 << 30, -1), 2);
  EXPECT_EQ(single(1, 1 << 30, -1), 0);  // 0.25
  EXPECT_EQ(twice(1, 1 << 30, -1), 1);   // round(0.5) = 1, round(1/2) = 1
  // Extreme shifts: -31 (total shift 62) and 30 (total shift 1).
  EXPECT_EQ(single(kMax32, kMax32, -31), 1);           // (2^31-1)^2 / 2^62 = 0.99999... -> 1
  EXPECT_EQ(single(kMin32, kMax32, -31), -1);          // -(2^31-1)/2^31 -> -1
  EXPECT_EQ(single(1 << 30, 1 << 30, -31), 0);         // exactly 2^-2... * : 2^60/2^62 = 0.25
  EXPECT_EQ(single(1, 1 << 30, 30), 1 << 29);          // 2^30 / 2
  EXPECT_EQ(single(-3, 1 << 30, 30), -3 * (1 << 29));  // exact
  EXPECT_EQ(single(1, 0, 0), 0);
  EXPECT_EQ(single(kMin32, 1 << 30, 0), -(1 << 30));
}

TEST(TfliteMultiplier, SingleRoundingIsNearestTiesUp) {
  std::mt19937_64 rng(1005);
  for (int i = 0; i < 1'000'000; ++i) {
    const int32_t x = sample_int32(rng);
    const auto m =
        static_cast<int32_t>((int64_t{1} << 30) + static_cast<int64_t>(rng() % (1u << 30)));
    const int shift = -31 + static_cast<int>(rng() % 32);  // [-31, 0]: the result always fits
    const int32_t y = multiply_by_quantized_multiplier_single_rounding(x, {m, shift});
    // 2*(y*2^t - x*m) in (-2^t, 2^t]: nearest, ties toward +inf.
    const int t = 31 - shift;
    const __int128 d = 2 * ((static_cast<__int128>(y) << t) - static_cast<__int128>(x) * m);
    ASSERT_TRUE(d > -(static_cast<__int128>(1) << t) && d <= (static_cast<__int128>(1) << t))
        << "x=" << x << " m=" << m << " shift=" << shift << " y=" << y;
  }
}

TEST(TfliteMultiplier, ApplyErrors) {
  try {
    multiply_by_quantized_multiplier_single_rounding(1, {1 << 30, 31});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "shift");
    EXPECT_EQ(e.allowed(), "[-31, 30]");
  }
  EXPECT_THROW(multiply_by_quantized_multiplier_single_rounding(1, {1 << 30, -32}), Error);
  EXPECT_THROW(multiply_by_quantized_multiplier_single_rounding(1, {-5, 0}), Error);
  EXPECT_THROW(multiply_by_quantized_multiplier_single_rounding(kMax32, {kMax32, 30}), Error);
  EXPECT_THROW(multiply_by_quantized_multiplier(1, {1 << 30, 31}), Error);
  try {
    multiply_by_quantized_multiplier(1 << 20, {1 << 30, 11});  // 2^31 overflows int32
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "x");
  }
  EXPECT_EQ(multiply_by_quantized_multiplier(1 << 20, {1 << 30, 10}), 1 << 29);
  EXPECT_EQ(tflite_rounding_from_name("single_rounding"), TfliteRounding::single_rounding);
  EXPECT_THROW(tflite_rounding_from_name("triple"), Error);
}

}  // namespace
}  // namespace test_quant_gemmlowp
}  // namespace npukit
