// 32-bit bitwise operations and shifts: the core against hand-computed words
// (counts 0, +-1, +-31, +-32, min/max ints), every okk.h function through
// local memory, and the shift-count rules with their messages.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "npu_test_util.hpp"
#include "npukit/error.hpp"
#include "npukit/ops/int32_bitwise.hpp"

namespace npukit::npu::test {
namespace test_npu_okk_bitwise {
namespace {

uint32_t u(int32_t v) {
  return static_cast<uint32_t>(v);
}

TEST(Int32Bitwise, AndOrXor) {
  EXPECT_EQ(int32_op(Int32Op::bit_and, 0xF0F0F0F0u, 0x0FF00FF0u), 0x00F000F0u);
  EXPECT_EQ(int32_op(Int32Op::bit_or, 0xF0F0F0F0u, 0x0FF00FF0u), 0xFFF0FFF0u);
  EXPECT_EQ(int32_op(Int32Op::bit_xor, 0xF0F0F0F0u, 0x0FF00FF0u), 0xFF00FF00u);
  EXPECT_EQ(int32_op(Int32Op::bit_xor, 0xFFFFFFFFu, 0x12345678u), 0xEDCBA987u);
}

TEST(Int32Bitwise, ArithmeticShift) {
  const Int32Op a = Int32Op::arithmetic_shift;
  EXPECT_EQ(int32_op(a, u(-8), u(0)), u(-8));
  EXPECT_EQ(int32_op(a, u(-8), u(-1)), u(-4));
  EXPECT_EQ(int32_op(a, u(-8), u(-4)), u(-1));  // floor(-8 / 16)
  EXPECT_EQ(int32_op(a, u(-7), u(-1)), u(-4));  // floor(-3.5)
  EXPECT_EQ(int32_op(a, u(7), u(-1)), 3u);
  EXPECT_EQ(int32_op(a, u(INT32_MIN), u(-31)), u(-1));
  EXPECT_EQ(int32_op(a, u(INT32_MIN), u(-32)), u(-1));
  EXPECT_EQ(int32_op(a, u(INT32_MAX), u(-30)), 1u);
  EXPECT_EQ(int32_op(a, u(INT32_MAX), u(-32)), 0u);
  EXPECT_EQ(int32_op(a, 1u, u(31)), 0x80000000u);
  EXPECT_EQ(int32_op(a, 3u, u(31)), 0x80000000u);  // bits shifted out
  EXPECT_EQ(int32_op(a, u(-1), u(32)), 0u);
  EXPECT_EQ(int32_op(a, u(-3), u(1)), u(-6));
  EXPECT_THROW(int32_op(a, 1u, u(33)), Error);
  EXPECT_THROW(int32_op(a, 1u, u(-33)), Error);
}

TEST(Int32Bitwise, LogicalShift) {
  const Int32Op l = Int32Op::logical_shift;
  EXPECT_EQ(int32_op(l, 0x80000000u, u(-31)), 1u);
  EXPECT_EQ(int32_op(l, 0x80000000u, u(-32)), 0u);
  EXPECT_EQ(int32_op(l, 0xFFFFFFFFu, u(-4)), 0x0FFFFFFFu);
  EXPECT_EQ(int32_op(l, 0xFFFFFFFFu, u(4)), 0xFFFFFFF0u);
  EXPECT_EQ(int32_op(l, 0xFFFFFFFFu, u(32)), 0u);
  EXPECT_EQ(int32_op(l, 0x12345678u, u(0)), 0x12345678u);
  EXPECT_EQ(int32_op(l, 1u, u(31)), 0x80000000u);
  EXPECT_THROW(int32_op(l, 1u, u(40)), Error);
}

TEST(Int32Bitwise, ArraysAndLengthCheck) {
  const std::vector<uint32_t> a = {1u, 2u, 0x80000000u}, b = {u(1), u(-1), u(-31)};
  std::vector<uint32_t> y(3);
  int32_binary(Int32Op::logical_shift, a, b, y);
  EXPECT_EQ(y, (std::vector<uint32_t>{2u, 1u, 1u}));
  int32_binary(Int32Op::arithmetic_shift, a, b, y);
  EXPECT_EQ(y, (std::vector<uint32_t>{2u, 1u, u(-1)}));
  std::vector<uint32_t> short_y(2);
  EXPECT_THROW(int32_binary(Int32Op::bit_and, a, b, short_y), Error);
  EXPECT_STREQ(int32_op_name(Int32Op::bit_xor), "xor");
}

class OkkBitwise : public OkkTest {};

const dim4 kS{1, 2, 1, 3};

TEST_F(OkkBitwise, AndOrXorTensorAndConstant) {
  put(0, kS, {0xF0F0F0F0u, 0xFFFFFFFFu, 0u, 0x12345678u, 0x80000000u, 7u});
  put(1024, kS, {0x0FF00FF0u, 0x0000FFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0x80000001u, 5u});
  okk_bdc_32bit_and(2048, 0, 1024, &kS, nullptr, nullptr, nullptr);
  EXPECT_EQ(get(2048, kS),
            (std::vector<uint32_t>{0x00F000F0u, 0x0000FFFFu, 0u, 0x12345678u, 0x80000000u, 5u}));
  okk_bdc_32bit_or(2048, 0, 1024, &kS, nullptr, nullptr, nullptr);
  EXPECT_EQ(get(2048, kS), (std::vector<uint32_t>{0xFFF0FFF0u, 0xFFFFFFFFu, 0xFFFFFFFFu,
                                                  0xFFFFFFFFu, 0x80000001u, 7u}));
  okk_bdc_32bit_xor(2048, 0, 1024, &kS, nullptr, nullptr, nullptr);
  EXPECT_EQ(get(2048, kS),
            (std::vector<uint32_t>{0xFF00FF00u, 0xFFFF0000u, 0xFFFFFFFFu, 0xEDCBA987u, 1u, 2u}));
  x32 c;
  c.u32 = 0x0000FF00u;
  okk_bdc_32bit_and_C(2048, 0, c, &kS, nullptr, nullptr);
  EXPECT_EQ(get(2048, kS), (std::vector<uint32_t>{0xF000u, 0xFF00u, 0u, 0x5600u, 0u, 0u}));
  okk_bdc_32bit_or_C(2048, 0, c, &kS, nullptr, nullptr);
  EXPECT_EQ(get(2048, kS), (std::vector<uint32_t>{0xF0F0FFF0u, 0xFFFFFFFFu, 0xFF00u, 0x1234FF78u,
                                                  0x8000FF00u, 0xFF07u}));
  okk_bdc_32bit_xor_C(2048, 0, c, &kS, nullptr, nullptr);
  EXPECT_EQ(get(2048, kS), (std::vector<uint32_t>{0xF0F00FF0u, 0xFFFF00FFu, 0xFF00u, 0x1234A978u,
                                                  0x8000FF00u, 0xFF07u}));
}

TEST_F(OkkBitwise, ShiftsByTensor) {
  put(0, kS, {u(-8), u(-8), 1u, 0x80000000u, 0xFFFFFFFFu, 5u});
  put(1024, kS, {u(-1), u(-32), u(31), u(-31), u(32), 0u});
  okk_bdc_32bit_arithmetic_shift(2048, 0, 1024, &kS, nullptr, nullptr, nullptr);
  EXPECT_EQ(get(2048, kS), (std::vector<uint32_t>{u(-4), u(-1), 0x80000000u, u(-1), 0u, 5u}));
  okk_bdc_32bit_logical_shift(2048, 0, 1024, &kS, nullptr, nullptr, nullptr);
  EXPECT_EQ(get(2048, kS), (std::vector<uint32_t>{0x7FFFFFFCu, 0u, 0x80000000u, 1u, 0u, 5u}));
}

TEST_F(OkkBitwise, ShiftsByConstantAndOfConstant) {
  put(0, kS, {u(-8), 16u, 1u, 0x80000000u, u(-1), 3u});
  okk_bdc_32bit_arithmetic_shift_C(2048, 0, -2, &kS, nullptr, nullptr);
  EXPECT_EQ(get(2048, kS), (std::vector<uint32_t>{u(-2), 4u, 0u, 0xE0000000u, u(-1), 0u}));
  okk_bdc_32bit_logical_shift_C(2048, 0, -2, &kS, nullptr, nullptr);
  EXPECT_EQ(get(2048, kS),
            (std::vector<uint32_t>{0x3FFFFFFEu, 4u, 0u, 0x20000000u, 0x3FFFFFFFu, 0u}));
  okk_bdc_32bit_logical_shift_C(2048, 0, 3, &kS, nullptr, nullptr);
  EXPECT_EQ(get(2048, kS), (std::vector<uint32_t>{u(-64), 128u, 8u, 0u, u(-8), 24u}));
  // The constant shifted by each element (counts in [-32, 32]).
  put(1024, kS, {u(-1), u(1), u(0), u(-31), u(32), u(-32)});
  okk_bdc_32bit_C_arithmetic_shift(2048, 1024, INT32_MIN, &kS, nullptr, nullptr);
  EXPECT_EQ(get(2048, kS), (std::vector<uint32_t>{0xC0000000u, 0u, 0x80000000u, u(-1), 0u, u(-1)}));
  okk_bdc_32bit_C_logical_shift(2048, 1024, 0x80000000u, &kS, nullptr, nullptr);
  EXPECT_EQ(get(2048, kS), (std::vector<uint32_t>{0x40000000u, 0u, 0x80000000u, 1u, 0u, 0u}));
}

TEST_F(OkkBitwise, StridedOperandsAndInPlace) {
  // src0 is every second word of a (1, 1, 1, 6) row; the result overwrites src1.
  const dim4 s{1, 1, 1, 3}, wide{1, 1, 1, 6}, st{6, 6, 6, 2};
  put(0, wide, {1u, 99u, 2u, 99u, 3u, 99u});
  put(1024, s, {0x10u, 0x20u, 0x30u});
  okk_bdc_32bit_or(1024, 0, 1024, &s, nullptr, &st, nullptr);
  EXPECT_EQ(get(1024, s), (std::vector<uint32_t>{0x11u, 0x22u, 0x33u}));
}

TEST_F(OkkBitwise, RuleShiftCountRange) {
  const dim4 s{1, 1, 1, 2};
  put(0, s, {1u, 2u});
  put(1024, s, {u(3), u(33)});
  expect_rule([&] { okk_bdc_32bit_arithmetic_shift(2048, 0, 1024, &s, nullptr, nullptr, nullptr); },
              {"okk_bdc_32bit_arithmetic_shift", "src1_addr", "element (0, 0, 0, 1) = 33",
               "shift counts in [-32, 32]"});
  expect_rule([&] { okk_bdc_32bit_logical_shift_C(2048, 0, -33, &s, nullptr, nullptr); },
              {"okk_bdc_32bit_logical_shift_C", "parameter 'C' = -33", "[-32, 32]"});
  expect_rule([&] { okk_bdc_32bit_C_logical_shift(2048, 1024, 1u, &s, nullptr, nullptr); },
              {"okk_bdc_32bit_C_logical_shift", "src_addr", "= 33"});
}

TEST_F(OkkBitwise, RuleAddressesAndNpu) {
  const dim4 s{1, 1, 1, 2};
  put(0, s, {1u, 2u});
  put(kNpuBytes, s, {1u, 2u});
  x32 c;
  c.u32 = 1;
  expect_rule([&] { okk_bdc_32bit_and_C(2050, 0, c, &s, nullptr, nullptr); },
              {"okk_bdc_32bit_and_C", "dst_addr", "divisible by 4"});
  expect_rule([&] { okk_bdc_32bit_xor(2048, 0, kNpuBytes, &s, nullptr, nullptr, nullptr); },
              {"okk_bdc_32bit_xor", "src1_addr", "starts on NPU 1"});
  const dim4 bad{1, 4096, 1, 1};
  expect_rule([&] { okk_bdc_32bit_or_C(2048, 0, c, &bad, nullptr, nullptr); },
              {"shape->c", "4096", "[1, 4095]"});
}

}  // namespace
}  // namespace test_npu_okk_bitwise
}  // namespace npukit::npu::test
