// bm_atomic pools (fp32 with inserted zeros, sum with coeff, int8 in 4N) and
// the BDC fp32 binary/unary families through local memory; hand-computed.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "npukit/compat/bm_atomic.h"
#include "npukit/npu/launch.hpp"
#include "npukit/npu/machine.hpp"
#include "npukit/npu/rules.hpp"

namespace npukit::npu {
namespace test_npu_atomic {
namespace {

class NpuAtomic : public ::testing::Test {
 protected:
  void SetUp() override {
    select_machine(bm1684_config());
    set_violation_mode(ViolationMode::throw_error);
    begin_launch("atomic_kernel");
  }
  void TearDown() override { end_launch(); }
  template <class T>
  static void load(local_addr_t addr, const dim4& shape, const std::vector<T>& v) {
    const uint64_t g = machine().allocate(v.size() * sizeof(T));
    std::memcpy(machine().global(g, v.size() * sizeof(T)), v.data(), v.size() * sizeof(T));
    okk_gdma_32bit_cpy_S2L(addr, g, &shape, nullptr, nullptr);
  }
  template <class T>
  static std::vector<T> store(local_addr_t addr, const dim4& shape, size_t count) {
    const uint64_t g = machine().allocate(count * sizeof(T));
    okk_gdma_32bit_cpy_L2S(g, addr, &shape, nullptr, nullptr);
    std::vector<T> v(count);
    std::memcpy(v.data(), machine().global(g, count * sizeof(T)), count * sizeof(T));
    return v;
  }
};

TEST_F(NpuAtomic, Fp32AvgMaxSumPoolWithInsertedZeros) {
  load<float>(0, {1, 1, 1, 2}, {2.0f, 4.0f});
  // ins_w 1: the row is [2, 0, 4]; kernel 1x3 -> one output.
  PoolParam p{0, 4096, {1, 1, 1, 2}, 1, 3, 1, 1, 0, 1, {0, 0, 0, 0}};
  bm_atomic_avg_pool(&p);
  // Taps 0 and 2 in A0, tap 1 (the zero) in A1: (2*(1/3) + 4*(1/3)) + 0.
  const float r = 1.0f / 3.0f;
  EXPECT_EQ(store<float>(4096, {1, 1, 1, 1}, 1)[0], 2.0f * r + 4.0f * r);
  load<float>(0, {1, 1, 1, 2}, {-2.0f, -4.0f});
  bm_atomic_max_pool(&p);
  EXPECT_EQ(store<float>(4096, {1, 1, 1, 1}, 1)[0], 0.0f);  // the inserted zero wins
  SumPoolParam s{0, 4096, {1, 1, 1, 2}, 1, 3, 1, 1, 0, 1, {0, 0, 0, 0}, 0.5f};
  load<float>(0, {1, 1, 1, 2}, {2.0f, 4.0f});
  bm_atomic_sum_pool(&s);
  EXPECT_EQ(store<float>(4096, {1, 1, 1, 1}, 1)[0], 3.0f);  // (2 + 0 + 4) * 0.5
}

TEST_F(NpuAtomic, QuantizedAvgPoolIn4NLayout) {
  // N 5 int8 in 4N: words (2, 1, 1, 2); batch n holds [n, 2n + 1].
  std::vector<int8_t> bytes(2 * 2 * 4, 0);
  for (int n = 0; n < 5; ++n) {
    bytes[((n / 4) * 2 + 0) * 4 + n % 4] = static_cast<int8_t>(n);
    bytes[((n / 4) * 2 + 1) * 4 + n % 4] = static_cast<int8_t>(2 * n + 1);
  }
  load<int8_t>(0, {2, 1, 1, 2}, bytes);
  PoolQuantParam q{};
  q.input_addr = 0;
  q.output_addr = 4096;
  q.input_shape[0] = 5;
  q.input_shape[1] = 1;
  q.input_shape[2] = 1;
  q.input_shape[3] = 2;
  q.kernel_h = 1;
  q.kernel_w = 2;
  q.stride_h = q.stride_w = 1;
  q.dilate_h = q.dilate_w = 1;
  q.rshift_bit = 1;
  q.input_sign = true;
  bm_atomic_avg_pool_quantized(&q);
  // (3n + 1 + 1) >> 1 for n = 0..4: 1, 2, 4, 5, 7.
  const std::vector<int8_t> out = store<int8_t>(4096, {2, 1, 1, 1}, 8);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 2);
  EXPECT_EQ(out[2], 4);
  EXPECT_EQ(out[3], 5);
  EXPECT_EQ(out[4], 7);
  q.if_relu = false;
  // Max: rshift_bit applies to the unit's result for max too (seed 002 names
  // no exception): (max + 1) >> 1 with max(n, 2n + 1) = 2n + 1 -> n + 1.
  bm_atomic_max_pool_quantized(&q);
  std::vector<int8_t> mx = store<int8_t>(4096, {2, 1, 1, 1}, 8);
  for (int n = 0; n < 5; ++n) EXPECT_EQ(mx[static_cast<size_t>(n)], n + 1) << n;
  q.rshift_bit = 0;
  bm_atomic_max_pool_quantized(&q);
  mx = store<int8_t>(4096, {2, 1, 1, 1}, 8);
  EXPECT_EQ(mx[4], 9);  // max(4, 9)
}

TEST_F(NpuAtomic, QuantizedPoolRuleRshift) {
  PoolQuantParam q{};
  q.input_shape[0] = q.input_shape[1] = q.input_shape[2] = q.input_shape[3] = 1;
  q.kernel_h = q.kernel_w = q.stride_h = q.stride_w = q.dilate_h = q.dilate_w = 1;
  q.output_addr = 4096;
  q.rshift_bit = 40;
  try {
    bm_atomic_avg_pool_quantized(&q);
    ADD_FAILURE() << "no violation";
  } catch (const RuleViolation& e) {
    EXPECT_NE(std::string(e.what()).find("rshift_bit"), std::string::npos) << e.what();
  }
}

TEST_F(NpuAtomic, Fp32BinaryAndUnaryFamilies) {
  const dim4 s{1, 1, 1, 4};
  load<float>(0, s, {1.0f, -2.0f, 6.0f, std::nanf("")});
  load<float>(1024, s, {2.0f, 2.0f, 3.0f, 1.0f});
  auto out = [&] { return store<float>(2048, s, 4); };
  okk_bdc_add(2048, 0, 1024, &s, nullptr, nullptr, nullptr);
  EXPECT_EQ(out()[2], 9.0f);
  okk_bdc_sub(2048, 0, 1024, &s, nullptr, nullptr, nullptr);
  EXPECT_EQ(out()[1], -4.0f);
  okk_bdc_div(2048, 0, 1024, &s, nullptr, nullptr, nullptr);
  EXPECT_EQ(out()[2], 2.0f);
  okk_bdc_max(2048, 0, 1024, &s, nullptr, nullptr, nullptr);
  EXPECT_EQ(out(), (std::vector<float>{2.0f, 2.0f, 6.0f, 1.0f}));  // NaN > 1 is false
  okk_bdc_min_C(2048, 0, 0.0f, &s, nullptr, nullptr);
  EXPECT_EQ(out()[1], -2.0f);
  okk_bdc_C_sub(2048, 1024, 10.0f, &s, nullptr, nullptr);
  EXPECT_EQ(out()[0], 8.0f);
  okk_bdc_C_div(2048, 1024, 6.0f, &s, nullptr, nullptr);
  EXPECT_EQ(out()[2], 2.0f);
  okk_bdc_mul_C(2048, 1024, 0.5f, &s, nullptr, nullptr);
  EXPECT_EQ(out()[0], 1.0f);
  okk_bdc_mac(2048, 1024, 1024, &s, nullptr, nullptr, nullptr);  // 1 + 2*2
  EXPECT_EQ(out()[0], 5.0f);
  okk_bdc_mul_C(2048, 1024, FLT_MIN / 4, &s, nullptr, nullptr);  // denormal constant -> 0
  EXPECT_EQ(out()[0], 0.0f);
  okk_bdc_sqrt(2048, 1024, &s);
  EXPECT_EQ(out()[0], std::sqrt(2.0f));
  okk_bdc_neg(2048, 1024, &s, nullptr, nullptr);
  EXPECT_EQ(out()[3], -1.0f);
  okk_bdc_reciprocal(2048, 1024, &s, nullptr, nullptr);
  EXPECT_EQ(out()[0], 0.5f);
  okk_bdc_exp(2048, 1024, 3072, &s);
  EXPECT_FLOAT_EQ(out()[3], std::exp(1.0f));
  x32 c;
  c.u32 = 0x3f800000u;
  okk_bdc_32bit_set_C(2048, c, &s, nullptr);
  EXPECT_EQ(out()[1], 1.0f);
  okk_bdc_32bit_cpy(3072, 1024, &s, nullptr, nullptr);
  EXPECT_EQ(store<float>(3072, s, 4)[2], 3.0f);
}

}  // namespace
}  // namespace test_npu_atomic
}  // namespace npukit::npu
