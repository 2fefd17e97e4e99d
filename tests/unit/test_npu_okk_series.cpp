// exp / sigmoid / tanh (lookup table x Taylor series), the table casts and
// the fp32 compare-and-select family: the core's scalar specification against
// hand-computed values and the C library (double), then every okk.h function
// through local memory, then one test per hardware rule with its message.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "npu_test_util.hpp"
#include "npukit/ops/fp32_series.hpp"

namespace npukit::npu::test {
namespace test_npu_okk_series {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
const Fp32Arith kFtz{true};
const Fp32Arith kExact{false};

// ---- core: scalar specification -------------------------------------------

TEST(Fp32Series, TaylorCoefficientsAreOneOverKFactorialInFp32) {
  EXPECT_EQ(taylor_exp_coefficient(0), 1.0f);
  EXPECT_EQ(taylor_exp_coefficient(1), 1.0f);
  EXPECT_EQ(taylor_exp_coefficient(2), 0.5f);
  EXPECT_EQ(bits(taylor_exp_coefficient(3)), 0x3e2aaaabu);  // 1/6
  EXPECT_EQ(bits(taylor_exp_coefficient(4)), 0x3d2aaaabu);  // 1/24
  // The vendor's table divides the previous entry by k in fp32 (probed), which
  // is not always 1/k! rounded once.
  float chain = 1.0f;
  int differ = 0;
  for (int k = 1; k <= 30; ++k) {
    chain /= static_cast<float>(k);
    EXPECT_EQ(taylor_exp_coefficient(k), chain) << k;
    long double fact = 1.0L;
    for (int j = 2; j <= k; ++j) fact *= j;
    differ += chain != static_cast<float>(1.0L / fact);
  }
  EXPECT_GT(differ, 0);
  EXPECT_EQ(taylor_exp_coefficient(64), 0.0f);  // 1/64! underflows fp32
  EXPECT_THROW(taylor_exp_coefficient(65), Error);
}

// okk_bdc_taylor_exp and okk_bdc_exp_tunable bits from the vendor's C-model
// (kit yuanas/tpucontest libbmlib.so, FTZ/DAZ as after bm_dev_request): 8192
// inputs x 7 num_series matched bit for bit; a sample of them.
TEST(Fp32Series, MatchesTheVendorsCModelBitForBit) {
  struct Probe {
    float x;
    uint32_t taylor3, taylor9, taylor32, exp3, exp9;
  };
  const Probe probes[] = {
      {0.5f, 0x3fd2aaaau, 0x3fd3094cu, 0x3fd3094cu, 0x3fd2aaaau, 0x3fd3094cu},
      {-0.5f, 0x3f1aaaaau, 0x3f1b4598u, 0x3f1b4598u, 0x3f1aaaaau, 0x3f1b4598u},
      {-0x1.3df4b8p+0f, 0x3e570094u, 0x3e93dd84u, 0x3e93ddccu, 0x3e93d73bu, 0x3e93ddceu},
      {0x1.f36ac8p+2f, 0x42ece3e5u, 0x44e2bca9u, 0x45190e55u, 0x4517a570u, 0x45190e54u},
      {-0x1.a475fcp+2f, 0xc1f9fc96u, 0xc1cc1517u, 0x3ab7b000u, 0x3ab68377u, 0x3ab7ca93u},
      {-0x1.db8ccp+1f, 0xc08b8a34u, 0xbda04e30u, 0x3cc778a0u, 0x3cc397f3u, 0x3cc7792bu},
      {-0x1.c48ap-2f, 0x3f242e7cu, 0x3f248e14u, 0x3f248e14u, 0x3f242e7cu, 0x3f248e14u},
  };
  for (const Probe& p : probes) {
    SCOPED_TRACE(p.x);
    EXPECT_EQ(bits(taylor_exp_f32(p.x, 3, kFtz)), p.taylor3);
    EXPECT_EQ(bits(taylor_exp_f32(p.x, 9, kFtz)), p.taylor9);
    EXPECT_EQ(bits(taylor_exp_f32(p.x, 32, kFtz)), p.taylor32);
    EXPECT_EQ(bits(exp_series_f32(p.x, 3, kFtz)), p.exp3);
    EXPECT_EQ(bits(exp_series_f32(p.x, 9, kFtz)), p.exp9);
  }
}

TEST(Fp32Series, TaylorExpIsHornerOverNumSeriesPlusOneTerms) {
  EXPECT_EQ(taylor_exp_f32(0.75f, 1, kFtz), 1.75f);  // 1 + x
  // 1 + 0.5 + 0.25/2 = 1.625 (Horner: 0.5*0.5 + 1 = 1.25; 1.25*0.5 + 1).
  EXPECT_EQ(taylor_exp_f32(0.5f, 2, kFtz), 1.625f);
  // Four terms at -1: 1 - 1 + 1/2 - 1/6 = 1/3 (Horner: 1/6 -> 1/3 -> 2/3 -> 1/3).
  EXPECT_NEAR(taylor_exp_f32(-1.0f, 3, kFtz), 1.0f / 3.0f, 1e-7f);
  // 32 terms over (-1, 1): within 2 ulp of e^x.
  for (float x = -1.0f; x <= 1.0f; x += 1.0f / 64) {
    const double want = std::exp(static_cast<double>(x));
    EXPECT_NEAR(taylor_exp_f32(x, 32, kFtz), want, 2.5 * want * FLT_EPSILON) << x;
  }
  EXPECT_EQ(taylor_exp_f32(-0.0f, 32, kFtz), 1.0f);
  EXPECT_EQ(taylor_exp_f32(1e-40f, 32, kFtz), 1.0f);  // denormal input flushed
  EXPECT_TRUE(std::isnan(taylor_exp_f32(kNaN, 8, kFtz)));
  EXPECT_THROW(taylor_exp_f32(1.0f, 0, kFtz), Error);
  EXPECT_THROW(taylor_exp_f32(1.0f, 65, kFtz), Error);
}

TEST(Fp32Series, LookupExpIsEToTheNRoundedToFp32) {
  EXPECT_EQ(lookup_exp_f32(0), 1.0f);
  EXPECT_EQ(bits(lookup_exp_f32(1)), 0x402df854u);   // 2.7182817
  EXPECT_EQ(bits(lookup_exp_f32(-1)), 0x3ebc5ab2u);  // 0.36787945
  EXPECT_EQ(bits(lookup_exp_f32(2)), 0x40ec7326u);
  EXPECT_EQ(bits(lookup_exp_f32(88)), 0x7ef882b7u);    // 1.6516363e38
  EXPECT_EQ(bits(lookup_exp_f32(-87)), 0x00b33687u);   // normal, just above FLT_MIN
  EXPECT_EQ(bits(lookup_exp_f32(-88)), 0x0041edc4u);   // denormal
  EXPECT_EQ(bits(lookup_exp_f32(-103)), 0x00000001u);  // 1.85e-45: the smallest denormal
}

TEST(Fp32Series, FloorToInt32RoundsDownAndSaturates) {
  EXPECT_EQ(floor_to_int32(2.5f), 2);
  EXPECT_EQ(floor_to_int32(-2.5f), -3);
  EXPECT_EQ(floor_to_int32(-2.0f), -2);
  EXPECT_EQ(floor_to_int32(0.999999f), 0);
  EXPECT_EQ(floor_to_int32(-0.0f), 0);
  EXPECT_EQ(floor_to_int32(-1e-40f), -1);  // a negative denormal without flushing
  EXPECT_EQ(floor_to_int32(kFtz.in(-1e-40f)), 0);
  EXPECT_EQ(floor_to_int32(2147483520.0f), 2147483520);  // largest float below 2^31
  EXPECT_EQ(floor_to_int32(2147483648.0f), INT32_MAX);
  EXPECT_EQ(floor_to_int32(-2147483648.0f), INT32_MIN);
  EXPECT_EQ(floor_to_int32(-1e10f), INT32_MIN);
  EXPECT_EQ(floor_to_int32(kInf), INT32_MAX);
  EXPECT_EQ(floor_to_int32(-kInf), INT32_MIN);
  EXPECT_EQ(floor_to_int32(kNaN), 0);
}

TEST(Fp32Series, LookupInt8UsesTheSignedLowByte) {
  EXPECT_EQ(lookup_int8_to_f32(0), 0.0f);
  EXPECT_EQ(lookup_int8_to_f32(127), 127.0f);
  EXPECT_EQ(lookup_int8_to_f32(-128), -128.0f);
  EXPECT_EQ(lookup_int8_to_f32(-1), -1.0f);
  EXPECT_EQ(lookup_int8_to_f32(255), -1.0f);      // 0xff
  EXPECT_EQ(lookup_int8_to_f32(0x180), -128.0f);  // low byte 0x80
}

TEST(Fp32Series, ExpIsTableTimesSeriesOfTheFraction) {
  // Integers: the table entry times taylor(0) = 1, exactly.
  EXPECT_EQ(bits(exp_series_f32(1.0f, 32, kFtz)), 0x402df854u);
  EXPECT_EQ(bits(exp_series_f32(-1.0f, 32, kFtz)), 0x3ebc5ab2u);
  EXPECT_EQ(bits(exp_series_f32(88.0f, 32, kFtz)), 0x7ef882b7u);
  EXPECT_EQ(exp_series_f32(0.0f, 32, kFtz), 1.0f);
  EXPECT_EQ(exp_series_f32(-0.0f, 32, kFtz), 1.0f);
  EXPECT_EQ(exp_series_f32(1e-40f, 32, kFtz), 1.0f);   // DAZ
  EXPECT_EQ(exp_series_f32(-1e-40f, 32, kFtz), 1.0f);  // DAZ: floor(-0) = 0
  // num_series = 1: e*f + e with n = trunc(x), f = x - n (negative for x < 0).
  const float e2 = lookup_exp_f32(2), em2 = lookup_exp_f32(-2);
  EXPECT_EQ(exp_series_f32(2.75f, 1, kFtz), e2 * 0.75f + e2);
  EXPECT_EQ(exp_series_f32(-2.25f, 1, kFtz), em2 * -0.25f + em2);
  // 2: e*((f/2 + 1)*f) + e.
  EXPECT_EQ(exp_series_f32(-2.25f, 2, kFtz), em2 * ((-0.125f + 1.0f) * -0.25f) + em2);
  // Below e^-87 the table entry is denormal: flushed, the result is +0 ...
  EXPECT_EQ(bits(exp_series_f32(-88.5f, 32, kFtz)), 0u);
  EXPECT_EQ(bits(exp_series_f32(-103.0f, 32, kFtz)), 0u);
  // ... and without flushing it is the denormal product.
  EXPECT_GT(exp_series_f32(-88.0f, 32, kExact), 0.0f);
  // Over the normal range: within 3 ulp of e^x (table 0.5, series ~1.5, product 0.5).
  int worse = 0;
  for (float x = -80.0f; x <= 88.0f; x += 0.013f) {
    const double want = std::exp(static_cast<double>(x));
    const double got = exp_series_f32(x, 32, kFtz);
    if (std::fabs(got - want) > 3.0 * want * FLT_EPSILON) ++worse;
  }
  EXPECT_EQ(worse, 0);
  // Near e^-86 the correction e*(f*r) is below FLT_MIN and flushed: e^n alone.
  EXPECT_EQ(exp_series_f32(-85.09f, 32, kFtz), lookup_exp_f32(-85));
}

TEST(Fp32Series, SigmoidAndTanhFromExp) {
  EXPECT_EQ(sigmoid_series_f32(0.0f, 32, kFtz), 0.5f);  // 1 / (1 + 1)
  EXPECT_EQ(sigmoid_series_f32(88.0f, 32, kFtz), 1.0f);
  EXPECT_EQ(bits(sigmoid_series_f32(-103.0f, 32, kFtz)), 0u);
  EXPECT_EQ(sigmoid_series_f32(1.0f, 32, kFtz),
            static_cast<float>(0x1.5bf0a8p+1f / (1.0f + 0x1.5bf0a8p+1f)));  // e/(1+e)
  EXPECT_EQ(bits(tanh_series_f32(0.0f, 32, kFtz)), 0u);                     // 1 - 2/2 = +0
  EXPECT_EQ(tanh_series_f32(50.0f, 32, kFtz), 1.0f);                        // 2x clamped to 88
  EXPECT_EQ(tanh_series_f32(-60.0f, 32, kFtz), -1.0f);  // 2x clamped to -103, e flushed
  EXPECT_EQ(tanh_series_f32(88.0f, 32, kFtz), 1.0f);
  EXPECT_EQ(tanh_series_f32(-103.0f, 32, kFtz), -1.0f);
  for (float x = -20.0f; x <= 20.0f; x += 0.01f) {
    const double s = 1.0 / (1.0 + std::exp(-static_cast<double>(x)));
    EXPECT_NEAR(sigmoid_series_f32(x, 32, kFtz), s, 3e-7) << x;
    EXPECT_NEAR(tanh_series_f32(x, 32, kFtz), std::tanh(static_cast<double>(x)), 4e-7) << x;
  }
}

TEST(Fp32Series, ArraysFollowTheScalarsAndValidate) {
  const std::vector<float> x = {-3.5f, -0.25f, 0.0f, 0.5f, 7.125f};
  std::vector<float> y(x.size());
  Fp32SeriesParams p;
  apply_profile(p, Profile::bm1684);
  EXPECT_TRUE(p.flush_denormals);
  p.num_series = 12;
  fp32_series(Fp32SeriesOp::exp, x, y, p);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], exp_series_f32(x[i], 12, kFtz));
  fp32_series(Fp32SeriesOp::tanh, x, y, p);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], tanh_series_f32(x[i], 12, kFtz));
  p.num_series = 0;
  EXPECT_THROW(fp32_series(Fp32SeriesOp::exp, x, y, p), Error);
  p.num_series = 4;
  std::vector<float> short_y(2);
  EXPECT_THROW(fp32_series(Fp32SeriesOp::exp, x, short_y, p), Error);
}

TEST(Fp32Series, CompareSelectSpecialValues) {
  const std::vector<float> a = {1.0f, kNaN, 0.0f, -0.0f, 1e-40f, kInf, -kInf, 2.0f, kNaN};
  const std::vector<float> b = {0.5f, 0.0f, -0.0f, 0.0f, 0.0f, FLT_MAX, kNaN, 2.0f, kNaN};
  const std::vector<uint32_t> s0(a.size(), 0xAAAAAAAAu), s1(a.size(), 0x55555555u);
  std::vector<uint32_t> y(a.size());
  const uint32_t T = 0xAAAAAAAAu, F = 0x55555555u;
  fp32_compare_select(Fp32Compare::greater, a, b, s0, s1, y, true);
  EXPECT_EQ(y, (std::vector<uint32_t>{T, F, F, F, F, T, F, F, F}));
  // equal compares the 32-bit words: +0 != -0, the denormal is not flushed,
  // and a NaN equals the identical NaN.
  fp32_compare_select(Fp32Compare::equal, a, b, s0, s1, y, true);
  EXPECT_EQ(y, (std::vector<uint32_t>{F, F, F, F, F, F, F, T, T}));
  // Without flushing the denormal is greater than 0 and not equal to it.
  fp32_compare_select(Fp32Compare::greater, a, b, s0, s1, y, false);
  EXPECT_EQ(y[4], T);
  std::vector<uint32_t> short_y(3);
  EXPECT_THROW(fp32_compare_select(Fp32Compare::equal, a, b, s0, s1, short_y, true), Error);
}

// ---- okk.h functions through local memory -------------------------------------

class OkkSeries : public OkkTest {};

const dim4 kShape{1, 3, 2, 3};  // 18 elements on NPUs 0..2

TEST_F(OkkSeries, ExpSigmoidTanhMatchTheCore) {
  std::vector<float> x(18);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -6.0f + 0.7f * static_cast<float>(i);
  put_f32(0, kShape, x);
  struct Case {
    void (*plain)(local_addr_t, local_addr_t, local_addr_t, const dim4*);
    void (*tunable)(local_addr_t, local_addr_t, local_addr_t, const dim4*, int);
    float (*ref)(float, int, const Fp32Arith&);
  };
  const Case cases[] = {{okk_bdc_exp, okk_bdc_exp_tunable, exp_series_f32},
                        {okk_bdc_sigmoid, okk_bdc_sigmoid_tunable, sigmoid_series_f32},
                        {okk_bdc_tanh, okk_bdc_tanh_tunable, tanh_series_f32}};
  for (const Case& c : cases) {
    c.plain(1024, 0, 2048, &kShape);  // = tunable with 32 terms
    std::vector<float> y = get_f32(1024, kShape);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], c.ref(x[i], 32, kFtz)) << i;
    c.tunable(1024, 0, 2048, &kShape, 5);
    y = get_f32(1024, kShape);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], c.ref(x[i], 5, kFtz)) << i;
  }
  // Spot values against the C library.
  okk_bdc_exp(1024, 0, 2048, &kShape);
  const std::vector<float> y = get_f32(1024, kShape);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_NEAR(y[i], std::exp(static_cast<double>(x[i])), 3e-7 * std::exp(x[i]) + 1e-30);
}

TEST_F(OkkSeries, ExpInPlaceAndSpecialValues) {
  const std::vector<float> x = {0.0f, -0.0f, 1e-40f, -1e-40f, 1.0f, -1.0f, 88.0f, -103.0f};
  const dim4 s{1, 1, 1, 8};
  put_f32(0, s, x);
  okk_bdc_exp(0, 0, 1024, &s);  // dst = src is allowed
  const std::vector<uint32_t> y = get(0, s);
  EXPECT_EQ(y, (std::vector<uint32_t>{0x3f800000u, 0x3f800000u, 0x3f800000u, 0x3f800000u,
                                      0x402df854u, 0x3ebc5ab2u, 0x7ef882b7u, 0u}));
}

TEST_F(OkkSeries, TaylorExpAndLookupExp) {
  const dim4 s{1, 2, 1, 4};
  put_f32(0, s, {0.0f, 0.5f, -0.5f, 1.0f, 0.25f, -1.0f, 1e-40f, kNaN});
  okk_bdc_taylor_exp(1024, 0, &s, 2);  // num_series + 1 = 3 terms, as the vendor's
  std::vector<float> y = get_f32(1024, s);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], 1.625f);        // 1 + 0.5 + 0.125
  EXPECT_EQ(y[2], 0.625f);        // 1 - 0.5 + 0.125
  EXPECT_EQ(y[3], 2.5f);          // 1 + 1 + 0.5
  EXPECT_EQ(y[4], 1.28125f);      // 1 + 0.25 + 0.03125
  EXPECT_EQ(y[5], 0.5f);          // 1 - 1 + 0.5
  EXPECT_EQ(y[6], 1.0f);          // denormal flushed
  EXPECT_TRUE(std::isnan(y[7]));  // no range rule for taylor_exp
  put(2048, s, {0u, 1u, static_cast<uint32_t>(-1), 88u, static_cast<uint32_t>(-103), 2u, 3u, 4u});
  okk_bdc_lookup_exp(3072, 2048, &s);
  const std::vector<uint32_t> e = get(3072, s);
  EXPECT_EQ(e[0], 0x3f800000u);
  EXPECT_EQ(e[1], 0x402df854u);
  EXPECT_EQ(e[2], 0x3ebc5ab2u);
  EXPECT_EQ(e[3], 0x7ef882b7u);
  EXPECT_EQ(e[4], 1u);  // the table entry itself (a denormal)
  EXPECT_EQ(e[5], 0x40ec7326u);
}

TEST_F(OkkSeries, CastsFloorAndLookup) {
  const dim4 s{1, 1, 2, 4};
  put_f32(0, s, {2.5f, -2.5f, -0.0f, -1e-40f, kNaN, kInf, -kInf, 3e9f});
  okk_bdc_fp32_to_int32(1024, 0, &s);
  const std::vector<uint32_t> y = get(1024, s);
  const std::vector<int32_t> want = {2, -3, 0, 0, 0, INT32_MAX, INT32_MIN, INT32_MAX};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(static_cast<int32_t>(y[i]), want[i]) << i;
  put(2048, s,
      {0u, 127u, static_cast<uint32_t>(-128), static_cast<uint32_t>(-1), 5u, 100u, 1u, 2u});
  okk_bdc_lookup_int32_to_fp32(3072, 2048, &s);
  EXPECT_EQ(get_f32(3072, s),
            (std::vector<float>{0.0f, 127.0f, -128.0f, -1.0f, 5.0f, 100.0f, 1.0f, 2.0f}));
}

TEST_F(OkkSeries, SelectValueFamily) {
  const dim4 s{1, 2, 1, 3};
  put_f32(0, s, {1.0f, 2.0f, kNaN, -0.0f, 5.0f, 1e-40f});
  put_f32(1024, s, {0.0f, 2.0f, 1.0f, 0.0f, 6.0f, 0.0f});
  x32 v;
  v.u32 = 0x12345678u;
  const uint32_t V = 0x12345678u;
  okk_bdc_greater_select_value(2048, 0, 1024, v, &s, nullptr, nullptr, nullptr);
  EXPECT_EQ(get(2048, s), (std::vector<uint32_t>{V, 0, 0, 0, 0, 0}));
  okk_bdc_equal_select_value(2048, 0, 1024, v, &s, nullptr, nullptr, nullptr);
  EXPECT_EQ(get(2048, s), (std::vector<uint32_t>{0, V, 0, 0, 0, 0}));  // bits: -0 != +0
  okk_bdc_greater_C_select_value(2048, 0, 1.5f, v, &s, nullptr, nullptr);
  EXPECT_EQ(get(2048, s), (std::vector<uint32_t>{0, V, 0, 0, V, 0}));
  okk_bdc_C_greater_select_value(2048, 0, 1.5f, v, &s, nullptr, nullptr);
  EXPECT_EQ(get(2048, s), (std::vector<uint32_t>{V, 0, 0, V, 0, V}));
  okk_bdc_equal_C_select_value(2048, 0, 5.0f, v, &s, nullptr, nullptr);
  EXPECT_EQ(get(2048, s), (std::vector<uint32_t>{0, 0, 0, 0, V, 0}));
  okk_bdc_equal_C_select_value(2048, 0, -0.0f, v, &s, nullptr, nullptr);
  EXPECT_EQ(get(2048, s), (std::vector<uint32_t>{0, 0, 0, V, 0, 0}));
  // Strided operands: src read from every second element of a (1, 2, 1, 6) row.
  const dim4 wide{1, 2, 1, 6}, st{64, 32, 6, 2};
  put_f32(4096, wide, {3, 9, 1, 9, 2, 9, 0, 9, 7, 9, 5, 9});
  okk_bdc_greater_C_select_value(2048, 4096, 1.5f, v, &s, nullptr, &st);
  EXPECT_EQ(get(2048, s), (std::vector<uint32_t>{V, 0, V, 0, V, V}));
}

TEST_F(OkkSeries, GeneralSelectWithConstantsAndTensors) {
  const dim4 s{1, 1, 1, 4};
  put_f32(0, s, {1.0f, -1.0f, 3.0f, kNaN});
  put(1024, s, {10u, 11u, 12u, 13u});
  fp32_or_addr_t a, zero;
  a.is_addr = true;
  a.context.addr = 0;
  zero.is_addr = false;
  zero.context.val = 0.0f;
  x32_or_addr_t t, c;
  t.is_addr = true;
  t.context.addr = 1024;
  c.is_addr = false;
  c.context.val.u32 = 99u;
  okk_bdc_greater_select(2048, &a, &zero, &t, &c, &s);
  EXPECT_EQ(get(2048, s), (std::vector<uint32_t>{10u, 99u, 12u, 99u}));
  okk_bdc_equal_select(2048, &zero, &a, &c, &t, &s);
  EXPECT_EQ(get(2048, s), (std::vector<uint32_t>{10u, 11u, 12u, 13u}));  // never equal
  fp32_or_addr_t three = zero;
  three.context.val = 3.0f;
  okk_bdc_equal_select(2048, &a, &three, &c, &t, &s);
  EXPECT_EQ(get(2048, s), (std::vector<uint32_t>{10u, 11u, 99u, 13u}));
}

// ---- hardware rules --------------------------------------------------------------

TEST_F(OkkSeries, RuleExpSourceRange) {
  const dim4 s{1, 1, 1, 2};
  put_f32(0, s, {0.0f, 88.5f});
  expect_rule([&] { okk_bdc_exp(1024, 0, 2048, &s); },
              {"okk_bdc_exp", "src_addr", "element (0, 0, 0, 1) = 88.5", "[-103.0, 88.0]"});
  put_f32(0, s, {kNaN, 0.0f});
  expect_rule([&] { okk_bdc_sigmoid(1024, 0, 2048, &s); },
              {"okk_bdc_sigmoid", "element (0, 0, 0, 0) = nan"});
}

TEST_F(OkkSeries, RuleWorkTensorDistinct) {
  const dim4 s{1, 1, 1, 2};
  put_f32(0, s, {0.0f, 1.0f});
  expect_rule([&] { okk_bdc_exp(1024, 0, 1024, &s); },
              {"okk_bdc_exp", "work_addr", "1024 (overlaps dst_addr at 1024)"});
  expect_rule([&] { okk_bdc_tanh_tunable(1024, 0, 0, &s, 8); },
              {"okk_bdc_tanh_tunable", "work_addr", "overlaps src_addr"});
  expect_rule([&] { okk_bdc_exp(1024, 0, kNpuBytes + 2048, &s); },
              {"work_addr", "starts on NPU 1", "same NPU as dst_addr (NPU 0)"});
}

TEST_F(OkkSeries, RuleAlignedAddresses) {
  const dim4 s{1, 1, 1, 2};
  put_f32(0, s, {0.0f, 1.0f});
  expect_rule([&] { okk_bdc_exp(1024 + 64, 0, 2048, &s); },
              {"okk_bdc_exp", "dst_addr", "1088", "divisible by 128"});
  expect_rule([&] { okk_bdc_taylor_exp(1024, 4, &s, 4); },
              {"okk_bdc_taylor_exp", "src_addr", "divisible by 128"});
  expect_rule([&] { okk_bdc_exp(1024, 0, 2048 + 4, &s); }, {"work_addr", "divisible by 128"});
  expect_rule([&] { okk_bdc_sqrt(1024 + 4, 0, &s); }, {"okk_bdc_sqrt", "divisible by 128"});
  expect_rule([&] { okk_bdc_fp32_to_int32(1024, 0 + kNpuBytes, &s); },
              {"okk_bdc_fp32_to_int32", "src_addr", "same NPU"});
}

TEST_F(OkkSeries, RuleNumSeriesRange) {
  const dim4 s{1, 1, 1, 2};
  put_f32(0, s, {0.0f, 1.0f});
  expect_rule([&] { okk_bdc_exp_tunable(1024, 0, 2048, &s, 0); },
              {"okk_bdc_exp_tunable", "num_series", "= 0", "[1, 64]"});
  expect_rule([&] { okk_bdc_taylor_exp(1024, 0, &s, 65); }, {"okk_bdc_taylor_exp", "65"});
}

TEST_F(OkkSeries, RuleLookupIndexRanges) {
  const dim4 s{1, 1, 1, 2};
  put(0, s, {5u, static_cast<uint32_t>(-104)});
  expect_rule([&] { okk_bdc_lookup_exp(1024, 0, &s); },
              {"okk_bdc_lookup_exp", "element (0, 0, 0, 1) = -104", "[-103, 88]"});
  put(0, s, {128u, 0u});
  expect_rule([&] { okk_bdc_lookup_int32_to_fp32(1024, 0, &s); },
              {"okk_bdc_lookup_int32_to_fp32", "element (0, 0, 0, 0) = 128", "[-128, 127]"});
}

TEST_F(OkkSeries, RuleSelectOperands) {
  const dim4 s{1, 1, 1, 2};
  put_f32(0, s, {0.0f, 1.0f});
  put_f32(kNpuBytes, s, {0.0f, 1.0f});
  x32 v;
  v.u32 = 1;
  expect_rule(
      [&] { okk_bdc_equal_select_value(1024, 0, kNpuBytes, v, &s, nullptr, nullptr, nullptr); },
      {"okk_bdc_equal_select_value", "src1_addr", "starts on NPU 1"});
  expect_rule([&] { okk_bdc_greater_C_select_value(1026, 0, 0.0f, v, &s, nullptr, nullptr); },
              {"dst_addr", "divisible by 4"});
  fp32_or_addr_t a;
  a.is_addr = true;
  a.context.addr = 0;
  expect_rule([&] { okk_bdc_greater_select(1024, &a, nullptr, nullptr, nullptr, &s); },
              {"okk_bdc_greater_select", "src1", "NULL"});
  // Reading a never-written tensor.
  expect_rule([&] { okk_bdc_greater_C_select_value(1024, 8192, 0.0f, v, &s, nullptr, nullptr); },
              {"src_addr", "never written"});
}

TEST_F(OkkSeries, RuleLocalMemoryBounds) {
  // 2 x 64 fp32 per channel from the last 256 bytes of NPU 0: ends past 512 KiB.
  const dim4 s{2, 1, 1, 64}, one{1, 1, 1, 64};
  put_f32(0, one, std::vector<float>(64, 0.5f));
  expect_rule([&] { okk_bdc_exp(kNpuBytes - 256, 0, 4096, &s); },
              {"okk_bdc_exp", "dst_addr", "ends at byte 524544",
               "inside the 524288 bytes of each NPU's local memory"});
  expect_rule([&] { okk_bdc_exp(1024, 0, kNpuBytes - 256, &s); },
              {"okk_bdc_exp", "work_addr", "ends at byte"});
  expect_rule([&] { okk_bdc_taylor_exp(64 * kNpuBytes, 64 * kNpuBytes + 4096, &one, 4); },
              {"dst_addr", "a local address below 33554432"});
}

}  // namespace
}  // namespace test_npu_okk_series
}  // namespace npukit::npu::test
