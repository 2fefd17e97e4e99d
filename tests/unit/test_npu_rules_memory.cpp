// System memory as the vendor's C-model has it (probed with the kit's
// libbmlib.so, docs/npu-simulator.md "The machine"): one flat device memory
// whose allocations are 4 KiB apart, so a GDMA tensor may run past its
// allocation into free space (zeros) or the next allocation (a warning), but
// not beyond device memory (an error); the L2 SRAM and the DTCM at the
// vendor's addresses, with okk_l2_sram_addr / okk_dtcm_addr taking system
// addresses.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "npukit/compat/okk.h"
#include "npukit/npu/launch.hpp"
#include "npukit/npu/machine.hpp"
#include "npukit/npu/rules.hpp"

namespace npukit::npu {
namespace test_npu_rules_memory {
namespace {

class SystemMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    select_machine(bm1684_config());
    set_violation_mode(ViolationMode::throw_error);
    set_strict_rules(false);
    clear_warnings();
    begin_launch("flat_memory");
  }
  void TearDown() override {
    end_launch();
    reset_strict_rules();
  }
  static std::vector<float> iota(int n, float first) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = first + static_cast<float>(i);
    return v;
  }
};

// The probe's case: A and B of 256 bytes, 4 KiB apart; 1100 floats read from
// A are A, then zeros up to 4096 bytes, then B (vendor: "... 0 0 0 0 200 201").
TEST_F(SystemMemory, ReadAcrossAllocationsIsTheVendorsFlatMemory) {
  Machine& m = machine();
  const uint64_t a = m.allocate(256), b = m.allocate(256), o = m.allocate(8192);
  ASSERT_EQ(b - a, 4096u);
  const std::vector<float> va = iota(64, 100), vb = iota(64, 200);
  std::memcpy(m.global(a, 256), va.data(), 256);
  std::memcpy(m.global(b, 256), vb.data(), 256);
  const dim4 s{1, 1, 1, 1100};
  okk_gdma_32bit_cpy_S2L(0, a, &s, nullptr, nullptr);
  okk_gdma_32bit_cpy_L2S(o, 0, &s, nullptr, nullptr);
  const float* out = reinterpret_cast<const float*>(m.global(o, 4400));
  for (int i = 0; i < 1100; ++i) {
    const float want = i < 64     ? va[static_cast<size_t>(i)]
                       : i < 1024 ? 0.0f
                       : i < 1088 ? vb[static_cast<size_t>(i - 1024)]
                                  : 0.0f;
    ASSERT_EQ(out[i], want) << "element " << i;
  }
  // One warning naming what the tensor covers, with the same detail as an error.
  const std::vector<std::string> w = warnings_printed();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("kernel 'flat_memory': okk_gdma_32bit_cpy_S2L: parameter 'src_addr' = " +
                      std::to_string(a) + " (tensor [1, 1, 1, 1100] spanning 4400 bytes: " +
                      "allocation 0x100000000 (256 of its 256 bytes) + free space (3840 bytes) + " +
                      "allocation 0x100001000 (256 of its 256 bytes) + free space (48 bytes))"),
            std::string::npos)
      << w[0];
}

// A write past the allocation lands in the flat memory (the vendor's too);
// strict mode refuses it before anything is written.
TEST_F(SystemMemory, WritePastTheAllocationWarnsOrIsRefusedInStrictMode) {
  Machine& m = machine();
  const uint64_t a = m.allocate(16), b = m.allocate(16);
  std::memset(m.global(b, 16), 0x5a, 16);
  const dim4 s{1, 1, 1, 1025};
  x32 seven;
  seven.fp32 = 7.0f;
  okk_gdma_32bit_set_C_local(0, seven, &s, nullptr);
  set_strict_rules(true);
  EXPECT_THROW(okk_gdma_32bit_cpy_L2S(a, 0, &s, nullptr, nullptr), RuleViolation);
  EXPECT_EQ(m.global(b, 1)[0], 0x5a);
  set_strict_rules(false);
  okk_gdma_32bit_cpy_L2S(a, 0, &s, nullptr, nullptr);
  float first_of_b;
  std::memcpy(&first_of_b, m.global(b, 4), 4);
  EXPECT_EQ(first_of_b, 7.0f);
  EXPECT_EQ(warnings_printed().size(), 1u);
}

// Beyond the 4 GiB of device memory, below it (outside L2 SRAM and DTCM), or
// straddling the end of the L2 SRAM: the vendor asserts, npukit stops.
TEST_F(SystemMemory, OutsideDeviceMemoryIsAnError) {
  machine().allocate(64);
  const uint64_t start = okk_global_mem_start_addr(), end = start + (4ull << 30);
  const dim4 s{1, 1, 1, 128};
  const uint64_t l2_end = uint64_t{okk_l2_sram_start_addr()} + okk_l2_sram_size();
  const uint64_t addrs[] = {end - 256,  end,        end + (uint64_t{1} << 32),
                            0xFFFFFF00, 0x80000000, l2_end - 256};
  for (uint64_t addr : addrs) {
    SCOPED_TRACE(addr);
    try {
      okk_gdma_32bit_cpy_S2L(0, addr, &s, nullptr, nullptr);
      ADD_FAILURE() << "accepted";
    } catch (const RuleViolation& e) {
      EXPECT_NE(std::string(e.what()).find("'src_addr' = " + std::to_string(addr)),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("L2 SRAM or DTCM"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(warnings_printed().empty());
}

// Freed memory is free space again: it reads as zeros.
TEST_F(SystemMemory, FreedAllocationReadsAsZeros) {
  Machine& m = machine();
  const uint64_t a = m.allocate(64), o = m.allocate(64);
  std::memset(m.global(a, 64), 0x7f, 64);
  ASSERT_TRUE(m.release(a));
  EXPECT_EQ(m.global(a, 4), nullptr);
  const dim4 s{1, 1, 1, 16};
  okk_gdma_32bit_cpy_S2L(0, a, &s, nullptr, nullptr);
  okk_gdma_32bit_cpy_L2S(o, 0, &s, nullptr, nullptr);
  const std::vector<uint8_t> zeros(64, 0);
  EXPECT_EQ(std::memcmp(m.global(o, 64), zeros.data(), 64), 0);
  EXPECT_EQ(warnings_printed().size(), 1u);  // the read of free space
}

// Freed space is reused first fit, as the vendor's allocator does (probe:
// A, B of 1 MiB; free A; 512 KiB lands at A, 2 MiB after B, 1000 bytes at
// A + 512 KiB). The kit's max_pool host allocates and frees ~80 MB per case
// and ran out of the 4 GiB at its case 160 while addresses were never reused.
TEST_F(SystemMemory, FreedSpaceIsReusedFirstFit) {
  Machine& m = machine();
  const uint64_t a = m.allocate(1 << 20), b = m.allocate(1 << 20);
  ASSERT_NE(a, 0u);
  ASSERT_EQ(b, a + (1 << 20));
  ASSERT_TRUE(m.release(a));
  EXPECT_EQ(m.allocate(1 << 19), a);
  EXPECT_EQ(m.allocate(1 << 21), b + (1 << 20));
  EXPECT_EQ(m.allocate(1000), a + (1 << 19));
  // Allocate-and-free cycles of 1.5 GiB never exhaust the 4 GiB.
  for (int i = 0; i < 20; ++i) {
    const uint64_t big = m.allocate(3ull << 29);
    ASSERT_NE(big, 0u) << "cycle " << i;
    ASSERT_TRUE(m.release(big));
  }
  EXPECT_EQ(m.allocate(5ull << 30), 0u);  // more than the device has
}

// The DTCM at the vendor's address and size; a GDMA copy stores there and the
// kernel's C code reads it through okk_dtcm_addr (published softmax kernels
// sum there), and what the C code writes the GDMA reads back.
TEST_F(SystemMemory, DtcmIsSystemMemoryWithAHostPointer) {
  EXPECT_EQ(okk_dtcm_start_addr(), 0x2020000u);
  EXPECT_EQ(okk_dtcm_size(), 390144u);
  const std::vector<float> x = iota(64, 100);
  const uint64_t g = machine().allocate(256), o = machine().allocate(256);
  std::memcpy(machine().global(g, 256), x.data(), 256);
  const dim4 s{1, 1, 1, 64};
  const unsigned d = okk_dtcm_start_addr() + 1024;
  okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, nullptr);
  okk_gdma_32bit_cpy_L2S(d, 0, &s, nullptr, nullptr);
  okk_poll();
  float* host = reinterpret_cast<float*>(okk_dtcm_addr(d));
  EXPECT_EQ(host[0], 100.0f);
  EXPECT_EQ(host[63], 163.0f);
  EXPECT_EQ(okk_dtcm_addr(d + 4) - okk_dtcm_addr(d), 4);
  host[0] = 42.0f;
  okk_gdma_32bit_cpy_S2L(4096, d, &s, nullptr, nullptr);
  okk_gdma_32bit_cpy_L2S(o, 4096, &s, nullptr, nullptr);
  const float* out = reinterpret_cast<const float*>(machine().global(o, 256));
  EXPECT_EQ(out[0], 42.0f);
  EXPECT_EQ(out[1], 101.0f);
  EXPECT_TRUE(warnings_printed().empty());
  // The last word is inside; one past the end, or an offset instead of an
  // address, is not.
  const unsigned last = okk_dtcm_start_addr() + okk_dtcm_size() - 4;
  EXPECT_NO_THROW(okk_dtcm_addr(last));
  EXPECT_THROW(okk_dtcm_addr(last + 4), RuleViolation);
  EXPECT_THROW(okk_dtcm_addr(0), RuleViolation);
  const dim4 two{1, 1, 1, 2};
  EXPECT_THROW(okk_gdma_32bit_cpy_L2S(last, 0, &two, nullptr, nullptr), RuleViolation);
}

// okk_l2_sram_addr takes a system address too (the vendor's does).
TEST_F(SystemMemory, L2SramAddrTakesASystemAddress) {
  const unsigned l2 = okk_l2_sram_start_addr();
  EXPECT_EQ(okk_l2_sram_addr(l2 + 8) - okk_l2_sram_addr(l2), 8);
  EXPECT_EQ(okk_l2_sram_addr(l2), machine().global(l2, 4));
  EXPECT_THROW(okk_l2_sram_addr(0), RuleViolation);
  EXPECT_THROW(okk_l2_sram_addr(l2 + okk_l2_sram_size()), RuleViolation);
}

}  // namespace
}  // namespace test_npu_rules_memory
}  // namespace npukit::npu
