// bm_dev_request sets FTZ and DAZ in the calling thread's MXCSR as the
// vendor's bmlib C-model does (probed: 0x1f80 -> 0x9fc0), unless opted out
// (docs/npu-simulator.md, "The machine").
#include <gtest/gtest.h>

#include <limits>

#include "npukit/compat/bmlib_runtime.h"
#include "npukit/npu/machine.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>

namespace npukit::npu {
namespace test_npu_bmlib_mxcsr {
namespace {

constexpr unsigned kFtzDaz = 0x8040u;

// Runs one bm_dev_request with MXCSR saved and restored around it; returns
// the MXCSR it left and (smallest denormal) * 2 computed under it.
unsigned request_mxcsr(float& product) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved & ~kFtzDaz);
  bm_handle_t h = nullptr;
  EXPECT_EQ(bm_dev_request(&h, 0), BM_SUCCESS);
  const unsigned after = _mm_getcsr();
  volatile float den = std::numeric_limits<float>::denorm_min(), two = 2.0f;
  product = den * two;
  bm_dev_free(h);
  _mm_setcsr(saved);
  return after;
}

TEST(NpuBmlibMxcsr, RequestSetsFtzAndDaz) {
  set_request_flushes_denormals(true);
  float product = -1.0f;
  const unsigned after = request_mxcsr(product);
  EXPECT_EQ(after & kFtzDaz, kFtzDaz) << std::hex << after;
  EXPECT_EQ(product, 0.0f);  // the denormal operand is read as 0
}

TEST(NpuBmlibMxcsr, OptOutKeepsMxcsr) {
  set_request_flushes_denormals(false);
  float product = -1.0f;
  const unsigned after = request_mxcsr(product);
  set_request_flushes_denormals(true);
  EXPECT_EQ(after & kFtzDaz, 0u) << std::hex << after;
  EXPECT_EQ(product, 2 * std::numeric_limits<float>::denorm_min());
}

}  // namespace
}  // namespace test_npu_bmlib_mxcsr
}  // namespace npukit::npu
#endif
