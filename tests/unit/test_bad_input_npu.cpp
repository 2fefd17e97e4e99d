// Hostile input to the simulated NPU's faces (issue #11): addresses near 2^64
// must not wrap the bounds checks into a wild host pointer, the bmlib host
// API refuses bad arguments with a message instead of crashing, and
// launches from several threads run one at a time on the one device.
#include <gtest/gtest.h>
#include <xmmintrin.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "npukit/compat/bmlib_runtime.h"
#include "npukit/compat/okk.h"
#include "npukit/npu/launch.hpp"
#include "npukit/npu/machine.hpp"
#include "npukit/npu/rules.hpp"

namespace npukit::npu {
namespace test_bad_input_npu {
namespace {

constexpr uint64_t kNear2To64 = ~uint64_t{0} - 7;  // 2^64 - 8, 4-byte aligned

class NpuHostile : public ::testing::Test {
 protected:
  void SetUp() override {
    select_machine(bm1684_config());
    set_violation_mode(ViolationMode::throw_error);
    mxcsr_ = _mm_getcsr();
  }
  // bm_dev_request sets FTZ/DAZ in this thread (as the vendor's does): keep
  // them away from the tests that run after these.
  void TearDown() override { _mm_setcsr(mxcsr_); }
  unsigned mxcsr_ = 0;
};

// Runs f inside a launch and reports whether it raised a rule violation on `parameter`.
template <class F>
::testing::AssertionResult violates(F&& f, const std::string& parameter) {
  begin_launch("hostile");
  try {
    f();
  } catch (const RuleViolation& e) {
    end_launch();
    if (e.parameter() == parameter) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "violation on '" << e.parameter() << "': " << e.what();
  }
  end_launch();
  return ::testing::AssertionFailure() << "no violation";
}

TEST_F(NpuHostile, GlobalRangeNeverWraps) {
  Machine& m = machine();
  const uint64_t a = m.allocate(256);
  ASSERT_NE(m.global(a, 256), nullptr);
  EXPECT_EQ(m.global(a, 257), nullptr);
  EXPECT_EQ(m.global(a + 255, 2), nullptr);
  EXPECT_EQ(m.global(a + 8, ~uint64_t{0} - 4), nullptr);  // a + 8 + bytes wraps to a + 3
  EXPECT_EQ(m.global(kNear2To64, 16), nullptr);           // after the last block, wraps to 8
  EXPECT_EQ(m.global(~uint64_t{0}, 1), nullptr);
  EXPECT_EQ(m.allocate(~uint64_t{0}), 0u);  // bytes + 127 would wrap to a small size
  EXPECT_EQ(m.allocate(~uint64_t{0} - 200), 0u);
}

TEST_F(NpuHostile, GdmaAddressesNear2To64) {
  const uint64_t g = machine().allocate(64);
  (void)g;
  const dim4 shape{1, 1, 1, 4};
  for (uint64_t addr : {kNear2To64, ~uint64_t{0} - 3, uint64_t{1} << 63}) {
    SCOPED_TRACE(addr);
    EXPECT_TRUE(
        violates([&] { okk_gdma_32bit_cpy_S2L(0, addr, &shape, nullptr, nullptr); }, "src_addr"));
    EXPECT_TRUE(violates(
        [&] {
          okk_gdma_32bit_set_C_local(0, x32{.u32 = 1}, &shape, nullptr);
          okk_gdma_32bit_cpy_L2S(addr, 0, &shape, nullptr, nullptr);
        },
        "dst_addr"));
    EXPECT_TRUE(
        violates([&] { okk_gdma_32bit_cpy_S2S(addr, g, &shape, nullptr, nullptr); }, "dst_addr"));
    EXPECT_TRUE(
        violates([&] { okk_gdma_32bit_cpy_S2S(g, addr, &shape, nullptr, nullptr); }, "src_addr"));
    EXPECT_TRUE(violates([&] { okk_gdma_32bit_set_C_system(addr, x32{.u32 = 7}, &shape, nullptr); },
                         "dst_addr"));
    EXPECT_TRUE(violates([&] { okk_gdma_8bit_set_C_system(addr, x8{.u8 = 7}, &shape, nullptr); },
                         "dst_addr"));
    EXPECT_TRUE(violates([&] { okk_gdma_32bit_matrix_S2L(0, addr, 1, 4, 4, 4); }, "src_addr"));
    EXPECT_TRUE(violates([&] { okk_global_mem_addr(addr); }, "addr"));
  }
}

TEST_F(NpuHostile, BmlibHostRefusesBadArguments) {
  bm_handle_t h = nullptr;
  ASSERT_EQ(bm_dev_request(&h, 0), BM_SUCCESS);
  bm_device_mem_t mem;
  ASSERT_EQ(bm_malloc_device_byte(h, &mem, 64), BM_SUCCESS);
  std::vector<unsigned char> host(64, 0xAB);
  testing::internal::CaptureStderr();
  for (uint64_t addr : {kNear2To64, ~uint64_t{0}, uint64_t{1} << 63}) {
    const bm_device_mem_t far = bm_mem_from_device(addr, 16);
    EXPECT_EQ(bm_memcpy_s2d(h, far, host.data()), BM_ERR_PARAM);
    EXPECT_EQ(bm_memcpy_d2s(h, host.data(), far), BM_ERR_PARAM);
    EXPECT_EQ(bm_memset_device(h, 5, far), BM_ERR_PARAM);
  }
  // A size that runs past the allocation.
  EXPECT_EQ(bm_memcpy_s2d_partial(h, mem, host.data(), 65), BM_ERR_PARAM);
  // Kernel parameters: NULL with a size, and a wrapped size.
  EXPECT_EQ(okkernel_launch_sync(h, "no_such_kernel", nullptr, 16), BM_ERR_PARAM);
  EXPECT_EQ(okkernel_launch_sync(h, "no_such_kernel", host.data(), 0xFFFFFFF8u), BM_ERR_PARAM);
  // Double free: reported, nothing else freed.
  const size_t live = machine().allocation_count();
  bm_free_device(h, mem);
  bm_free_device(h, mem);
  EXPECT_EQ(machine().allocation_count(), live - 1);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("bm_memcpy_s2d: parameter 'dst' = 0xfffffffffffffff8"), std::string::npos)
      << err;
  EXPECT_NE(err.find("okkernel_launch_sync: parameter 'args' = NULL with size 16"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("okkernel_launch_sync: parameter 'size' = 4294967288"), std::string::npos)
      << err;
  EXPECT_NE(err.find("bm_free_device: parameter 'mem'"), std::string::npos) << err;
  bm_dev_free(h);
}

// A kernel that moves `count` words through local memory address 0 (shared by
// every launch): unserialized launches would overwrite each other's data.
struct EchoArgs {
  uint64_t in, out;
  int count;
};
void echo_kernel(const void* p) {
  EchoArgs a;
  std::memcpy(&a, p, sizeof a);
  const dim4 shape{1, 1, 1, a.count};
  for (int r = 0; r < 4; ++r) {
    okk_gdma_32bit_cpy_S2L(0, a.in, &shape, nullptr, nullptr);
    okk_gdma_32bit_cpy_L2S(a.out, 0, &shape, nullptr, nullptr);
  }
}

TEST_F(NpuHostile, ConcurrentLaunchesRunOneAtATime) {
  register_kernel("hostile_echo", echo_kernel);
  bm_handle_t h = nullptr;
  ASSERT_EQ(bm_dev_request(&h, 0), BM_SUCCESS);
  constexpr int kThreads = 4, kRounds = 40, kCount = 4096;
  std::vector<int> bad(kThreads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      bm_device_mem_t in, out;
      if (bm_malloc_device_byte(h, &in, kCount * 4) != BM_SUCCESS ||
          bm_malloc_device_byte(h, &out, kCount * 4) != BM_SUCCESS) {
        bad[t] = -1;
        return;
      }
      std::vector<uint32_t> src(kCount), dst(kCount);
      for (int r = 0; r < kRounds; ++r) {
        for (int i = 0; i < kCount; ++i) src[i] = static_cast<uint32_t>(t << 24 | r << 16 | i);
        bm_memcpy_s2d(h, in, src.data());
        EchoArgs a{bm_mem_get_device_addr(in), bm_mem_get_device_addr(out), kCount};
        if (okkernel_launch_sync(h, "hostile_echo", &a, sizeof a) != BM_SUCCESS) ++bad[t];
        bm_memcpy_d2s(h, dst.data(), out);
        if (dst != src) ++bad[t];
      }
      bm_free_device(h, in);
      bm_free_device(h, out);
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
  EXPECT_EQ(last_launch_report().kernel, "hostile_echo");
  bm_dev_free(h);
}

}  // namespace
}  // namespace test_bad_input_npu
}  // namespace npukit::npu
