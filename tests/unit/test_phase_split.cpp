// split_row_stride2 (the stride-2 column split of the conv and depthwise
// drivers) and its AVX-512 version (when the host runs it) against the
// definition: padded column c = pad_left + w goes to phase c % 2 at index
// c / 2, nothing else is written. Every width 0..80 (the AVX-512 loop takes
// 32 columns a step, then one masked step) and pad 0..5 (odd and even pads,
// odd and even widths, 1-wide rows).
#include <gtest/gtest.h>

#include <vector>

#include "npukit/kernels.hpp"
#include "ops/cpu/phase_split.hpp"

namespace npukit {
namespace test_phase_split {
namespace {

void check_split(cpu::RowSplit split, const char* name) {
  constexpr float kUntouched = -12345.0f;
  for (int64_t W = 0; W <= 80; ++W)
    for (int64_t pad = 0; pad <= 5; ++pad) {
      std::vector<float> src(static_cast<size_t>(W));
      for (int64_t w = 0; w < W; ++w) src[static_cast<size_t>(w)] = static_cast<float>(w + 1);
      const int64_t half = (pad + W + 1) / 2 + 1;
      std::vector<float> even(static_cast<size_t>(half), kUntouched), odd = even;
      std::vector<float> want_even = even, want_odd = even;
      for (int64_t w = 0; w < W; ++w) {
        const int64_t c = pad + w;
        (c % 2 == 0 ? want_even : want_odd)[static_cast<size_t>(c / 2)] =
            src[static_cast<size_t>(w)];
      }
      split(src.data(), W, pad, even.data(), odd.data());
      EXPECT_EQ(even, want_even) << name << " W " << W << " pad_left " << pad;
      EXPECT_EQ(odd, want_odd) << name << " W " << W << " pad_left " << pad;
    }
}

TEST(PhaseSplit, Stride2RowMatchesDefinition) {
  check_split(cpu::split_row_stride2, "portable");
  if (host_isa() >= Isa::avx512)
    check_split(cpu::split_row_stride2_avx512, "avx512");
  else
    GTEST_LOG_(INFO) << "host without AVX-512: split_row_stride2_avx512 not run";
}

}  // namespace
}  // namespace test_phase_split
}  // namespace npukit
