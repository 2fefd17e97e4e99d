// Fixed-point packed arithmetic: the core against hand-computed values
// (round-half-up right shift, saturation per result type, signedness of each
// operand, rshift 0 and 31, lshift 14), the 4N / 2N packing of the layout
// code against hand-placed bytes, every okk.h function against the core over
// its documented op types, and one test per rule with its message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "npu_test_util.hpp"
#include "npukit/error.hpp"
#include "npukit/npu/layout.hpp"
#include "npukit/ops/npu_packed_int.hpp"

namespace npukit::npu::test {
namespace test_npu_okk_fixed_point {
namespace {

FixedPointParams types(FixedType a, FixedType b, FixedType y, int rshift = 0) {
  FixedPointParams p;
  p.a = a;
  p.b = b;
  p.y = y;
  p.rshift = rshift;
  return p;
}

constexpr FixedType S8 = FixedType::s8, U8 = FixedType::u8, S16 = FixedType::s16,
                    U16 = FixedType::u16;

TEST(FixedPoint, TypeRanges) {
  EXPECT_EQ(fixed_min(S8), -128);
  EXPECT_EQ(fixed_max(S8), 127);
  EXPECT_EQ(fixed_max(U8), 255);
  EXPECT_EQ(fixed_min(S16), -32768);
  EXPECT_EQ(fixed_max(U16), 65535);
  EXPECT_STREQ(fixed_type_name(U16), "uint16");
}

TEST(FixedPoint, AddSubSaturateAndRoundHalfUp) {
  EXPECT_EQ(fixed_point_op(FixedOp::add, 100, 100, 0, types(S8, S8, S8)), 127);
  EXPECT_EQ(fixed_point_op(FixedOp::add, 100, 100, 0, types(S8, S8, S16)), 200);
  EXPECT_EQ(fixed_point_op(FixedOp::add, 100, 100, 0, types(S8, S8, S8, 1)), 100);  // 200 / 2
  EXPECT_EQ(fixed_point_op(FixedOp::add, -100, -100, 0, types(S8, S8, S8)), -128);
  EXPECT_EQ(fixed_point_op(FixedOp::add, -100, -100, 0, types(S8, S8, S8, 1)), -100);
  // Ties go up: 3/2 = 1.5 -> 2, -3/2 = -1.5 -> -1, 5/4 = 1.25 -> 1, 6/4 = 1.5 -> 2.
  EXPECT_EQ(fixed_point_op(FixedOp::add, 1, 2, 0, types(S8, S8, S8, 1)), 2);
  EXPECT_EQ(fixed_point_op(FixedOp::add, -1, -2, 0, types(S8, S8, S8, 1)), -1);
  EXPECT_EQ(fixed_point_op(FixedOp::add, 2, 3, 0, types(S8, S8, S8, 2)), 1);
  EXPECT_EQ(fixed_point_op(FixedOp::add, 3, 3, 0, types(S8, S8, S8, 2)), 2);
  EXPECT_EQ(fixed_point_op(FixedOp::add, 250, 10, 0, types(U8, U8, U8)), 255);
  EXPECT_EQ(fixed_point_op(FixedOp::add, 250, 10, 0, types(U8, U8, U16)), 260);
  EXPECT_EQ(fixed_point_op(FixedOp::add, 255, -128, 0, types(U8, S8, S8)), 127);
  EXPECT_EQ(fixed_point_op(FixedOp::add, 0, -128, 0, types(U8, S8, S8)), -128);
  EXPECT_EQ(fixed_point_op(FixedOp::sub, 0, 255, 0, types(U8, U8, S8)), -128);
  EXPECT_EQ(fixed_point_op(FixedOp::sub, 0, 255, 0, types(U8, U8, S16)), -255);
  EXPECT_EQ(fixed_point_op(FixedOp::sub, 32767, -32768, 0, types(S16, S16, S16)), 32767);
  EXPECT_EQ(fixed_point_op(FixedOp::sub, 32767, -32768, 0, types(S16, S16, S16, 1)), 32767);
  EXPECT_EQ(fixed_point_op(FixedOp::sub, -32768, 32767, 0, types(S16, S16, S8, 8)), -128);
  EXPECT_EQ(fixed_point_op(FixedOp::add, 65535, 65535, 0, types(U16, U16, U16, 31)), 0);
  EXPECT_EQ(fixed_point_op(FixedOp::add, 65535, 65535, 0, types(U16, U16, U8, 9)), 255);
  EXPECT_EQ(fixed_point_op(FixedOp::add, 65535, 65535, 0, types(U16, U16, U8, 10)), 128);
}

TEST(FixedPoint, MulAndMac) {
  EXPECT_EQ(fixed_point_op(FixedOp::mul, -128, -128, 0, types(S8, S8, S16)), 16384);
  EXPECT_EQ(fixed_point_op(FixedOp::mul, -128, -128, 0, types(S8, S8, S8)), 127);
  EXPECT_EQ(fixed_point_op(FixedOp::mul, -128, -128, 0, types(S8, S8, S8, 7)), 127);  // 128
  EXPECT_EQ(fixed_point_op(FixedOp::mul, -128, -128, 0, types(S8, S8, S8, 8)), 64);
  EXPECT_EQ(fixed_point_op(FixedOp::mul, -128, 127, 0, types(S8, S8, S8, 8)), -63);  // -63.5 -> -63
  EXPECT_EQ(fixed_point_op(FixedOp::mul, 255, -128, 0, types(U8, S8, S16)), -32640);
  EXPECT_EQ(fixed_point_op(FixedOp::mul, 255, 255, 0, types(U8, U8, U16)), 65025);
  EXPECT_EQ(fixed_point_op(FixedOp::mul, 255, 255, 0, types(U8, U8, U8, 8)), 254);  // 254.0039
  EXPECT_EQ(fixed_point_op(FixedOp::mul, 255, 255, 0, types(U8, U8, U16, 31)), 0);
  FixedPointParams p = types(S8, S8, S16, 2);
  p.old = S16;
  p.lshift = 2;
  // (1000 * 4 + 10 * 10 + 2) >> 2 = 1025 (1025 exactly).
  EXPECT_EQ(fixed_point_op(FixedOp::mac, 10, 10, 1000, p), 1025);
  // (-3 * 4 + 1 * 2 + 2) >> 2 = -2: -10/4 = -2.5 -> -2 (ties up).
  EXPECT_EQ(fixed_point_op(FixedOp::mac, 1, 2, -3, p), -2);
  p.rshift = 0;
  p.lshift = 14;
  EXPECT_EQ(fixed_point_op(FixedOp::mac, 1, 1, 32767, p), 32767);    // saturates
  EXPECT_EQ(fixed_point_op(FixedOp::mac, 1, 1, -32768, p), -32768);  // saturates
  p.lshift = 0;
  EXPECT_EQ(fixed_point_op(FixedOp::mac, -128, 127, 0, p), -16256);
  FixedPointParams q = types(U8, U8, U16);
  q.old = U16;
  EXPECT_EQ(fixed_point_op(FixedOp::mac, 255, 255, 65535, q), 65535);
  EXPECT_EQ(fixed_point_op(FixedOp::mac, 255, 255, 500, q), 65525);
  q.old = S16;  // an int16 old value into an unsigned result
  EXPECT_EQ(fixed_point_op(FixedOp::mac, 1, 1, -5, q), 0);
}

TEST(FixedPoint, MaxMinAndWrapOption) {
  EXPECT_EQ(fixed_point_op(FixedOp::max, -128, 127, 0, types(S8, S8, S8)), 127);
  EXPECT_EQ(fixed_point_op(FixedOp::min, 0, 255, 0, types(U8, U8, U8)), 0);
  EXPECT_EQ(fixed_point_op(FixedOp::max, -32768, -1, 0, types(S16, S16, S16)), -1);
  EXPECT_EQ(fixed_point_op(FixedOp::min, 65535, 65534, 0, types(U16, U16, U16)), 65534);
  FixedPointParams w = types(S8, S8, S8);
  w.saturate = false;
  EXPECT_EQ(fixed_point_op(FixedOp::add, 100, 100, 0, w), -56);  // 200 - 256
  w.y = U8;
  EXPECT_EQ(fixed_point_op(FixedOp::add, -100, -100, 0, w), 56);  // -200 + 256
}

TEST(FixedPoint, ValidatesOperandsAndShifts) {
  EXPECT_THROW(fixed_point_op(FixedOp::add, 128, 0, 0, types(S8, S8, S8)), Error);
  EXPECT_THROW(fixed_point_op(FixedOp::add, 0, -1, 0, types(S8, U8, S8)), Error);
  EXPECT_THROW(fixed_point_op(FixedOp::add, 0, 0, 0, types(S8, S8, S8, 32)), Error);
  FixedPointParams p = types(S8, S8, S16);
  p.lshift = 15;
  EXPECT_THROW(fixed_point_op(FixedOp::mac, 0, 0, 0, p), Error);
  const std::vector<int32_t> a = {1, 2}, b = {3, 4};
  std::vector<int32_t> y(2);
  fixed_point_binary(FixedOp::add, a, b, {}, y, types(S8, S8, S8, 1));
  EXPECT_EQ(y, (std::vector<int32_t>{2, 3}));
  EXPECT_THROW(fixed_point_binary(FixedOp::mac, a, b, {}, y, p), Error);  // no old values
}

// ---- 4N / 2N packing ------------------------------------------------------

class Packed : public OkkTest {};

TEST_F(Packed, GatherAndScatterFollowTheStorageModes) {
  // int8 (N=6, C=2, H=1, W=2) in 4N at NPU 0 offset 0, aligned words: word
  // (m, c, 0, w) is on NPU c at byte 4*(m*32 + w); batch n is byte n % 4 of word m = n / 4.
  Machine& m = machine();
  const Dims logical{6, 2, 1, 2};
  const Dims words = packed_shape(logical, 1);
  EXPECT_EQ(words.n, 2);
  Place p{Space::local, 0, words, aligned_stride(m.config(), 0, words, 4), 4};
  EXPECT_EQ(p.stride.n, 32);
  std::vector<int32_t> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i) - 12;
  scatter_packed(v, p, 6, 1);
  // Element (5, 1, 0, 1): index 5*4 + 1*2 + 1 = 23 -> 11, NPU 1, word m=1, byte 4*(32+1) + 1.
  EXPECT_EQ(static_cast<int8_t>(*m.local(1, 4 * 33 + 1)), 11);
  // Element (2, 0, 0, 0): index 8 -> -4, NPU 0, word 0 byte 2.
  EXPECT_EQ(static_cast<int8_t>(*m.local(0, 2)), -4);
  // Dummy lanes (batches 6, 7) are written as 0, as the unit writes whole words.
  EXPECT_EQ(*m.written(0, 4 * 32 + 2), 1);
  EXPECT_EQ(*m.local(0, 4 * 32 + 3), 0);
  EXPECT_EQ(gather_packed("t", "x", p, 6, 1, true), v);
  // int16 in 2N: N=3 -> 2 words per position; batch n at bytes 2*(n%2).
  const Dims w2 = packed_shape({3, 1, 1, 1}, 2);
  EXPECT_EQ(w2.n, 2);
  Place q{Space::local, 1024, w2, aligned_stride(m.config(), 0, w2, 4), 4};
  scatter_packed({-2, 300, -32768}, q, 3, 2);
  int16_t lane;
  std::memcpy(&lane, m.local(0, 1024 + 2), 2);
  EXPECT_EQ(lane, 300);
  std::memcpy(&lane, m.local(0, 1024 + 4 * 32), 2);
  EXPECT_EQ(lane, -32768);
  EXPECT_EQ(gather_packed("t", "x", q, 3, 2, true), (std::vector<int32_t>{-2, 300, -32768}));
  EXPECT_EQ(gather_packed("t", "x", q, 3, 2, false), (std::vector<int32_t>{65534, 300, 32768}));
  // A gather reads only real lanes: batch 3 of a 2N place whose second word
  // was never written is reported.
  Place r{Space::local, 4096, w2, q.stride, 4};
  scatter_packed({7}, Place{Space::local, 4096, {1, 1, 1, 1}, q.stride, 4}, 1, 2);
  EXPECT_EQ(gather_packed("t", "x", r, 2, 2, true), (std::vector<int32_t>{7, 0}));
  try {
    gather_packed("fn", "src", r, 3, 2, true);  // batch 2 (word 1) was never written
    ADD_FAILURE() << "no violation";
  } catch (const RuleViolation& e) {
    EXPECT_NE(std::string(e.what()).find("element (2, 0, 0, 0)"), std::string::npos) << e.what();
  }
}

// ---- okk.h functions ---------------------------------------------------------

// Logical values -> packed words (N, C, H, W), lanes per the storage mode.
std::vector<uint32_t> pack(const std::vector<int32_t>& v, const dim4& s, int lane_bytes) {
  const int lanes = 4 / lane_bytes;
  const int M = (s.n + lanes - 1) / lanes, chw = s.c * s.h * s.w;
  std::vector<uint32_t> words(static_cast<size_t>(M * chw), 0u);
  for (int n = 0; n < s.n; ++n)
    for (int i = 0; i < chw; ++i) {
      const uint32_t mask = lane_bytes == 1 ? 0xffu : 0xffffu;
      const uint32_t bits_v = static_cast<uint32_t>(v[static_cast<size_t>(n * chw + i)]) & mask;
      words[static_cast<size_t>((n / lanes) * chw + i)] |= bits_v << (8 * lane_bytes * (n % lanes));
    }
  return words;
}

std::vector<int32_t> unpack(const std::vector<uint32_t>& words, const dim4& s, int lane_bytes,
                            bool is_signed) {
  const int lanes = 4 / lane_bytes, chw = s.c * s.h * s.w;
  std::vector<int32_t> v(static_cast<size_t>(s.n * chw));
  for (int n = 0; n < s.n; ++n)
    for (int i = 0; i < chw; ++i) {
      const uint32_t w =
          words[static_cast<size_t>((n / lanes) * chw + i)] >> (8 * lane_bytes * (n % lanes));
      int32_t x = static_cast<int32_t>(lane_bytes == 1 ? (w & 0xffu) : (w & 0xffffu));
      if (is_signed && x >= (lane_bytes == 1 ? 128 : 32768)) x -= lane_bytes == 1 ? 256 : 65536;
      v[static_cast<size_t>(n * chw + i)] = x;
    }
  return v;
}

dim4 words_shape(const dim4& s, int lane_bytes) {
  return {(s.n + 4 / lane_bytes - 1) / (4 / lane_bytes), s.c, s.h, s.w};
}

class OkkFixed : public OkkTest {
 protected:
  const dim4 s{5, 2, 1, 3};  // N = 5: dummy lanes in both modes
  void put_packed(local_addr_t addr, const std::vector<int32_t>& v, int lane_bytes) {
    put(addr, words_shape(s, lane_bytes), pack(v, s, lane_bytes));
  }
  std::vector<int32_t> get_packed(local_addr_t addr, int lane_bytes, bool is_signed) {
    return unpack(get(addr, words_shape(s, lane_bytes)), s, lane_bytes, is_signed);
  }
  // 30 values spread over a type's range, ends included.
  static std::vector<int32_t> spread(FixedType t, int salt) {
    std::vector<int32_t> v(30);
    const int64_t lo = fixed_min(t), span = fixed_max(t) - fixed_min(t);
    for (size_t i = 0; i < v.size(); ++i)
      v[i] =
          static_cast<int32_t>(lo + (static_cast<int64_t>(i) * 7919 + salt * 104729) % (span + 1));
    v[0] = static_cast<int32_t>(fixed_min(t));
    v[1] = static_cast<int32_t>(fixed_max(t));
    return v;
  }
};

struct OpCase {
  op_type_t t;
  FixedType a, b, y;
};
const OpCase kAddCases[] = {{S8_OP_S8_TO_S8, S8, S8, S8},       {S8_OP_U8_TO_S16, S8, U8, S16},
                            {U8_OP_U8_TO_U8, U8, U8, U8},       {U8_OP_S8_TO_S8, U8, S8, S8},
                            {S16_OP_S16_TO_S8, S16, S16, S8},   {U16_OP_S16_TO_S16, U16, S16, S16},
                            {U16_OP_U16_TO_U16, U16, U16, U16}, {S16_OP_U16_TO_S16, S16, U16, S16}};

int bytes(FixedType t) {
  return fixed_bits(t) / 8;
}

TEST_F(OkkFixed, AddSubAgainstTheCoreOverOpTypesAndShifts) {
  for (const OpCase& c : kAddCases)
    for (int r : {0, 1, 3, 31}) {
      const auto a = spread(c.a, 1), b = spread(c.b, 2);
      put_packed(0, a, bytes(c.a));
      put_packed(4096, b, bytes(c.b));
      okk_bdc_fixed_point_packed_add(8192, 0, 4096, &s, nullptr, nullptr, nullptr, c.t, r);
      const auto y = get_packed(8192, bytes(c.y), fixed_signed(c.y));
      for (size_t i = 0; i < a.size(); ++i)
        ASSERT_EQ(y[i], fixed_point_op(FixedOp::add, a[i], b[i], 0, types(c.a, c.b, c.y, r)))
            << "op_type " << c.t << " rshift " << r << " element " << i;
    }
  // sub with an unsigned pair into a signed result.
  const auto a = spread(U8, 3), b = spread(U8, 4);
  put_packed(0, a, 1);
  put_packed(4096, b, 1);
  okk_bdc_fixed_point_packed_sub(8192, 0, 4096, &s, nullptr, nullptr, nullptr, U8_OP_U8_TO_S16, 1);
  const auto y = get_packed(8192, 2, true);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(y[i], (a[i] - b[i] + 1) >> 1) << i;  // hand formula, always in int16
}

TEST_F(OkkFixed, ConstantForms) {
  std::vector<int32_t> x(30);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i * 9) - 128;  // -128..124
  x[29] = 127;
  put_packed(0, x, 1);
  okk_bdc_fixed_point_packed_add_C(8192, 0, -100, &s, nullptr, nullptr, S8_OP_S8_TO_S8, 0);
  auto y = get_packed(8192, 1, true);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], std::max(x[i] - 100, -128)) << i;
  okk_bdc_fixed_point_packed_sub_C(8192, 0, 100, &s, nullptr, nullptr, S8_OP_S8_TO_S16, 2);
  y = get_packed(8192, 2, true);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], (x[i] - 100 + 2) >> 2) << i;
  okk_bdc_fixed_point_packed_C_sub(8192, 0, 50, &s, nullptr, nullptr, S8_OP_S8_TO_S16, 0);
  y = get_packed(8192, 2, true);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], 50 - x[i]) << i;
  okk_bdc_fixed_point_packed_mul_C(8192, 0, -3, &s, nullptr, nullptr, S8_OP_S8_TO_S8, 1);
  y = get_packed(8192, 1, true);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(y[i], std::clamp((x[i] * -3 + 1) >> 1, -128, 127)) << i;
  okk_bdc_fixed_point_packed_max_C(8192, 0, 0, &s, nullptr, nullptr, S8_OP_S8_TO_S8);
  y = get_packed(8192, 1, true);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], std::max(x[i], 0)) << i;
  okk_bdc_fixed_point_packed_min_C(8192, 0, -5, &s, nullptr, nullptr, S8_OP_S8_TO_S8);
  y = get_packed(8192, 1, true);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], std::min(x[i], -5)) << i;
}

TEST_F(OkkFixed, MulMacMaxMin) {
  const auto a = spread(S8, 5), b = spread(U8, 6);
  put_packed(0, a, 1);
  put_packed(4096, b, 1);
  okk_bdc_fixed_point_packed_mul(8192, 0, 4096, &s, nullptr, nullptr, nullptr, S8_OP_U8_TO_S16, 0);
  auto y = get_packed(8192, 2, true);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(y[i], a[i] * b[i]) << i;  // fits int16
  // mac into the int16 products just written: (old << 1 + a*b + 4) >> 3.
  const std::vector<int32_t> old = y;
  okk_bdc_fixed_point_packed_mac(8192, 0, 4096, &s, nullptr, nullptr, nullptr, true,
                                 S8_OP_U8_TO_S16, 1, 3);
  y = get_packed(8192, 2, true);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(y[i], std::clamp((old[i] * 2 + a[i] * b[i] + 4) >> 3, -32768, 32767)) << i;
  okk_bdc_fixed_point_packed_mac_C(8192, 0, -2, &s, nullptr, nullptr, true, S8_OP_S8_TO_S16, 0, 0);
  const auto z = get_packed(8192, 2, true);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(z[i], std::clamp(y[i] - 2 * a[i], -32768, 32767)) << i;
  const auto p = spread(S16, 7), q = spread(S16, 8);
  put_packed(0, p, 2);
  put_packed(4096, q, 2);
  okk_bdc_fixed_point_packed_max(8192, 0, 4096, &s, nullptr, nullptr, nullptr, S16_OP_S16_TO_S16);
  y = get_packed(8192, 2, true);
  for (size_t i = 0; i < p.size(); ++i) EXPECT_EQ(y[i], std::max(p[i], q[i])) << i;
  okk_bdc_fixed_point_packed_min(8192, 0, 4096, &s, nullptr, nullptr, nullptr, U16_OP_U16_TO_U16);
  y = get_packed(8192, 2, false);
  const auto pu = unpack(pack(p, s, 2), s, 2, false), qu = unpack(pack(q, s, 2), s, 2, false);
  for (size_t i = 0; i < p.size(); ++i) EXPECT_EQ(y[i], std::min(pu[i], qu[i])) << i;
}

// ---- rules -----------------------------------------------------------------------

TEST_F(OkkFixed, RuleOpTypeChoices) {
  put_packed(0, spread(S8, 1), 1);
  put_packed(4096, spread(S8, 2), 1);
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_max(8192, 0, 4096, &s, nullptr, nullptr, nullptr,
                                       S8_OP_U8_TO_S8);
      },
      {"okk_bdc_fixed_point_packed_max", "op_type", "S8_OP_U8_TO_S8",
       "one of S8_OP_S8_TO_S8 U8_OP_U8_TO_U8 S16_OP_S16_TO_S16 U16_OP_U16_TO_U16"});
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_add(8192, 0, 4096, &s, nullptr, nullptr, nullptr, U8_OP_U8_TO_S8,
                                       0);
      },
      {"okk_bdc_fixed_point_packed_add", "U8_OP_U8_TO_S8"});
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_mul(8192, 0, 4096, &s, nullptr, nullptr, nullptr,
                                       S16_OP_S16_TO_S16, 0);
      },
      {"okk_bdc_fixed_point_packed_mul", "S16_OP_S16_TO_S16"});
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_mac(8192, 0, 4096, &s, nullptr, nullptr, nullptr, true,
                                       U8_OP_U8_TO_U16, 0, 0);
      },
      {"okk_bdc_fixed_point_packed_mac", "U8_OP_U8_TO_U16"});
}

TEST_F(OkkFixed, RuleShiftsAndConstantRange) {
  put_packed(0, spread(U8, 1), 1);
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_add_C(8192, 0, 1, &s, nullptr, nullptr, U8_OP_U8_TO_U8, 32);
      },
      {"rshift", "= 32", "[0, 31]"});
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_mac_C(8192, 0, 1, &s, nullptr, nullptr, false, U8_OP_U8_TO_U16,
                                         15, 0);
      },
      {"lshift", "= 15", "[0, 14]"});
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_add_C(8192, 0, 256, &s, nullptr, nullptr, U8_OP_U8_TO_U8, 0);
      },
      {"okk_bdc_fixed_point_packed_add_C", "parameter 'C' = 256", "[0, 255]"});
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_mul_C(8192, 0, -129, &s, nullptr, nullptr, U8_OP_S8_TO_S8, 0);
      },
      {"parameter 'C' = -129", "[-128, 127]"});
}

TEST_F(OkkFixed, RuleFirstNpuAddressAndWrites) {
  put_packed(0, spread(S8, 1), 1);
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_max_C(kNpuBytes + 8192, 0, 0, &s, nullptr, nullptr,
                                         S8_OP_S8_TO_S8);
      },
      {"dst_addr", "starts on NPU 1", "first NPU (NPU 0)"});
  expect_rule(
      [&] { okk_bdc_fixed_point_packed_max_C(8194, 0, 0, &s, nullptr, nullptr, S8_OP_S8_TO_S8); },
      {"dst_addr", "divisible by 4"});
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_max_C(8192, 16384, 0, &s, nullptr, nullptr, S8_OP_S8_TO_S8);
      },
      {"src_addr", "never written"});
  // mac reads the old destination: it must have been written.
  put_packed(4096, spread(S8, 2), 1);
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_mac(20480, 0, 4096, &s, nullptr, nullptr, nullptr, true,
                                       S8_OP_S8_TO_S16, 0, 0);
      },
      {"okk_bdc_fixed_point_packed_mac", "dst_addr", "never written"});
}

// ---- int8 / uint8 -> fp32 casts ----------------------------------------------------

TEST_F(OkkFixed, Int8ToFp32PlainLayouts) {
  const dim4 sh{2, 3, 1, 5};
  std::vector<int8_t> bytes(30);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<int8_t>(i * 9 - 128);
  bytes[29] = 127;
  const uint64_t g = machine().allocate(30);
  std::memcpy(machine().global(g, 30), bytes.data(), 30);
  okk_gdma_8bit_cpy_S2L(0, g, &sh, nullptr, nullptr);  // the 8-bit aligned layout
  okk_bdc_int8_to_fp32(4096, 0, 8192, &sh, true, true);
  std::vector<float> y = get_f32(4096, sh);
  for (size_t i = 0; i < bytes.size(); ++i) EXPECT_EQ(y[i], static_cast<float>(bytes[i])) << i;
  okk_bdc_int8_to_fp32(4096, 0, 8192, &sh, false, true);
  y = get_f32(4096, sh);
  for (size_t i = 0; i < bytes.size(); ++i)
    EXPECT_EQ(y[i], static_cast<float>(static_cast<uint8_t>(bytes[i]))) << i;
  // Compact: 8-bit C stride ALIGN(H*W, 4) = 8 (documented), fp32 C stride H*W = 5.
  const dim4 st8{8, 8, 5, 1}, st32{5, 5, 5, 1};
  okk_gdma_8bit_cpy_S2L(12288, g, &sh, &st8, nullptr);
  okk_bdc_int8_to_fp32(16384, 12288, 20480, &sh, true, false);
  y = get_f32(16384, sh, &st32);
  for (size_t i = 0; i < bytes.size(); ++i) EXPECT_EQ(y[i], static_cast<float>(bytes[i])) << i;
}

TEST_F(OkkFixed, Int8ToFp32From4N) {
  const auto v = spread(S8, 9);
  put_packed(0, v, 1);
  okk_bdc_4N_int8_to_fp32(8192, 0, 12288, &s, true, true);
  std::vector<float> y = get_f32(8192, s);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(y[i], static_cast<float>(v[i])) << i;
  okk_bdc_4N_int8_to_fp32(8192, 0, 12288, &s, false, true);
  y = get_f32(8192, s);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(y[i], static_cast<float>(v[i] & 0xff)) << i;
}

TEST_F(OkkFixed, RuleInt8CastWorkAndNpu) {
  put_packed(0, spread(S8, 9), 1);
  expect_rule([&] { okk_bdc_4N_int8_to_fp32(8192, 0, 8192, &s, true, true); },
              {"okk_bdc_4N_int8_to_fp32", "work_addr", "overlaps dst_addr"});
  expect_rule([&] { okk_bdc_int8_to_fp32(8192, kNpuBytes, 12288, &s, true, true); },
              {"okk_bdc_int8_to_fp32", "src_addr", "starts on NPU 1"});
  expect_rule([&] { okk_bdc_int8_to_fp32(8192, 2, 12288, &s, true, true); },
              {"src_addr", "divisible by 4"});
}

// ---- 16-bit (2N) shifts, byte split and 16 x 8-bit products ------------------------

TEST(FixedPoint, ShiftKeepsTheTypesBits) {
  EXPECT_EQ(fixed_shift(S16, 1, 15), -32768);
  EXPECT_EQ(fixed_shift(S16, 16384, 1), -32768);  // wraps into the sign bit
  EXPECT_EQ(fixed_shift(S16, -1, 16), 0);
  EXPECT_EQ(fixed_shift(S16, -7, -1), -4);  // floor(-3.5)
  EXPECT_EQ(fixed_shift(S16, -32768, -15), -1);
  EXPECT_EQ(fixed_shift(S16, -32768, -16), -1);
  EXPECT_EQ(fixed_shift(S16, 32767, -16), 0);
  EXPECT_EQ(fixed_shift(S16, 123, 0), 123);
  EXPECT_EQ(fixed_shift(U16, 32768, -15), 1);
  EXPECT_EQ(fixed_shift(U16, 65535, 4), 65520);
  EXPECT_EQ(fixed_shift(U16, 65535, -16), 0);
  EXPECT_EQ(fixed_shift(U16, 1, 16), 0);
  EXPECT_EQ(fixed_shift(S8, 1, 7), -128);
  EXPECT_EQ(fixed_shift(S8, -128, -7), -1);
  EXPECT_THROW(fixed_shift(S8, 1, 9), Error);
  EXPECT_THROW(fixed_shift(S16, 1, -17), Error);
  EXPECT_THROW(fixed_shift(U16, -1, 1), Error);
}

// Six hand-computed values repeated over the fixture's 30 elements.
std::vector<int32_t> rep(const std::vector<int32_t>& six) {
  std::vector<int32_t> v;
  for (int i = 0; i < 5; ++i) v.insert(v.end(), six.begin(), six.end());
  return v;
}

TEST_F(OkkFixed, Shift16ByTensorAndConstant) {
  put_packed(0, rep({-8, 1, 16384, -32768, 7, 300}), 2);
  put_packed(4096, rep({-1, 15, 1, -16, 0, -2}), 2);
  okk_bdc_fixed_point_packed_16bit_arithmetic_shift(8192, 0, 4096, &s, nullptr, nullptr, nullptr);
  EXPECT_EQ(get_packed(8192, 2, true), rep({-4, -32768, -32768, -1, 7, 75}));
  // The same words as uint16: 0xFFF8, 1, 0x4000, 0x8000, 7, 300.
  okk_bdc_fixed_point_packed_16bit_logical_shift(8192, 0, 4096, &s, nullptr, nullptr, nullptr);
  EXPECT_EQ(get_packed(8192, 2, false), rep({32764, 32768, 32768, 0, 7, 75}));
  okk_bdc_fixed_point_packed_16bit_arithmetic_shift_C(8192, 0, -3, &s, nullptr, nullptr);
  EXPECT_EQ(get_packed(8192, 2, true), rep({-1, 0, 2048, -4096, 0, 37}));
  okk_bdc_fixed_point_packed_16bit_logical_shift_C(8192, 0, 4, &s, nullptr, nullptr);
  EXPECT_EQ(get_packed(8192, 2, false), rep({65408, 16, 0, 0, 112, 4800}));
  // A constant shifted by the tensor's counts.
  okk_bdc_fixed_point_packed_16bit_C_arithmetic_shift(8192, 4096, -100, &s, nullptr, nullptr);
  EXPECT_EQ(get_packed(8192, 2, true), rep({-50, 0, -200, -1, -100, -25}));
  okk_bdc_fixed_point_packed_16bit_C_logical_shift(8192, 4096, 0x8001, &s, nullptr, nullptr);
  EXPECT_EQ(get_packed(8192, 2, false), rep({16384, 32768, 2, 0, 32769, 8192}));
}

TEST_F(OkkFixed, SplitAndMultiplyBack) {
  put_packed(0, rep({0x1234, -2, 0x00FF, -32768, 0x7FFF, 0x0100}), 2);
  okk_bdc_fixed_point_packed_16bit_split_high_8bit(4096, 0, &s, nullptr, nullptr);
  EXPECT_EQ(get_packed(4096, 1, false), rep({0x12, 0xFF, 0x00, 0x80, 0x7F, 0x01}));
  okk_bdc_fixed_point_packed_16bit_split_low_8bit(8192, 0, 12288, &s, nullptr, nullptr, nullptr);
  EXPECT_EQ(get_packed(8192, 1, false), rep({0x34, 0xFE, 0xFF, 0x00, 0xFF, 0x00}));
  // (high * 256 + low) * src1 with rounding: signed src0 and src1, rshift 1.
  put_packed(16384, rep({2, -1, 3, 1, -2, 100}), 1);
  okk_bdc_fixed_point_packed_16bit_mul_8bit(20480, 4096, 8192, 16384, &s, nullptr, nullptr, nullptr,
                                            nullptr, S16_MUL_S8_TO_S16, 1);
  EXPECT_EQ(get_packed(20480, 2, true), rep({4660, 1, 383, -16384, -32767, 12800}));
  // Unsigned: src0 = 4660, 65534, 255, 32768, 32767, 256; src1 = 2, 255, 3, 1, 254, 100.
  okk_bdc_fixed_point_packed_16bit_mul_8bit(20480, 4096, 8192, 16384, &s, nullptr, nullptr, nullptr,
                                            nullptr, U16_MUL_U8_TO_U16, 0);
  EXPECT_EQ(get_packed(20480, 2, false), rep({9320, 65535, 765, 32768, 65535, 25600}));
  // int16 x uint8 through the work tensors, rshift 2.
  okk_bdc_fixed_point_packed_s16_mul_u8_to_s16(20480, 0, 16384, 24576, 28672, 32768, &s, nullptr,
                                               nullptr, nullptr, nullptr, nullptr, nullptr, 2);
  EXPECT_EQ(get_packed(20480, 2, true), rep({2330, -127, 191, -8192, 32767, 6400}));
}

TEST_F(OkkFixed, RuleShift16AndMulTypes) {
  put_packed(0, rep({1, 2, 3, 4, 5, 6}), 2);
  put_packed(4096, rep({1, 2, 3, 17, 0, 0}), 2);
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_16bit_arithmetic_shift(8192, 0, 4096, &s, nullptr, nullptr,
                                                          nullptr);
      },
      {"okk_bdc_fixed_point_packed_16bit_arithmetic_shift", "src1_addr",
       "element (0, 1, 0, 0) = 17", "[-16, 16]"});
  expect_rule(
      [&] { okk_bdc_fixed_point_packed_16bit_logical_shift_C(8192, 0, -17, &s, nullptr, nullptr); },
      {"parameter 'C' = -17", "[-16, 16]"});
  put_packed(12288, rep({1, 1, 1, 1, 1, 1}), 1);
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_16bit_mul_8bit(16384, 12288, 12288, 12288, &s, nullptr, nullptr,
                                                  nullptr, nullptr, S16_MUL_U8_TO_S16, 0);
      },
      {"mul_type", "S16_MUL_U8_TO_S16", "unsupported on BM1684"});
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_16bit_split_low_8bit(8192, 0, 8192, &s, nullptr, nullptr,
                                                        nullptr);
      },
      {"work_addr", "overlaps dst_addr"});
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_s16_mul_u8_to_s16(16384, 0, 12288, 16384, 20480, 24576, &s,
                                                     nullptr, nullptr, nullptr, nullptr, nullptr,
                                                     nullptr, 0);
      },
      {"okk_bdc_fixed_point_packed_s16_mul_u8_to_s16", "work_addr", "overlaps dst_addr"});
}

TEST_F(OkkFixed, RulePackedLocalMemoryBounds) {
  put_packed(0, spread(S8, 1), 1);
  // 2N destination of (5, 2, 1, 3): 3 words per position, n stride 32 words:
  // from the last 128 bytes of NPU 0 it ends at byte 524288 - 128 + 4*(2*32 + 3).
  expect_rule(
      [&] {
        okk_bdc_fixed_point_packed_add_C(kNpuBytes - 128, 0, 1, &s, nullptr, nullptr,
                                         S8_OP_S8_TO_S16, 0);
      },
      {"okk_bdc_fixed_point_packed_add_C", "dst_addr", "ends at byte 524428"});
}

}  // namespace
}  // namespace test_npu_okk_fixed_point
}  // namespace npukit::npu::test
