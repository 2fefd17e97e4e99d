// Fixture of the okk.h function tests: a fresh BM1684, violations thrown,
// 32-bit words moved to and from local memory through GDMA (as a kernel
// would), and a check that a call breaks a rule with a given message.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "npukit/compat/okk.h"
#include "npukit/npu/launch.hpp"
#include "npukit/npu/machine.hpp"
#include "npukit/npu/rules.hpp"

namespace npukit::npu::test {

inline constexpr uint32_t kNpuBytes = 512 * 1024;

inline uint32_t bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
inline float from_bits(uint32_t u) {
  return std::bit_cast<float>(u);
}

class OkkTest : public ::testing::Test {
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

  // Writes words (n, c, h, w order) to local `addr` with `stride` (NULL: aligned).
  static void put(local_addr_t addr, const dim4& shape, const std::vector<uint32_t>& words,
                  const dim4* stride = nullptr) {
    const uint64_t g = machine().allocate(words.size() * 4);
    std::memcpy(machine().global(g, words.size() * 4), words.data(), words.size() * 4);
    okk_gdma_32bit_cpy_S2L(addr, g, &shape, stride, nullptr);
  }
  static void put_f32(local_addr_t addr, const dim4& shape, const std::vector<float>& v,
                      const dim4* stride = nullptr) {
    std::vector<uint32_t> w(v.size());
    for (size_t i = 0; i < v.size(); ++i) w[i] = bits(v[i]);
    put(addr, shape, w, stride);
  }
  static std::vector<uint32_t> get(local_addr_t addr, const dim4& shape,
                                   const dim4* stride = nullptr) {
    const size_t count = static_cast<size_t>(shape.n) * shape.c * shape.h * shape.w;
    const uint64_t g = machine().allocate(count * 4);
    okk_gdma_32bit_cpy_L2S(g, addr, &shape, nullptr, stride);
    std::vector<uint32_t> w(count);
    std::memcpy(w.data(), machine().global(g, count * 4), count * 4);
    return w;
  }
  static std::vector<float> get_f32(local_addr_t addr, const dim4& shape,
                                    const dim4* stride = nullptr) {
    const std::vector<uint32_t> w = get(addr, shape, stride);
    std::vector<float> v(w.size());
    for (size_t i = 0; i < w.size(); ++i) v[i] = from_bits(w[i]);
    return v;
  }

  // Expects a RuleViolation whose message contains every piece.
  template <class F>
  static void expect_rule(F f, const std::vector<std::string>& pieces) {
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

}  // namespace npukit::npu::test
