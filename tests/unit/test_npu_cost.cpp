// The BM1684 cost model: the cost functions against hand-computed cycles, the
// okk functions' recorded instructions, the timeline (parallel regions,
// overlap), the NPUKIT_PROFILE report, the NPUKIT_TRACE JSON (parsed back)
// and the timeline picture (its elements counted).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "npukit/compat/okk.h"
#include "npukit/error.hpp"
#include "npukit/npu/cost_model.hpp"
#include "npukit/npu/launch.hpp"
#include "npukit/npu/machine.hpp"
#include "npukit/npu/rules.hpp"
#include "npukit/npu/timeline.hpp"
#include "npukit/npu/trace.hpp"

namespace npukit::npu {
namespace test_npu_cost {
namespace {

// Round numbers so every expectation below is computed by hand.
CostModel simple_model() {
  CostModel m;
  m.clock_mhz = 500.0;
  m.launch_overhead_us = 10.0;
  m.bdc_startup_cycles = 10;
  m.bdc_tap_startup_cycles = 0;  // its own test sets it
  m.conv_cycles_per_mac = 2.0;
  m.depthwise_cycles_per_mac = 1.0;
  m.arith_cycles_per_op = 1.0;
  m.gdma_s2l_bytes_per_cycle = 10.0;
  m.gdma_l2s_bytes_per_cycle = 20.0;
  m.gdma_l2l_bytes_per_cycle = 40.0;
  m.gdma_s2s_bytes_per_cycle = 5.0;
  m.gdma_npu_port_bytes_per_cycle = 2.0;
  m.gdma_descriptor_cycles = 100;
  m.gdma_burst_bytes = 64;
  m.issue_cycles = 0;  // IssueDelays... sets its own
  return m;
}

size_t count(const std::string& text, const std::string& piece) {
  size_t n = 0;
  for (size_t at = text.find(piece); at != std::string::npos; at = text.find(piece, at + 1)) ++n;
  return n;
}

TEST(NpuCostFormula, GdmaDenseAlignedRunIsDescriptorPlusBytesOverBandwidth) {
  const CostModel m = simple_model();
  EXPECT_EQ(gdma_transfer_cycles(m, GdmaDirection::s2l, 1, 640, true, 64), 100 + 64);
  EXPECT_EQ(gdma_transfer_cycles(m, GdmaDirection::l2s, 1, 640, true, 64), 100 + 32);
  EXPECT_EQ(gdma_transfer_cycles(m, GdmaDirection::l2l, 1, 640, true, 64), 100 + 16);
  EXPECT_EQ(gdma_transfer_cycles(m, GdmaDirection::s2s, 1, 640, true, 0), 100 + 128);
}

TEST(NpuCostFormula, GdmaNarrowUnalignedAndFewNpuTransfersPayMore) {
  const CostModel m = simple_model();
  // 650 bytes: 11 bursts (704 bytes) -> 70.4 -> 71 cycles.
  EXPECT_EQ(gdma_transfer_cycles(m, GdmaDirection::s2l, 1, 650, true, 64), 100 + 71);
  // Unaligned 640: 10 + 1 bursts.
  EXPECT_EQ(gdma_transfer_cycles(m, GdmaDirection::s2l, 1, 640, false, 64), 100 + 71);
  // 10 runs of 4 bytes: 10 whole bursts.
  EXPECT_EQ(gdma_transfer_cycles(m, GdmaDirection::s2l, 10, 4, true, 64), 100 + 64);
  // 6400 bytes into one NPU: its port (2 B/cycle) limits, not DDR (640 cycles).
  EXPECT_EQ(gdma_transfer_cycles(m, GdmaDirection::s2l, 1, 6400, true, 1), 100 + 3200);
  EXPECT_EQ(gdma_transfer_cycles(m, GdmaDirection::s2l, 1, 6400, true, 64), 100 + 640);
}

TEST(NpuCostFormula, ZeroPortRateMeansOnlyDdrLimits) {
  CostModel m = simple_model();
  m.gdma_npu_port_bytes_per_cycle = 0.0;  // the BM1684 preset: no per-NPU limit
  EXPECT_EQ(gdma_transfer_cycles(m, GdmaDirection::s2l, 1, 6400, true, 1), 100 + 640);
  EXPECT_EQ(gdma_transfer_cycles(m, GdmaDirection::l2s, 1, 6400, true, 3), 100 + 320);
  EXPECT_EQ(bm1684_cost_model().gdma_npu_port_bytes_per_cycle, 0.0);
}

TEST(NpuCostFormula, ConvAndDepthwisePayATapStartupPerLaneRowPoolingDoesNot) {
  CostModel m = simple_model();
  m.bdc_tap_startup_cycles = 5;
  // 3 slots x 2 lane rows (33 elements) x 9 taps = 54 tap passes of 5 cycles
  // on top of 3 x 2 x 9 ops x 2 cycles (conv) or x 1 (depthwise).
  EXPECT_EQ(bdc_instruction_cycles(m, OpClass::conv, 3, 33, 9, 32, 9), 10 + 108 + 270);
  EXPECT_EQ(bdc_instruction_cycles(m, OpClass::depthwise, 3, 33, 9, 32, 9), 10 + 54 + 270);
  EXPECT_EQ(bdc_instruction_cycles(m, OpClass::pool, 3, 33, 9, 32, 9), 10 + 54);
  EXPECT_EQ(bdc_instruction_cycles(m, OpClass::conv, 3, 33, 9, 32), 10 + 108);  // no taps given
  EXPECT_GT(bm1684_cost_model().bdc_tap_startup_cycles, 0);
}

TEST(NpuCostFormula, BdcIsStartupPlusSlotsTimesLaneRowsTimesOpsTimesClassCost) {
  const CostModel m = simple_model();
  // 33 elements over 32 lanes: 2 rows; 3 slots x 2 rows x 9 ops x 2 cycles.
  EXPECT_EQ(bdc_instruction_cycles(m, OpClass::conv, 3, 33, 9, 32), 10 + 108);
  EXPECT_EQ(bdc_instruction_cycles(m, OpClass::depthwise, 3, 33, 9, 32), 10 + 54);
  EXPECT_EQ(bdc_instruction_cycles(m, OpClass::arith, 1, 32, 1, 32), 10 + 1);
  EXPECT_EQ(bdc_instruction_cycles(m, OpClass::arith, 1, 32, 1, 16), 10 + 2);
}

// The vendor's FC estimate (cost_model.hpp): matmul works 16 output columns
// of a channel slot at a time, left_cols MACs plus 6 cycles per group.
TEST(NpuCostFormula, MatmulWorksColumnGroupsOfSixteenAndPaysCyclesPerGroup) {
  CostModel m = simple_model();
  m.matmul_cycles_per_mac = 1.0;
  // 33 columns: 3 groups of 16; 4 row slots x 3 groups x (100 MACs + 6).
  EXPECT_EQ(bdc_instruction_cycles(m, OpClass::matmul, 4, 33, 100, 32), 10 + 4 * 3 * 106);
  // One left column (100352 such instructions in a published matmul kernel):
  // the group cycles dominate, 7 per group instead of 1.
  EXPECT_EQ(bdc_instruction_cycles(m, OpClass::matmul, 2, 16, 1, 32), 10 + 2 * 1 * 7);
  // Other classes keep the lane count they are given.
  EXPECT_EQ(bdc_instruction_cycles(m, OpClass::arith, 4, 33, 100, 32), 10 + 4 * 2 * 100);
  const CostModel bm = bm1684_cost_model();
  EXPECT_EQ(bm.matmul_columns_per_cycle, 16);
  EXPECT_EQ(bm.matmul_group_cycles, 6);
  EXPECT_EQ(bm.gdma_descriptor_cycles, 140);  // the vendor's 146 GDMA cycles at 550 MHz
}

TEST(NpuCostFormula, PresetsNameEveryClass) {
  for (int c = 0; c <= static_cast<int>(OpClass::other); ++c) {
    EXPECT_STRNE(op_class_name(static_cast<OpClass>(c)), "");
    EXPECT_STRNE(op_class_colour(static_cast<OpClass>(c)), "");
  }
  EXPECT_GT(bm1684_cost_model().clock_mhz, 0.0);
  EXPECT_EQ(bm1684x_config().cost.clock_mhz, bm1684x_cost_model().clock_mhz);
}

class NpuCost : public ::testing::Test {
 protected:
  void SetUp() override {
    Config c = bm1684_config();
    c.cost = simple_model();
    select_machine(c);
    set_violation_mode(ViolationMode::throw_error);
    begin_launch("cost_kernel");
  }
  void TearDown() override {
    end_launch();
    select_machine(bm1684_config());
  }
  uint64_t upload(size_t floats) {
    const uint64_t a = machine().allocate(floats * 4);
    std::vector<float> v(floats);
    for (size_t i = 0; i < floats; ++i) v[i] = static_cast<float>(i % 7) - 3.0f;
    std::memcpy(machine().global(a, floats * 4), v.data(), floats * 4);
    return a;
  }
};

TEST_F(NpuCost, GdmaInstructionsCarryDirectionRunsAndCycles) {
  const dim4 s{1, 64, 4, 8};  // 64 channels of 32 floats: one NPU each
  const uint64_t g = upload(64 * 32);
  okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, nullptr);  // dense: one 8 KiB run
  const dim4 half{1, 64, 4, 4};
  const dim4 sstride{64 * 32, 32, 8, 1};  // every other half row: 256 runs of 16 B
  okk_gdma_32bit_cpy_S2L(4096, g, &half, nullptr, &sstride);
  okk_gdma_32bit_cpy_L2S(g, 0, &s, nullptr, nullptr);
  const LaunchReport r = end_launch();
  ASSERT_EQ(r.slices.size(), 3u);
  EXPECT_EQ(r.slices[0].cycles, 100 + 8192 / 10 + 1);  // 819.2 -> 820
  EXPECT_EQ(r.slices[0].bytes, 8192);
  EXPECT_EQ(r.slices[0].op_class, OpClass::gdma);
  EXPECT_NE(r.slices[0].detail.find("S2L 1x64x4x8"), std::string::npos) << r.slices[0].detail;
  // 256 runs of 16 B, 32 bytes apart so not all on burst boundaries: each
  // pays its burst and one more, 256 x 128 B / 10 -> 3277.
  EXPECT_EQ(r.slices[1].cycles, 100 + 3277) << r.slices[1].detail;
  EXPECT_NE(r.slices[1].detail.find("unaligned"), std::string::npos) << r.slices[1].detail;
  EXPECT_NE(r.slices[1].detail.find("256 runs of 16 B"), std::string::npos) << r.slices[1].detail;
  EXPECT_EQ(r.slices[2].cycles, 100 + 8192 / 20 + 1);  // L2S at 20 B/cycle: 409.6 -> 410
  EXPECT_EQ(r.slices[2].start, r.slices[1].start + r.slices[1].cycles);  // sequential
  begin_launch("cost_kernel");
}

TEST_F(NpuCost, MatrixTransfersNameTheirDdrRowsAndBurstOffset) {
  // 3 rows of 1000 floats, 16 columns per NPU: one dense 12000-byte run whose
  // rows start 4000 bytes apart (not a burst multiple), from a 4-byte offset.
  const uint64_t g = upload(3 * 1000 + 1);
  okk_gdma_32bit_matrix_S2L(0, g + 4, 3, 1000, 16, 1000);
  const LaunchReport r = end_launch();
  ASSERT_EQ(r.slices.size(), 1u);
  const std::string& d = r.slices[0].detail;
  EXPECT_NE(d.find("S2L matrix 3x1000 into 3x63x1x16, 1 runs of 12000 B, unaligned"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("rows 4000 B apart from burst offset " + std::to_string((g + 4) % 64)),
            std::string::npos)
      << d;
  // The text is information only: the cost is the run's 189 bursts (188 and
  // one for the offset) at 10 B/cycle after the descriptor.
  EXPECT_EQ(r.slices[0].cycles, 100 + (189 * 64 + 9) / 10) << d;
  begin_launch("cost_kernel");
}

TEST_F(NpuCost, FewChannelsAreLimitedByTheNpuPorts) {
  const dim4 s{1, 2, 16, 32};  // 2 channels: 2 NPUs, 2048 bytes each
  const uint64_t g = upload(2 * 16 * 32);
  okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, nullptr);
  const LaunchReport r = end_launch();
  ASSERT_EQ(r.slices.size(), 1u);
  EXPECT_EQ(r.slices[0].cycles, 100 + 4096 / (2 * 2));  // ports: 1024 > DDR's 410
  begin_launch("cost_kernel");
}

TEST_F(NpuCost, BdcInstructionsCarryTheirClass) {
  const dim4 s{2, 70, 5, 7};  // 70 channels from NPU 0: 2 slots per NPU, x2 images
  const uint64_t g = upload(2 * 70 * 35);
  okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, nullptr);
  okk_bdc_relu(65536, 0, &s, nullptr, nullptr);
  const dim4 w{1, 70, 3, 3};
  const uint64_t gw = upload(70 * 9);
  dim4 ws;
  okk_compact_stride(&ws, 0, &w);
  okk_gdma_32bit_cpy_S2L(131072, gw, &w, &ws, nullptr);
  okk_bdc_depthwise2d(196608, 0, 131072, 0, &s, 3, 3, false, nullptr, nullptr, nullptr);
  const LaunchReport r = end_launch();
  ASSERT_EQ(r.slices.size(), 4u);
  EXPECT_EQ(r.slices[1].op_class, OpClass::arith);
  EXPECT_EQ(r.slices[1].cycles, 10 + 4 * 2 * 1);  // 4 slots x ceil(35/32) rows x 1 op
  EXPECT_EQ(r.slices[3].op_class, OpClass::depthwise);
  // Output 3x5 (no padding): 4 slots x 1 row x 9 taps.
  EXPECT_EQ(r.slices[3].cycles, 10 + 4 * 1 * 9) << r.slices[3].detail;
  begin_launch("cost_kernel");
}

// okk_bdc_matmul records its row slots, columns per channel and left_cols:
// 2 left rows x 3 output channels (one NPU slot each), 20 columns per channel
// (2 groups of 16), 5 left columns.
TEST_F(NpuCost, MatmulInstructionPaysItsColumnGroups) {
  const uint64_t left = upload(2 * 5), right = upload(5 * 60);
  okk_gdma_32bit_matrix_S2L(0, left, 2, 5, 5, 5);
  okk_gdma_32bit_matrix_S2L(65536, right, 5, 60, 20, 60);
  okk_bdc_matmul(196608, 0, 65536, 0, 2, 5, 60, 5, 20, false, false);
  const LaunchReport r = end_launch();
  ASSERT_EQ(r.slices.size(), 3u);
  EXPECT_EQ(r.slices[2].op_class, OpClass::matmul);
  EXPECT_EQ(r.slices[2].cycles, 10 + 2 * 2 * (5 * 1 + 6)) << r.slices[2].detail;
  begin_launch("cost_kernel");
}

// okk_bdc_depthwise2d and okk_bdc_conv2d pass their kernel taps to the
// formula: with a tap start-up of 5 cycles, each of the 9 taps adds 5 cycles
// per slot and lane row; okk_bdc_avg_pool2d does not.
TEST_F(NpuCost, WindowInstructionsPassTheirTaps) {
  end_launch();
  Config c = bm1684_config();
  c.cost = simple_model();
  c.cost.bdc_tap_startup_cycles = 5;
  select_machine(c);
  begin_launch("cost_kernel");
  const dim4 s{2, 70, 5, 7};  // 4 slots on the busiest NPU
  const uint64_t g = upload(2 * 70 * 35);
  okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, nullptr);
  const dim4 w{1, 70, 3, 3};
  const uint64_t gw = upload(70 * 9);
  dim4 ws;
  okk_compact_stride(&ws, 0, &w);
  okk_gdma_32bit_cpy_S2L(131072, gw, &w, &ws, nullptr);
  okk_bdc_depthwise2d(196608, 0, 131072, 0, &s, 3, 3, false, nullptr, nullptr, nullptr);
  okk_bdc_avg_pool2d(262144, 0, &s, 3, 3, nullptr, nullptr);
  const LaunchReport r = end_launch();
  ASSERT_EQ(r.slices.size(), 4u);
  EXPECT_EQ(r.slices[2].op_class, OpClass::depthwise);
  EXPECT_EQ(r.slices[2].cycles, 10 + 4 * 1 * 9 + 4 * 1 * 9 * 5) << r.slices[2].detail;
  EXPECT_EQ(r.slices[3].op_class, OpClass::pool);
  EXPECT_EQ(r.slices[3].cycles, 10 + 4 * 1 * 9) << r.slices[3].detail;
  begin_launch("cost_kernel");
}

// fp32 conv reads its weights as 2IC pairs (kit docs, layout: 2IC-mode), an
// odd IC with a dummy partner: IC 2k-1 costs as much as IC 2k, and more than
// IC 2k-2.
TEST_F(NpuCost, ConvPaysWhole2ICPairs) {
  auto conv_cycles = [&](int ic) {
    begin_launch("cost_kernel");
    const dim4 xs{1, ic, 4, 4};
    const uint64_t g = upload(static_cast<size_t>(ic) * 16);
    okk_gdma_32bit_cpy_S2L(0, g, &xs, nullptr, nullptr);
    const int pairs = (ic + 1) / 2, oc = 2;
    for (int o = 0; o < oc; ++o) {  // weights (pairs, OC, 3, 3) of 8-byte pairs on NPU o
      std::memset(okk_local_mem_addr(o, 65536), 0, static_cast<size_t>(pairs) * 9 * 8);
      std::memset(machine().written(o, 65536), 1, static_cast<size_t>(pairs) * 9 * 8);
    }
    okk_bdc_conv2d(131072, 0, 65536, 0, &xs, oc, 3, 3, nullptr, nullptr, false, false, nullptr,
                   nullptr, nullptr);
    const LaunchReport r = end_launch();
    EXPECT_EQ(r.slices.back().op_class, OpClass::conv);
    return r.slices.back().cycles;
  };
  end_launch();  // the fixture's launch: each call below opens its own
  // Output 2x2: 1 slot x 1 lane row x (2 * pairs * 9 taps) x 2 cycles per MAC,
  // times the vendor's factor: 2 for IC 1 at stride 1 ((1 + 1) / 1), 2.5 for
  // IC 3, 1 otherwise.
  EXPECT_EQ(conv_cycles(1), 10 + 2 * 1 * 9 * 2 * 2);
  EXPECT_EQ(conv_cycles(2), 10 + 2 * 1 * 9 * 2);
  EXPECT_EQ(conv_cycles(3), 10 + 2 * 2 * 9 * 2 * 5 / 2);
  EXPECT_EQ(conv_cycles(4), 10 + 2 * 2 * 9 * 2);
  EXPECT_EQ(conv_cycles(5), 10 + 2 * 3 * 9 * 2);
  EXPECT_EQ(conv_cycles(5), conv_cycles(6));  // the dummy partner costs a lane-MAC
  EXPECT_GT(conv_cycles(5), conv_cycles(4));
  begin_launch("cost_kernel");
}

// The vendor's conv factors (kit C-model, atomic_conv_forward_get_cycle: the
// MAC term x2.5 for IC = 3, x(stride_w + 1) / min(IC, 64) when that is above
// 1), checked by hand, and off when the preset sets them to 0.
TEST(NpuCostFormula, ConvMacFactorIsTheVendorsForIc3AndFewChannelsAtWideStrides) {
  CostModel m = simple_model();
  EXPECT_DOUBLE_EQ(conv_mac_factor(m, 3, 1), 2.5);
  EXPECT_DOUBLE_EQ(conv_mac_factor(m, 3, 2), 2.5);            // 3 > 3 is false
  EXPECT_DOUBLE_EQ(conv_mac_factor(m, 3, 4), 5.0 / 3 * 2.5);  // conv2d case 3-4's shape
  EXPECT_DOUBLE_EQ(conv_mac_factor(m, 1, 1), 2.0);
  EXPECT_DOUBLE_EQ(conv_mac_factor(m, 2, 1), 1.0);
  EXPECT_DOUBLE_EQ(conv_mac_factor(m, 2, 2), 1.5);
  EXPECT_DOUBLE_EQ(conv_mac_factor(m, 4, 1), 1.0);
  EXPECT_DOUBLE_EQ(conv_mac_factor(m, 4096, 15), 1.0);
  // min(IC, 64): 64 channels and more never reach the floor (stride <= 15)
  m.conv_stride_floor_channels = 4;
  EXPECT_DOUBLE_EQ(conv_mac_factor(m, 100, 7), 2.0);
  // 3 slots x 2 lane rows x 196 lane-MACs (IC 3 as 2 pairs, 7x7) x 2 cycles
  // x 25/6, IC 3 at stride 4: 9800 cycles of MACs.
  m = simple_model();
  EXPECT_EQ(bdc_instruction_cycles(m, OpClass::conv, 3, 33, 196, 32, 49, conv_mac_factor(m, 3, 4)),
            10 + 9800);
  m.conv_ic3_mac_factor = 0;
  m.conv_stride_floor_channels = 0;
  EXPECT_DOUBLE_EQ(conv_mac_factor(m, 3, 4), 1.0);
  EXPECT_DOUBLE_EQ(conv_mac_factor(m, 1, 1), 1.0);
  EXPECT_EQ(bm1684_cost_model().conv_ic3_mac_factor, 2.5);
  EXPECT_EQ(bm1684_cost_model().conv_stride_floor_channels, 64);
}

// A strided IC-3 conv through okk_bdc_conv2d: the recorded instruction pays
// the factor and names its true IC for re-costing.
TEST_F(NpuCost, StridedImageConvPaysTheVendorsFactors) {
  end_launch();
  begin_launch("cost_kernel");
  const dim4 xs{1, 3, 9, 9};
  const uint64_t g = upload(3 * 81);
  okk_gdma_32bit_cpy_S2L(0, g, &xs, nullptr, nullptr);
  for (int o = 0; o < 2; ++o) {  // weights (2 pairs, OC 2, 3, 3) of 8-byte pairs on NPU o
    std::memset(okk_local_mem_addr(o, 65536), 0, 2 * 9 * 8);
    std::memset(machine().written(o, 65536), 1, 2 * 9 * 8);
  }
  const dim2 stride{4, 4};
  okk_bdc_conv2d(131072, 0, 65536, 0, &xs, 2, 3, 3, nullptr, nullptr, false, false, nullptr,
                 &stride, nullptr);
  const LaunchReport r = end_launch();
  ASSERT_EQ(r.slices.back().op_class, OpClass::conv);
  // Output 2x2: 1 slot x 1 row x 36 lane-MACs x 2 cycles x (5/3 x 2.5) = 300.
  EXPECT_EQ(r.slices.back().cycles, 10 + 300) << r.slices.back().detail;
  EXPECT_NE(r.slices.back().detail.find("stride 4x4, ic 3"), std::string::npos)
      << r.slices.back().detail;
  begin_launch("cost_kernel");
}

TEST_F(NpuCost, ParallelRegionOverlapsEnginesAndIsRecorded) {
  const dim4 s{1, 64, 1, 32};
  const uint64_t g = upload(64 * 32);
  okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, nullptr);  // 8 KiB: 100 + 820 = 920
  okk_parallel_start();
  okk_gdma_32bit_cpy_S2L(65536, g, &s, nullptr, nullptr);  // 920
  okk_bdc_relu(131072, 0, &s, nullptr, nullptr);           // 11
  okk_bdc_relu(196608, 0, &s, nullptr, nullptr);           // 11
  okk_parallel_end();
  okk_bdc_relu(262144, 0, &s, nullptr, nullptr);  // 11
  const LaunchReport r = end_launch();
  ASSERT_EQ(r.slices.size(), 5u);
  EXPECT_EQ(r.slices[1].start, 920);
  EXPECT_EQ(r.slices[2].start, 920);  // both engines start at the region's start
  EXPECT_EQ(r.slices[3].start, 931);
  EXPECT_EQ(r.slices[4].start, 1840);
  EXPECT_EQ(r.device_cycles, 920 + 920 + 11);
  EXPECT_EQ(r.gdma_busy_cycles, 1840);
  EXPECT_EQ(r.bdc_busy_cycles, 33);
  EXPECT_EQ(r.overlap_cycles, 22);
  ASSERT_EQ(r.regions.size(), 1u);
  EXPECT_EQ(r.regions[0].start, 920);
  EXPECT_EQ(r.regions[0].end, 1840);
  EXPECT_DOUBLE_EQ(r.device_us, 1851 / 500.0 + 10.0);
  const std::string text = format_report(r);
  EXPECT_NE(text.find("GDMA busy 3.680 us"), std::string::npos) << text;
  EXPECT_NE(text.find("overlap 0.044 us"), std::string::npos) << text;
  EXPECT_NE(text.find("okk_gdma_32bit_cpy_S2L"), std::string::npos) << text;
  begin_launch("cost_kernel");
}

// The firmware's issue time: added to every instruction outside a region;
// inside one it only delays an engine that is idle, and the overlap counts
// the cycles both engines really worked at once.
TEST_F(NpuCost, IssueDelaysInstructionsAndOverlapCountsRealIntervals) {
  Config c = machine().config();
  c.cost.issue_cycles = 50;
  select_machine(c);
  begin_launch("cost_kernel");
  const dim4 s{1, 64, 1, 32};
  const uint64_t g = upload(64 * 32);
  okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, nullptr);  // issue 50, then 920
  okk_parallel_start();
  okk_bdc_relu(131072, 0, &s, nullptr, nullptr);           // issued at 50: 50..61
  okk_bdc_relu(196608, 0, &s, nullptr, nullptr);           // issued at 100: 100..111
  okk_gdma_32bit_cpy_S2L(65536, g, &s, nullptr, nullptr);  // issued at 150: 150..1070
  okk_bdc_relu(262144, 0, &s, nullptr, nullptr);           // issued at 200: 200..211
  okk_parallel_end();
  const LaunchReport r = end_launch();
  ASSERT_EQ(r.slices.size(), 5u);
  EXPECT_EQ(r.slices[0].start, 50);
  EXPECT_EQ(r.slices[1].start, 970 + 50);
  EXPECT_EQ(r.slices[2].start, 970 + 100);
  EXPECT_EQ(r.slices[3].start, 970 + 150);
  EXPECT_EQ(r.slices[4].start, 970 + 200);
  EXPECT_EQ(r.device_cycles, 970 + 1070);
  EXPECT_EQ(r.gdma_busy_cycles, 1840);
  EXPECT_EQ(r.bdc_busy_cycles, 33);
  EXPECT_EQ(r.overlap_cycles, 11);  // only the last relu runs under the GDMA
  ASSERT_EQ(r.regions.size(), 1u);
  EXPECT_EQ(r.regions[0].end - r.regions[0].start, 1070);
  begin_launch("cost_kernel");
}

TEST_F(NpuCost, TraceJsonReadsBackSlicesRegionsAndTotals) {
  const dim4 s{1, 64, 1, 32};
  const uint64_t g = upload(64 * 32);
  okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, nullptr);
  okk_parallel_start();
  okk_gdma_32bit_cpy_S2L(65536, g, &s, nullptr, nullptr);
  okk_bdc_relu(131072, 0, &s, nullptr, nullptr);
  okk_parallel_end();
  LaunchReport a = end_launch();
  a.kernel = "quote\"and\\slash";  // escaping survives the round trip
  begin_launch("second");
  okk_bdc_relu(196608, 0, &s, nullptr, nullptr);
  const LaunchReport b = end_launch();
  const std::vector<LaunchReport> back = read_chrome_trace(chrome_trace_json({a, b}));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].kernel, a.kernel);
  EXPECT_EQ(back[0].device_cycles, a.device_cycles);
  EXPECT_EQ(back[0].overlap_cycles, a.overlap_cycles);
  EXPECT_DOUBLE_EQ(back[0].clock_mhz, 500.0);
  ASSERT_EQ(back[0].slices.size(), a.slices.size());
  for (size_t i = 0; i < a.slices.size(); ++i) {
    EXPECT_EQ(back[0].slices[i].function, a.slices[i].function) << i;
    EXPECT_EQ(back[0].slices[i].engine, a.slices[i].engine) << i;
    EXPECT_EQ(back[0].slices[i].op_class, a.slices[i].op_class) << i;
    EXPECT_EQ(back[0].slices[i].start, a.slices[i].start) << i;
    EXPECT_EQ(back[0].slices[i].cycles, a.slices[i].cycles) << i;
    EXPECT_EQ(back[0].slices[i].bytes, a.slices[i].bytes) << i;
    EXPECT_EQ(back[0].slices[i].detail, a.slices[i].detail) << i;
  }
  ASSERT_EQ(back[0].regions.size(), 1u);
  EXPECT_EQ(back[0].regions[0].end, a.regions[0].end);
  EXPECT_EQ(back[1].kernel, "second");
  EXPECT_EQ(back[1].slices.size(), 1u);
  EXPECT_THROW(read_chrome_trace("{\"traceEvents\": [1, 2"), Error);
  EXPECT_THROW(read_chrome_trace("[]"), Error);
  begin_launch("cost_kernel");
}

void traced_kernel(const void*) {
  const dim4 s{1, 8, 2, 2};
  x32 one;
  one.fp32 = 1.0f;
  okk_gdma_32bit_set_C_local(0, one, &s, nullptr);
  okk_bdc_relu(65536, 0, &s, nullptr, nullptr);
}

TEST_F(NpuCost, LaunchWritesTheTraceFileNamedByNpukitTrace) {
  end_launch();
  register_kernel("traced_kernel", traced_kernel);
  const std::string path = ::testing::TempDir() + "npukit_cost_trace.json";
  ::setenv("NPUKIT_TRACE", path.c_str(), 1);
  ASSERT_TRUE(launch("traced_kernel", nullptr));
  ::unsetenv("NPUKIT_TRACE");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  const std::vector<LaunchReport> back = read_chrome_trace(text.str());
  ASSERT_GE(back.size(), 1u);
  EXPECT_EQ(back.back().kernel, "traced_kernel");
  ASSERT_EQ(back.back().slices.size(), 2u);
  EXPECT_EQ(back.back().slices[0].engine, Engine::gdma);
  EXPECT_EQ(back.back().slices[1].op_class, OpClass::arith);
  begin_launch("cost_kernel");
}

TEST_F(NpuCost, TimelineSvgHasLanesBarsRegionsAndLegend) {
  const dim4 s{1, 64, 1, 32};
  const uint64_t g = upload(64 * 32);
  okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, nullptr);
  okk_parallel_start();
  okk_gdma_32bit_cpy_S2L(65536, g, &s, nullptr, nullptr);
  okk_bdc_relu(131072, 0, &s, nullptr, nullptr);
  okk_parallel_end();
  okk_parallel_start();
  okk_bdc_relu(196608, 0, &s, nullptr, nullptr);
  okk_parallel_end();
  const LaunchReport r = end_launch();
  const std::string svg = timeline_svg(r);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(count(svg, "<svg "), 1u);
  EXPECT_EQ(count(svg, "</svg>"), 1u);
  EXPECT_EQ(count(svg, "class=\"lane\""), 2u);
  EXPECT_EQ(count(svg, "data-engine=\"GDMA\""), 1u);
  EXPECT_EQ(count(svg, "data-engine=\"BDC\""), 1u);
  EXPECT_EQ(count(svg, "class=\"slice\""), 4u);
  EXPECT_EQ(count(svg, "class=\"slice\" data-class=\"gdma\""), 2u);
  EXPECT_EQ(count(svg, "class=\"slice\" data-class=\"arith\""), 2u);
  EXPECT_EQ(count(svg, "class=\"region\""), 2u);
  EXPECT_EQ(count(svg, "class=\"legend-swatch\""), 2u);      // the classes present
  EXPECT_NE(svg.find("gdma: 3.680 us"), std::string::npos);  // 2 x 920 cycles at 500 MHz
  EXPECT_NE(svg.find("arith: 0.044 us"), std::string::npos);
  EXPECT_NE(svg.find("GDMA busy 3.680 us"), std::string::npos);
  begin_launch("cost_kernel");
}

TEST_F(NpuCost, SlicesAreCappedButTotalsCountEveryInstruction) {
  Instruction in;
  in.function = "f";
  in.engine = Engine::bdc;
  in.cycles = 3;
  const int64_t n = (int64_t{1} << 16) + 100;
  for (int64_t i = 0; i < n; ++i) record_cost(in);
  const LaunchReport r = end_launch();
  EXPECT_EQ(r.instructions, n);
  EXPECT_EQ(r.device_cycles, 3 * n);
  EXPECT_EQ(r.bdc_busy_cycles, 3 * n);
  EXPECT_EQ(static_cast<int64_t>(r.slices.size()), int64_t{1} << 16);
  EXPECT_EQ(r.slices_dropped, 100);
  begin_launch("cost_kernel");
}

TEST_F(NpuCost, TimelineSvgMergesSubPixelNeighboursButKeepsGaps) {
  LaunchReport r;
  r.kernel = "many";
  r.clock_mhz = 500.0;
  // 10000 touching one-cycle BDC bars, then a gap, then one more.
  for (int i = 0; i < 10000; ++i)
    r.slices.push_back(TraceSlice{"f", Engine::bdc, OpClass::arith, i, 1, 0, "", ""});
  r.slices.push_back(TraceSlice{"g", Engine::bdc, OpClass::arith, 20000, 1, 0, "", ""});
  r.device_cycles = 20001;
  const std::string svg = timeline_svg(r);
  const size_t bars = count(svg, "class=\"slice\"");
  EXPECT_GE(bars, 2u);
  EXPECT_LT(bars, 2000u);  // about one bar per pixel, not one per instruction
  EXPECT_NE(svg.find("arith: 20.002 us"), std::string::npos);
}

}  // namespace
}  // namespace test_npu_cost
}  // namespace npukit::npu
