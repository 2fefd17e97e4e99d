// split_row_stride2 (the stride-2 column split of the conv and depthwise
// drivers) against the definition: padded column c = pad_left + w goes to
// phase c % 2 at index c / 2, nothing else is written. Every width 0..40 and
// pad 0..5 (odd and even pads, odd and even widths, 1-wide rows).
#include <gtest/gtest.h>

#include <vector>

#include "ops/cpu/phase_split.hpp"

namespace npukit {
namespace {

TEST(PhaseSplit, Stride2RowMatchesDefinition) {
  constexpr float kUntouched = -12345.0f;
  for (int64_t W = 0; W <= 40; ++W)
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
      cpu::split_row_stride2(src.data(), W, pad, even.data(), odd.data());
      EXPECT_EQ(even, want_even) << "W " << W << " pad_left " << pad;
      EXPECT_EQ(odd, want_odd) << "W " << W << " pad_left " << pad;
    }
}

}  // namespace
}  // namespace npukit
