// The x86 NaN rules every fp32 reference states (fp32_semantics.hpp): a NaN
// operand comes out quieted, the first one when both are NaN; inf - inf and
// inf * 0 give the default NaN 0xffc00000; flushing (FTZ/DAZ) is unchanged.
// Hand-written cases, so each rule is checked on its own.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>

#include "npukit/ops/fp32_semantics.hpp"

namespace npukit {
namespace test_fp32_nan_rules {
namespace {

float f(uint32_t b) {
  return std::bit_cast<float>(b);
}
uint32_t bits(float x) {
  return std::bit_cast<uint32_t>(x);
}

constexpr uint32_t kQuietPos = 0x7fc01234u, kQuietNeg = 0xffc05678u;
constexpr uint32_t kSignalPos = 0x7f800abcu, kSignalNeg = 0xff801def;
constexpr uint32_t kInf = 0x7f800000u, kNegInf = 0xff800000u, kDefault = 0xffc00000u;

TEST(Fp32NanRules, FirstNanOperandWinsInAddAndMul) {
  for (bool flush : {false, true}) {
    const Fp32Arith a{flush};
    SCOPED_TRACE(flush ? "flush" : "no flush");
    EXPECT_EQ(bits(a.add(f(kQuietPos), f(kQuietNeg))), kQuietPos);
    EXPECT_EQ(bits(a.add(f(kQuietNeg), f(kQuietPos))), kQuietNeg);
    EXPECT_EQ(bits(a.mul(f(kQuietNeg), f(kQuietPos))), kQuietNeg);
    EXPECT_EQ(bits(a.mul(f(kQuietPos), f(kQuietNeg))), kQuietPos);
    // A signalling NaN is not preferred over a quiet one: order decides.
    EXPECT_EQ(bits(a.add(f(kQuietPos), f(kSignalNeg))), kQuietPos);
    EXPECT_EQ(bits(a.add(f(kSignalNeg), f(kQuietPos))), kSignalNeg | 0x00400000u);
    EXPECT_EQ(bits(a.mul(f(kSignalPos), f(kQuietNeg))), kSignalPos | 0x00400000u);
    // One NaN operand, on either side, against a number, inf or a denormal.
    for (uint32_t other : {0x3f800000u, kInf, kNegInf, 0x00000001u, 0x80000000u}) {
      EXPECT_EQ(bits(a.add(f(other), f(kSignalNeg))), kSignalNeg | 0x00400000u) << other;
      EXPECT_EQ(bits(a.mul(f(kSignalPos), f(other))), kSignalPos | 0x00400000u) << other;
      EXPECT_EQ(bits(a.mul(f(other), f(kQuietNeg))), kQuietNeg) << other;
    }
  }
}

TEST(Fp32NanRules, InvalidOperationGivesTheDefaultNan) {
  for (bool flush : {false, true}) {
    const Fp32Arith a{flush};
    EXPECT_EQ(bits(a.add(f(kInf), f(kNegInf))), kDefault);
    EXPECT_EQ(bits(a.add(f(kNegInf), f(kInf))), kDefault);
    EXPECT_EQ(bits(a.mul(f(kInf), 0.0f)), kDefault);
    EXPECT_EQ(bits(a.mul(-0.0f, f(kNegInf))), kDefault);
    EXPECT_EQ(bits(x86_add(f(kInf), f(kNegInf))), kDefault);
    EXPECT_EQ(bits(x86_mul(f(kNegInf), 0.0f)), kDefault);
  }
  // Under DAZ a denormal operand is zero, so inf * denormal is invalid too;
  // without it the product is inf.
  EXPECT_EQ(bits(Fp32Arith{true}.mul(f(kInf), f(0x00000003u))), kDefault);
  EXPECT_EQ(bits(Fp32Arith{false}.mul(f(kInf), f(0x00000003u))), kInf);
}

TEST(Fp32NanRules, FlushRulesUnchanged) {
  const Fp32Arith on{true}, off{false};
  // FTZ tininess after rounding (the comment in Fp32Arith::mul).
  EXPECT_EQ(bits(on.mul(f(0x3f7fffffu), f(0x00800000u))), 0u);
  EXPECT_EQ(bits(on.mul(f(0xbf7fffffu), f(0x00800000u))), 0x80000000u);
  EXPECT_EQ(bits(off.mul(f(0x3f7fffffu), f(0x00800000u))), 0x00800000u);
  // Denormal results and operands flush to a zero of their sign.
  EXPECT_EQ(bits(on.mul(f(0x00800000u), 0.5f)), 0u);
  EXPECT_EQ(bits(off.mul(f(0x00800000u), 0.5f)), 0x00400000u);
  EXPECT_EQ(bits(on.add(f(0x80000005u), -0.0f)), 0x80000000u);
  EXPECT_EQ(bits(off.add(f(0x80000005u), -0.0f)), 0x80000005u);
  EXPECT_EQ(bits(on.add(f(0x00800001u), f(0x80800000u))), 0u);  // 2^-149: flushed
  EXPECT_EQ(bits(off.add(f(0x00800001u), f(0x80800000u))), 1u);
  // Ordinary values are one rounded operation.
  EXPECT_EQ(on.add(1.0f, 0x1p-24f), 1.0f);
  EXPECT_EQ(off.mul(3.0f, 0.1f), 3.0f * 0.1f);
}

}  // namespace
}  // namespace test_fp32_nan_rules
}  // namespace npukit
