// The simulated NPU behind okk.h: layouts and strides (hand-computed from
// docs/npu-simulator.md, "The machine"), GDMA placement, NN functions through local memory,
// one test per hardware rule (the message is checked), the cost model.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "npukit/compat/bmlib_runtime.h"
#include "npukit/compat/okk.h"
#include "npukit/npu/launch.hpp"
#include "npukit/npu/machine.hpp"
#include "npukit/npu/rules.hpp"
#include "npukit/npukit.hpp"

namespace npukit::npu {
namespace test_npu_okk {
namespace {

class Npu : public ::testing::Test {
 protected:
  void SetUp() override {
    select_machine(bm1684_config());
    set_violation_mode(ViolationMode::throw_error);
    // Strict: warning-class rules (never-written reads, documented limits the
    // vendor's simulator accepts) throw here too; test_npu_rules.cpp checks
    // their lenient behaviour.
    set_strict_rules(true);
    begin_launch("unit_kernel");
  }
  void TearDown() override {
    end_launch();
    reset_strict_rules();
  }

  // A device buffer filled with `v`.
  uint64_t upload(const std::vector<float>& v) {
    const uint64_t a = machine().allocate(v.size() * 4);
    std::memcpy(machine().global(a, v.size() * 4), v.data(), v.size() * 4);
    return a;
  }
  std::vector<float> download(uint64_t a, size_t n) {
    std::vector<float> v(n);
    std::memcpy(v.data(), machine().global(a, n * 4), n * 4);
    return v;
  }
  static float local_f32(int npu, uint32_t offset) {
    float f;
    std::memcpy(&f, machine().local(npu, offset), 4);
    return f;
  }
  // Expects a RuleViolation whose message contains every piece.
  template <class F>
  static void expect_rule(F f, std::vector<std::string> pieces) {
    try {
      f();
      ADD_FAILURE() << "no violation";
    } catch (const RuleViolation& e) {
      const std::string msg = e.what();
      EXPECT_EQ(e.kernel(), "unit_kernel");
      for (const std::string& p : pieces)
        EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
    }
  }
};

constexpr uint32_t kLmem = 512 * 1024;

TEST_F(Npu, MemoryInfoOfBm1684AndBm1684x) {
  EXPECT_EQ(okk_npu_num(), 64);
  EXPECT_EQ(okk_local_mem_size_per_npu(), kLmem);
  EXPECT_EQ(okk_local_mem_bank_per_npu(), 8u);
  EXPECT_EQ(okk_eu_num(), 32u);
  select_machine(bm1684x_config());
  EXPECT_EQ(okk_local_mem_size_per_npu(), 256u * 1024);
  EXPECT_EQ(okk_local_mem_bank_per_npu(), 16u);
  dim4 st, shape{1, 3, 5, 5};
  okk_128_byte_aligned_stride_for_32bit(&st, 0, &shape);
  EXPECT_EQ(st.c, 32);  // ceil(25 / 16) * 16 with 64-byte alignment
}

TEST_F(Npu, StrideHelpers) {
  // Shape (2, 70, 3, 5), start NPU 10: channels per NPU ceil(80/64) = 2.
  const dim4 shape{2, 70, 3, 5};
  dim4 st;
  okk_128_byte_aligned_stride_for_32bit(&st, 10, &shape);
  EXPECT_EQ(st.w, 1);
  EXPECT_EQ(st.h, 5);
  EXPECT_EQ(st.c, 32);  // ceil(15/32)*32
  EXPECT_EQ(st.n, 64);
  okk_128_byte_aligned_stride_for_16bit(&st, 10, &shape);
  EXPECT_EQ(st.c, 64);
  okk_128_byte_aligned_stride_for_8bit(&st, 10, &shape);
  EXPECT_EQ(st.c, 128);
  okk_compact_stride(&st, 10, &shape);
  EXPECT_EQ(st.c, 15);
  EXPECT_EQ(st.n, 30);
  okk_continuous_stride(&st, &shape);
  EXPECT_EQ(st.n, 1050);
  EXPECT_EQ(st.c, 15);
  EXPECT_EQ(okk_channle_num_per_npu(63, 2), 2);
  EXPECT_EQ(okk_channle_num_per_npu(0, 64), 1);
  EXPECT_EQ(okk_start_npu_index(3 * kLmem + 256), 3);
}

TEST_F(Npu, GdmaS2LPlacesChannelsAcrossNpus) {
  // (1, 3, 2, 2) to Q = 63, R = 128: channel 0 on NPU 63 slot 0, channels 1, 2
  // on NPUs 0, 1 in slot 1 (sC = 32 elements = 128 bytes).
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = static_cast<float>(i);
  const uint64_t g = upload(v);
  const dim4 shape{1, 3, 2, 2};
  okk_gdma_32bit_cpy_S2L(63 * kLmem + 128, g, &shape, nullptr, nullptr);
  EXPECT_EQ(local_f32(63, 128 + 4 * 3), 3.0f);
  EXPECT_EQ(local_f32(0, 128 + 128 + 4 * 0), 4.0f);
  EXPECT_EQ(local_f32(1, 128 + 128 + 4 * 2), 10.0f);
  const uint64_t back = machine().allocate(48);
  okk_gdma_32bit_cpy_L2S(back, 63 * kLmem + 128, &shape, nullptr, nullptr);
  EXPECT_EQ(download(back, 12), v);
}

TEST_F(Npu, GdmaStridedCopiesAndSetConstant) {
  // Every second column of a (1, 1, 2, 4) system tensor -> (1, 1, 2, 2).
  const uint64_t g = upload({0, 1, 2, 3, 4, 5, 6, 7});
  const dim4 shape{1, 1, 2, 2}, src_stride{8, 8, 4, 1};
  okk_gdma_32bit_cpy_S2S(g, g + 8, &shape, nullptr, &src_stride);  // columns 2, 3 -> front
  EXPECT_EQ(download(g, 8), (std::vector<float>{2, 3, 6, 7, 4, 5, 6, 7}));
  x32 c;
  c.fp32 = 1.5f;
  const dim4 s2{1, 2, 1, 3};
  okk_gdma_32bit_set_C_local(0, c, &s2, nullptr);
  EXPECT_EQ(local_f32(1, 8), 1.5f);
  okk_gdma_32bit_cpy_L2L(4096, 0, &s2, nullptr, nullptr);
  EXPECT_EQ(local_f32(1, 4096 + 8), 1.5f);
  // 16- and 8-bit copies keep bytes.
  const uint64_t b = machine().allocate(8);
  uint8_t bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  std::memcpy(machine().global(b, 8), bytes, 8);
  const dim4 s8{1, 2, 1, 4};
  okk_gdma_8bit_cpy_S2L(256, b, &s8, nullptr, nullptr);
  EXPECT_EQ(*machine().local(1, 256 + 2), 7);
  const dim4 s16{1, 1, 1, 4};
  okk_gdma_16bit_cpy_S2L(1024, b, &s16, nullptr, nullptr);
  uint16_t h;
  std::memcpy(&h, machine().local(0, 1024 + 6), 2);
  EXPECT_EQ(h, 0x0807);
}

TEST_F(Npu, GdmaMatrixLayout) {
  // 2 x 5 matrix, 2 columns per channel -> tensor (2, 3, 1, 2): element (1, 4)
  // is channel 2 (NPU 2), w 0, n 1: offset sN = 32 elements (aligned sC = 32).
  std::vector<float> m(10);
  for (int i = 0; i < 10; ++i) m[i] = static_cast<float>(i);
  const uint64_t g = upload(m);
  okk_gdma_32bit_matrix_S2L(0, g, 2, 5, 2, 5);
  EXPECT_EQ(local_f32(2, 4 * 32), 9.0f);
  EXPECT_EQ(local_f32(1, 4 * 1), 3.0f);
  const uint64_t back = machine().allocate(40);
  okk_gdma_32bit_matrix_L2S(back, 0, 2, 5, 2, 5);
  EXPECT_EQ(download(back, 10), m);
}

// Loads an NCHW tensor into local memory at addr (aligned layout).
void load(uint64_t addr, const dim4& shape, const std::vector<float>& v) {
  const uint64_t g = machine().allocate(v.size() * 4);
  std::memcpy(machine().global(g, v.size() * 4), v.data(), v.size() * 4);
  okk_gdma_32bit_cpy_S2L(static_cast<local_addr_t>(addr), g, &shape, nullptr, nullptr);
}
std::vector<float> store(uint64_t addr, const dim4& shape) {
  const size_t n = static_cast<size_t>(shape.n) * shape.c * shape.h * shape.w;
  const uint64_t g = machine().allocate(n * 4);
  okk_gdma_32bit_cpy_L2S(g, static_cast<local_addr_t>(addr), &shape, nullptr, nullptr);
  std::vector<float> v(n);
  std::memcpy(v.data(), machine().global(g, n * 4), n * 4);
  return v;
}

TEST_F(Npu, ReluBiasScaleThroughLocalMemory) {
  const dim4 s{1, 2, 1, 3};
  load(0, s, {-1, 0, 2, std::nanf(""), 3, -0.0f});
  okk_bdc_relu(4096, 0, &s, nullptr, nullptr);
  const std::vector<float> r = store(4096, s);
  EXPECT_EQ(r, (std::vector<float>{0, 0, 2, 0, 3, 0}));
  EXPECT_FALSE(std::signbit(r[5]));
  // Per-channel vectors in the compact layout: channel c on NPU c at offset 8192.
  const dim4 cs{1, 2, 1, 1};
  load(8192, cs, {10, 20});  // aligned == compact for a 1x1 plane at offset 0 of each NPU
  okk_bdc_bias(12288, 0, 8192, &s, nullptr, nullptr);
  EXPECT_EQ(store(12288, s)[4], 23.0f);
  okk_bdc_scale(12288, 0, 8192, &s, nullptr, nullptr);
  EXPECT_EQ(store(12288, s)[2], 20.0f);
  // result_add (documented form): dst = dst + src*scale + bias = 20 + (2*10 + 10).
  okk_bdc_scale_bias_ra(12288, 0, 8192, 8192, &s, nullptr, nullptr, true);
  EXPECT_EQ(store(12288, s)[2], 50.0f);
  okk_bdc_scale_ra(12288, 0, 8192, &s, nullptr, nullptr, false);
  EXPECT_EQ(store(12288, s)[2], 20.0f);
}

TEST_F(Npu, Conv2dReads2ICWeightsAndIgnoresTheDummy) {
  // IC 3, OC 2, 1x1 kernel: weights (ceil(3/2) = 2, OC 2, 1, 1) pairs; the
  // dummy partner of ic 2 holds NaN and must be ignored.
  const dim4 xs{1, 3, 1, 2};
  load(0, xs, {1, 2, 10, 20, 100, 200});
  // w[oc][ic]: oc0 = (1, 1, 1), oc1 = (1, 0, -1). Pair j, oc at NPU oc, offset 8*j.
  const float nan = std::nanf("");
  const float w[2][2][2] = {{{1, 1}, {1, 0}}, {{1, nan}, {-1, nan}}};  // [j][oc][e]
  for (int j = 0; j < 2; ++j)
    for (int oc = 0; oc < 2; ++oc) std::memcpy(okk_local_mem_addr(oc, 65536 + 8 * j), w[j][oc], 8);
  // Mark the 8 bytes as written (okk_local_mem_addr marks one byte).
  for (int oc = 0; oc < 2; ++oc) std::memset(machine().written(oc, 65536), 1, 16);
  okk_bdc_conv2d(131072, 0, 65536, 0, &xs, 2, 1, 1, nullptr, nullptr, false, false, nullptr,
                 nullptr, nullptr);
  const dim4 ys{1, 2, 1, 2};
  // oc0: 1 + 10 + 100 = 111, 2 + 20 + 200 = 222; oc1: 1 - 100 = -99, 2 - 200 = -198.
  EXPECT_EQ(store(131072, ys), (std::vector<float>{111, 222, -99, -198}));
}

TEST_F(Npu, MatmulResultDoesNotDependOnColsPerChannel) {
  // L (2 x 3) * R (3 x 2) + bias, hand computed: L = [[1,2,3],[4,5,6]],
  // R = [[1,0],[0,1],[1,1]] -> [[4,5],[10,11]] + bias (0.5, -0.5).
  const uint64_t lg = upload({1, 2, 3, 4, 5, 6}), rg = upload({1, 0, 0, 1, 1, 1}),
                 bg = upload({0.5f, -0.5f});
  for (int lcpc : {1, 2, 3})
    for (int rcpc : {1, 2}) {
      okk_gdma_32bit_matrix_S2L(0, lg, 2, 3, lcpc, 3);
      okk_gdma_32bit_matrix_S2L(65536, rg, 3, 2, rcpc, 2);
      okk_gdma_32bit_matrix_S2L(131072, bg, 1, 2, rcpc, 2);
      okk_bdc_matmul(196608, 0, 65536, 131072, 2, 3, 2, lcpc, rcpc, true, false);
      const uint64_t out = machine().allocate(16);
      okk_gdma_32bit_matrix_L2S(out, 196608, 2, 2, rcpc, 2);
      EXPECT_EQ(download(out, 4), (std::vector<float>{4.5f, 4.5f, 10.5f, 10.5f}))
          << lcpc << " " << rcpc;
    }
}

TEST_F(Npu, PoolsThroughLocalMemory) {
  const dim4 xs{1, 1, 2, 2};
  load(0, xs, {1, 2, 3, -FLT_MAX});
  const Padding pad{0, 1, 0, 1};
  okk_bdc_max_pool2d(4096, 0, &xs, 2, 2, &pad, nullptr);
  // Windows: (0,0) {1,2,3,-max} -> 3; (0,1) {2, pad, -max, pad} -> 2; (1,0) {3, -max} -> 3; (1,1)
  // -> -FLT_MAX.
  EXPECT_EQ(store(4096, {1, 1, 2, 2}), (std::vector<float>{3, 2, 3, -FLT_MAX}));
  load(0, xs, {1, 2, 3, 4});
  okk_bdc_avg_pool2d(4096, 0, &xs, 2, 2, &pad, nullptr);
  // Divides by 4 always: (1+2+3+4)/4, (2+4)/4, (3+4)/4, 4/4.
  EXPECT_EQ(store(4096, {1, 1, 2, 2}), (std::vector<float>{2.5f, 1.5f, 1.75f, 1.0f}));
}

// ---- one test per hardware rule ------------------------------------------

TEST_F(Npu, RuleAddressDivisibility) {
  const dim4 xs{1, 1, 4, 4};
  load(0, xs, std::vector<float>(16, 1.0f));
  expect_rule([&] { okk_bdc_avg_pool2d(100, 0, &xs, 2, 2, nullptr, nullptr); },
              {"okk_bdc_avg_pool2d", "output_addr", "100", "divisible by 128"});
  expect_rule([&] { okk_bdc_relu(4098, 0, &xs, nullptr, nullptr); },
              {"okk_bdc_relu", "dst_addr", "divisible by 4"});
}

TEST_F(Npu, RuleSameStartNpu) {
  const dim4 xs{1, 1, 1, 4};
  load(0, xs, {1, 2, 3, 4});
  expect_rule([&] { okk_bdc_relu(kLmem, 0, &xs, nullptr, nullptr); },
              {"okk_bdc_relu", "src_addr", "NPU 0", "same NPU as dst_addr (NPU 1)"});
}

TEST_F(Npu, RuleShapeRanges) {
  const dim4 big_c{1, 4096, 1, 1};
  expect_rule([&] { okk_bdc_relu(0, 0, &big_c, nullptr, nullptr); },
              {"okk_bdc_relu", "shape->c", "4096", "[1, 4095]"});
  const dim4 tall{1, 1, 2048, 1};
  expect_rule([&] { okk_bdc_max_pool2d(0, 4096, &tall, 1, 1, nullptr, nullptr); },
              {"okk_bdc_max_pool2d", "input_shape->h", "2048", "[1, 2047]"});
}

TEST_F(Npu, RulePadStrideDilationRanges) {
  const dim4 xs{1, 1, 4, 4};
  const Padding pad{16, 0, 0, 0};
  expect_rule([&] { okk_bdc_avg_pool2d(4096, 0, &xs, 2, 2, &pad, nullptr); },
              {"padding->top", "16", "[0, 15]"});
  const dim2 st{0, 1};
  expect_rule([&] { okk_bdc_avg_pool2d(4096, 0, &xs, 2, 2, nullptr, &st); },
              {"stride->h", "0", "[1, 15]"});
  const dim2 dil{1, 16};
  expect_rule(
      [&] { okk_bdc_depthwise2d(4096, 0, 8192, 0, &xs, 1, 1, false, nullptr, nullptr, &dil); },
      {"okk_bdc_depthwise2d", "dilation->w", "16", "[1, 15]"});
}

TEST_F(Npu, RuleOutputSizeAndPaddedInput) {
  const dim4 xs{1, 1, 2040, 4};
  const Padding pad{5, 5, 0, 0};
  expect_rule([&] { okk_bdc_avg_pool2d(0, 0, &xs, 1, 1, &pad, nullptr); },
              {"input_shape->h + padding->top + padding->bottom", "2050", "[1, 2047]"});
  const dim4 small{1, 1, 2, 2};
  expect_rule([&] { okk_bdc_max_pool2d(4096, 0, &small, 3, 1, nullptr, nullptr); },
              {"kernel_h", "3", "padded input height 2"});
}

TEST_F(Npu, RuleLocalMemoryBounds) {
  const dim4 xs{1, 1, 1, 64};
  expect_rule([&] { okk_bdc_relu(kLmem - 128, kLmem - 128, &xs, nullptr, nullptr); },
              {"okk_bdc_relu", "dst_addr", "ends at byte 524416", "524288 bytes"});
  const dim4 one{1, 1, 1, 1};
  expect_rule([&] { okk_bdc_relu(64 * kLmem, 64 * kLmem, &one, nullptr, nullptr); },
              {"a local address below 33554432"});
}

TEST_F(Npu, RuleReadOfNeverWrittenLocalMemory) {
  const dim4 xs{1, 2, 2, 2};
  expect_rule([&] { okk_bdc_relu(4096, 262144, &xs, nullptr, nullptr); },
              {"okk_bdc_relu", "src_addr", "element (0, 0, 0, 0)", "never written"});
}

TEST_F(Npu, RuleOutputMustNotOverlapInput) {
  const dim4 xs{1, 1, 4, 4};
  load(0, xs, std::vector<float>(16, 1.0f));
  expect_rule([&] { okk_bdc_max_pool2d(0, 0, &xs, 2, 2, nullptr, nullptr); },
              {"okk_bdc_max_pool2d", "output_addr", "overlaps input_addr"});
}

TEST_F(Npu, RuleMatmulColsPerChannel) {
  expect_rule([&] { okk_bdc_matmul(0, 4096, 8192, 0, 1, 300, 300, 129, 1, false, false); },
              {"okk_bdc_matmul", "left_cols_per_channel", "129", "[1, 128]"});
  expect_rule([&] { okk_bdc_matmul(0, 4096, 8192, 0, 1, 5000, 8, 1, 1, false, false); },
              {"ceil(left_cols / left_cols_per_channel)", "5000", "[1, 4095]"});
}

TEST_F(Npu, RuleConvChannelsAndWStride) {
  const dim4 xs{1, 1, 4, 4};
  expect_rule(
      [&] {
        okk_bdc_conv2d(0, 65536, 131072, 0, &xs, 4096, 1, 1, nullptr, nullptr, false, false,
                       nullptr, nullptr, nullptr);
      },
      {"okk_bdc_conv2d", "output_c", "4096"});
  const uint64_t g = upload(std::vector<float>(16, 0.0f));
  const dim4 st{16, 16, 4, 2};
  expect_rule([&] { okk_gdma_32bit_cpy_S2L(0, g, &xs, &st, nullptr); },
              {"okk_gdma_32bit_cpy_S2L", "dst_stride", "w = 2", "w = 1"});
}

TEST_F(Npu, RuleSystemMemoryInsideAllocation) {
  const uint64_t g = upload({1, 2, 3});
  const dim4 s{1, 1, 1, 4};
  expect_rule([&] { okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, nullptr); },
              {"okk_gdma_32bit_cpy_S2L", "src_addr", "one device memory allocation"});
}

TEST_F(Npu, RuleNullDescriptorAndParallelNesting) {
  expect_rule([&] { okk_bdc_relu(0, 0, nullptr, nullptr, nullptr); }, {"shape", "NULL"});
  okk_parallel_start();
  expect_rule([] { okk_parallel_start(); }, {"okk_parallel_start", "do not nest"});
  okk_parallel_end();
  expect_rule([] { okk_parallel_end(); }, {"okk_parallel_end"});
}

TEST_F(Npu, RuleAssertion) {
  expect_rule([] { OKKERNEL_ASSERT(1 + 1 == 3); }, {"OKKERNEL_ASSERT", "1 + 1 == 3"});
}

void violate_in_exit_mode() {
  select_machine(bm1684_config());
  set_violation_mode(ViolationMode::exit_255);
  begin_launch("my_kernel");
  const dim4 xs{1, 1, 4, 4};
  okk_bdc_avg_pool2d(100, 0, &xs, 2, 2, nullptr, nullptr);
}

TEST(NpuExit, ViolationExitsWith255AndNamesKernelFunctionRule) {
  EXPECT_EXIT(violate_in_exit_mode(), ::testing::ExitedWithCode(255),
              "kernel 'my_kernel': okk_bdc_avg_pool2d: parameter 'output_addr' = 100.*divisible "
              "by 128");
}

// ---- cost model -----------------------------------------------------------

TEST_F(Npu, CostModelOverlapsGdmaAndBdcInParallelRegions) {
  const Config& c = machine().config();
  const dim4 s{1, 64, 1, 32};  // 8 KiB; one channel per NPU, one EU row
  const uint64_t g = upload(std::vector<float>(64 * 32, 1.0f));
  // One dense aligned run of 8 KiB (cost_model.hpp; test_npu_cost.cpp checks the formulas).
  const int64_t gdma = c.cost.gdma_descriptor_cycles +
                       static_cast<int64_t>(std::ceil(8192 / c.cost.gdma_s2l_bytes_per_cycle));
  const int64_t bdc = c.cost.bdc_startup_cycles + 1 * 1 * 1;  // 1 channel x 1 EU row x 1 op
  okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, nullptr);
  okk_parallel_start();
  okk_gdma_32bit_cpy_S2L(65536, g, &s, nullptr, nullptr);
  okk_bdc_relu(131072, 0, &s, nullptr, nullptr);
  okk_parallel_end();
  okk_bdc_relu(196608, 0, &s, nullptr, nullptr);
  const LaunchReport r = end_launch();
  EXPECT_EQ(r.instructions, 4);
  // Each instruction waits for its issue (cost_model.hpp): the region's GDMA
  // copy is issued first, its relu second.
  const int64_t issue = c.cost.issue_cycles;
  EXPECT_EQ(r.device_cycles, issue + gdma + std::max(issue + gdma, 2 * issue + bdc) + issue + bdc);
  EXPECT_NEAR(r.device_us, static_cast<double>(r.device_cycles) / 550.0 + c.cost.launch_overhead_us,
              1e-9);
  ASSERT_EQ(r.functions.size(), 2u);
  EXPECT_EQ(r.functions[0].function, "okk_gdma_32bit_cpy_S2L");
  EXPECT_EQ(r.functions[0].calls, 2);
  EXPECT_NE(format_report(r).find("okk_bdc_relu"), std::string::npos);
  begin_launch("unit_kernel");
}

}  // namespace
}  // namespace test_npu_okk
}  // namespace npukit::npu
