// Rounding primitives against an independent oracle: the exact value num/den is
// compared with candidate integers k through __int128 cross-multiplication
// (k <=> num/den  <=>  sign((k*den - num) * den)), and the rule is applied from
// its definition (nearest candidate, then the tie rule), never through the
// floor-and-classify path of the implementation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "npukit/quant/rounding.hpp"

namespace npukit {
namespace test_quant_rounding {
namespace {

using i128 = __int128;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int sign(i128 v) {
  return v > 0 ? 1 : v < 0 ? -1 : 0;
}

// Rounds the rational num/den (den != 0) by searching integers around a rough estimate.
i128 oracle(i128 num, i128 den, Rounding r) {
  if (den < 0) num = -num, den = -den;  // i128 has room for -INT64_MIN
  const i128 guess = num / den;
  // cmp(k) = sign(k - num/den) = sign(k*den - num) since den > 0.
  auto cmp = [&](i128 k) { return sign(k * den - num); };
  i128 lo = guess - 2;
  while (cmp(lo + 1) <= 0) ++lo;  // lo = largest k with k <= v
  i128 hi = guess + 2;
  while (cmp(hi - 1) >= 0) --hi;  // hi = smallest k with k >= v
  if (lo == hi) return lo;        // v is an integer
  // |lo - v| vs |hi - v|, scaled by den: (num - lo*den) vs (hi*den - num).
  const i128 dlo = num - lo * den, dhi = hi * den - num;
  const bool negative = num < 0;
  switch (r) {
    case Rounding::floor:
      return lo;
    case Rounding::ceil:
      return hi;
    case Rounding::toward_zero:
      return negative ? hi : lo;
    default:
      break;
  }
  if (dlo < dhi) return lo;
  if (dhi < dlo) return hi;
  switch (r) {
    case Rounding::half_to_even:
      return (lo % 2 == 0) ? lo : hi;
    case Rounding::half_up:
      return hi;
    case Rounding::half_down:
      return lo;
    case Rounding::half_away_from_zero:
      return negative ? lo : hi;
    case Rounding::half_toward_zero:
      return negative ? hi : lo;
    default:
      return 0;
  }
}

std::string repro(const char* what, int64_t a, int64_t b, Rounding r) {
  return std::string(what) + "(" + std::to_string(a) + ", " + std::to_string(b) + ", " +
         rounding_name(r) + ")";
}

TEST(Rounding, NamesRoundTrip) {
  EXPECT_EQ(all_roundings().size(), 8u);
  for (Rounding r : all_roundings()) EXPECT_EQ(rounding_from_name(rounding_name(r)), r);
  EXPECT_EQ(rounding_from_name("truncate"), Rounding::toward_zero);
  try {
    rounding_from_name("nearest");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "name");
    EXPECT_NE(e.allowed().find("half_to_even"), std::string::npos);
  }
}

// Hand-computed ties and near-ties, one line per rule: -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, then -7/3,
// 7/3.
TEST(Rounding, HandComputedTable) {
  struct Row {
    Rounding r;
    int64_t want[8];
  };
  const Row rows[] = {
      {Rounding::half_to_even, {-2, -2, 0, 0, 2, 2, -2, 2}},
      {Rounding::half_up, {-2, -1, 0, 1, 2, 3, -2, 2}},
      {Rounding::half_down, {-3, -2, -1, 0, 1, 2, -2, 2}},
      {Rounding::half_away_from_zero, {-3, -2, -1, 1, 2, 3, -2, 2}},
      {Rounding::half_toward_zero, {-2, -1, 0, 0, 1, 2, -2, 2}},
      {Rounding::toward_zero, {-2, -1, 0, 0, 1, 2, -2, 2}},
      {Rounding::floor, {-3, -2, -1, 0, 1, 2, -3, 2}},
      {Rounding::ceil, {-2, -1, 0, 1, 2, 3, -2, 3}},
  };
  const int64_t halves[6] = {-5, -3, -1, 1, 3, 5};
  for (const Row& row : rows) {
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(div_round(halves[i], 2, row.r), row.want[i]) << repro("div", halves[i], 2, row.r);
      EXPECT_EQ(div_round(-halves[i], -2, row.r), row.want[i]);
      EXPECT_EQ(shift_round(halves[i], 1, row.r), row.want[i]);
      EXPECT_EQ(round_to_int(halves[i] / 2.0, row.r), row.want[i]);
      EXPECT_EQ(round_to_int(static_cast<float>(halves[i]) / 2.0f, row.r), row.want[i]);
    }
    EXPECT_EQ(div_round(-7, 3, row.r), row.want[6]) << rounding_name(row.r);
    EXPECT_EQ(div_round(7, 3, row.r), row.want[7]) << rounding_name(row.r);
  }
}

TEST(Rounding, DivRoundExhaustiveSmall) {
  int64_t checked = 0;
  for (Rounding r : all_roundings())
    for (int64_t num = -300; num <= 300; ++num)
      for (int64_t den = -40; den <= 40; ++den) {
        if (den == 0) continue;
        ASSERT_EQ(div_round(num, den, r), static_cast<int64_t>(oracle(num, den, r)))
            << repro("div_round", num, den, r);
        ++checked;
      }
  EXPECT_EQ(checked, 8 * 601 * 80);
}

std::vector<int64_t> edge_values() {
  std::vector<int64_t> v = {kMin, kMin + 1, kMin + 2, kMax, kMax - 1, kMax - 2, 0, 1, -1, 2, -2, 3};
  for (int s = 1; s < 63; ++s) {
    const int64_t p = int64_t{1} << s;
    for (int64_t d : {-1, 0, 1}) {
      v.push_back(p + d);
      v.push_back(-p + d);
    }
    v.push_back(p / 2 * 3);  // 1.5 * 2^s: ties after halving
    v.push_back(-(p / 2 * 3));
  }
  return v;
}

TEST(Rounding, DivRoundAtIntegerLimits) {
  const std::vector<int64_t> values = edge_values();
  int64_t checked = 0;
  for (Rounding r : all_roundings())
    for (int64_t num : values)
      for (int64_t den : values) {
        if (den == 0 || (num == kMin && den == -1)) continue;
        ASSERT_EQ(div_round(num, den, r), static_cast<int64_t>(oracle(num, den, r)))
            << repro("div_round", num, den, r);
        ++checked;
      }
  EXPECT_GT(checked, 8 * 300 * 300);
}

TEST(Rounding, DivRoundRandomWide) {
  std::mt19937_64 rng(20261125);  // seed stated for reproduction
  for (int i = 0; i < 200000; ++i) {
    const int64_t num = static_cast<int64_t>(rng()) >> (rng() % 64);
    int64_t den = static_cast<int64_t>(rng()) >> (rng() % 64);
    if (den == 0 || (num == kMin && den == -1)) continue;
    const Rounding r = all_roundings()[i % 8];
    ASSERT_EQ(div_round(num, den, r), static_cast<int64_t>(oracle(num, den, r)))
        << repro("div_round", num, den, r);
  }
}

// The integer averages of docs/semantics.md, "Rounding and requantization" are div_round rules:
// TFLite / CMSIS-NN's (s > 0 ? (s + n/2) / n : (s - n/2) / n) in C division is half_away_from_zero;
// MiCo's plain s / n is toward_zero; BM168x's (acc + 2^(r-1)) >> r is half_up.
TEST(Rounding, SystemFormulasAreRules) {
  for (int64_t n = 1; n <= 64; ++n)
    for (int64_t s = -5000; s <= 5000; ++s) {
      const int64_t tflite = s > 0 ? (s + n / 2) / n : (s - n / 2) / n;
      ASSERT_EQ(div_round(s, n, Rounding::half_away_from_zero), tflite) << s << " / " << n;
      ASSERT_EQ(div_round(s, n, Rounding::toward_zero), s / n) << s << " / " << n;
    }
  for (int r = 1; r <= 20; ++r)
    for (int64_t acc = -100000; acc <= 100000; acc += 7)
      ASSERT_EQ(shift_round(acc, r, Rounding::half_up), (acc + (int64_t{1} << (r - 1))) >> r);
}

TEST(Rounding, DivRoundErrors) {
  try {
    div_round(5, 0, Rounding::floor);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "den");
    EXPECT_EQ(e.value(), "0");
  }
  EXPECT_THROW(div_round(kMin, -1, Rounding::half_to_even), Error);
  EXPECT_EQ(div_round(kMin, 1, Rounding::half_to_even), kMin);
  EXPECT_EQ(div_round(kMin + 1, -1, Rounding::half_to_even), kMax);
}

TEST(Rounding, ShiftRoundExhaustiveSmall) {
  for (Rounding r : all_roundings())
    for (int shift = 0; shift <= 12; ++shift)
      for (int64_t x = -5000; x <= 5000; ++x)
        ASSERT_EQ(shift_round(x, shift, r), static_cast<int64_t>(oracle(x, i128{1} << shift, r)))
            << repro("shift_round", x, shift, r);
}

TEST(Rounding, ShiftRoundAtIntegerLimits) {
  for (Rounding r : all_roundings())
    for (int64_t x : edge_values())
      for (int shift = 0; shift <= 63; ++shift)
        ASSERT_EQ(shift_round(x, shift, r), static_cast<int64_t>(oracle(x, i128{1} << shift, r)))
            << repro("shift_round", x, shift, r);
  // Floor is the arithmetic shift; half_up is ((x >> (s-1)) + 1) >> 1 (CVM's formula).
  for (int64_t x : edge_values())
    for (int shift = 1; shift <= 63; ++shift) {
      EXPECT_EQ(shift_round(x, shift, Rounding::floor), x >> shift);
      if ((x >> (shift - 1)) == kMax) {  // the +1 of CVM's formula overflows only here
        EXPECT_EQ(shift_round(x, shift, Rounding::half_up), int64_t{1} << 62);
        continue;
      }
      EXPECT_EQ(shift_round(x, shift, Rounding::half_up), ((x >> (shift - 1)) + 1) >> 1);
    }
}

TEST(Rounding, ShiftRoundErrors) {
  for (int bad : {-1, 64, 1000}) {
    try {
      shift_round(1, bad, Rounding::floor);
      FAIL() << "no error for shift " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.parameter(), "shift");
      EXPECT_EQ(e.value(), std::to_string(bad));
      EXPECT_EQ(e.allowed(), "[0, 63]");
    }
  }
}

// A double as the exact rational mant / 2^k (k >= 0) for the oracle.
i128 oracle_double(double x, Rounding r) {
  int e = 0;
  const double m = std::frexp(x, &e);                         // x = m * 2^e, |m| in [0.5, 1)
  const auto mant = static_cast<int64_t>(std::ldexp(m, 53));  // exact 53-bit integer
  const int k = 53 - e;                                       // x = mant * 2^-k
  if (k <= 0) return static_cast<i128>(mant) << (-k);
  if (k > 120) return oracle(mant, i128{1} << 120, r);  // |x| < 2^-67: same rounding as tiny
  return oracle(mant, i128{1} << k, r);
}

TEST(Rounding, RoundToIntGridAndNeighbours) {
  for (Rounding r : all_roundings())
    for (int64_t i = -4000; i <= 4000; ++i) {
      const double x = static_cast<double>(i) / 16.0;  // exact multiples of 1/16, ties included
      ASSERT_EQ(round_to_int(x, r), static_cast<int64_t>(oracle(i, 16, r)))
          << "round_to_int(" << x << ", " << rounding_name(r) << ")";
      for (double y : {std::nextafter(x, -1e300), std::nextafter(x, 1e300)})
        ASSERT_EQ(round_to_int(y, r), static_cast<int64_t>(oracle_double(y, r)))
            << "round_to_int(" << y << ", " << rounding_name(r) << ")";
    }
}

TEST(Rounding, RoundToIntWideAndLimits) {
  std::mt19937_64 rng(7);
  std::vector<double> xs = {0.0,
                            -0.0,
                            0.49999999999999994,
                            -0.49999999999999994,
                            4503599627370495.5,
                            -4503599627370495.5,
                            4503599627370496.0,
                            9007199254740991.0,
                            -9223372036854775808.0,
                            9223372036854774784.0,  // largest double below 2^63
                            1e-300,
                            -1e-300,
                            5e-324};
  for (int i = 0; i < 200000; ++i) {
    const double mag = std::ldexp(static_cast<double>(rng() >> 11), -static_cast<int>(rng() % 60));
    xs.push_back((rng() & 1) ? mag : -mag);
  }
  for (Rounding r : all_roundings())
    for (double x : xs)
      ASSERT_EQ(round_to_int(x, r), static_cast<int64_t>(oracle_double(x, r)))
          << "round_to_int(" << x << ", " << rounding_name(r) << ")";
  // float overload: every float tie and its neighbours in a range.
  for (Rounding r : all_roundings())
    for (int i = -2000; i <= 2000; ++i) {
      const float f = static_cast<float>(i) * 0.25f;
      for (float g : {std::nextafter(f, -1e30f), f, std::nextafter(f, 1e30f)})
        ASSERT_EQ(round_to_int(g, r), static_cast<int64_t>(oracle_double(g, r)));
    }
  EXPECT_EQ(round_to_int(2.5, Rounding::half_to_even),
            static_cast<int64_t>(std::nearbyint(2.5)));  // default FP env rounds to even
  EXPECT_EQ(round_to_int(-2.5, Rounding::half_away_from_zero), std::llround(-2.5));
}

TEST(Rounding, RoundToIntErrors) {
  for (double bad :
       {std::nan(""), double{INFINITY}, -double{INFINITY}, 9223372036854775808.0, -1e19}) {
    try {
      round_to_int(bad, Rounding::half_to_even);
      FAIL() << "no error for " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.parameter(), "x");
      EXPECT_EQ(e.allowed(), "a finite value in [-2^63, 2^63)");
    }
  }
}

TEST(Rounding, Saturate) {
  EXPECT_EQ(saturate<int8_t>(128), 127);
  EXPECT_EQ(saturate<int8_t>(-129), -128);
  EXPECT_EQ(saturate<int8_t>(-5), -5);
  EXPECT_EQ(saturate<uint8_t>(-1), 0);
  EXPECT_EQ(saturate<uint8_t>(256), 255);
  EXPECT_EQ(saturate<int16_t>(40000), 32767);
  EXPECT_EQ(saturate<int32_t>(kMin), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(saturate<uint32_t>(kMax), 4294967295u);
  EXPECT_EQ(saturate<uint64_t>(-7), 0u);
  EXPECT_EQ(saturate<int64_t>(kMin), kMin);
  for (int64_t v = -300; v <= 300; ++v) {
    EXPECT_EQ(saturate<int8_t>(v), v < -128 ? -128 : v > 127 ? 127 : v);
    EXPECT_EQ(saturate(v, -127, 127), v < -127 ? -127 : v > 127 ? 127 : v);
  }
  EXPECT_EQ(saturate(5, 5, 5), 5);
  try {
    saturate(0, 3, 2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "lo");
  }
}

}  // namespace
}  // namespace test_quant_rounding
}  // namespace npukit
