// Set-up shared by the 8-bit average pooling tests: outputs as bytes in NCHW
// order, the first differing element, a random window, and the runtime
// settings restored at the end of a test.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "npukit/npukit.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::qpool_test {

// The codes of t as raw bytes, NCHW order whatever its layout or strides.
inline std::vector<uint8_t> bytes_nchw(const TensorView& t) {
  Tensor dense(t.dtype(), t.shape());
  copy(t, dense.view());
  const auto* p = static_cast<const uint8_t*>(dense.view().raw());
  return std::vector<uint8_t>(p, p + dense.numel());
}

inline std::string first_difference(const std::vector<uint8_t>& got,
                                    const std::vector<uint8_t>& want) {
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])
      return "element " + std::to_string(i) + " (NCHW order): got " + std::to_string(got[i]) +
             ", want " + std::to_string(want[i]);
  return "";
}

// A random average-pooling window: kernel 1..kh_max x 1..kw_max, strides
// 1..sh_max x 1..sw_max, each pad below its kernel, ceil mode and
// count_include_pad either way. The draws come in this order, so a test's
// seed gives the same windows as when each test wrote the draws out itself.
inline void random_avg_window(std::mt19937& g, int64_t kh_max, int64_t kw_max, int64_t sh_max,
                              int64_t sw_max, QLinearAvgPoolParams& p) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(g() % static_cast<uint64_t>(hi - lo + 1));
  };
  Window2d& w = p.window;
  w.kernel_h = pick(1, kh_max);
  w.kernel_w = pick(1, kw_max);
  w.stride_h = pick(1, sh_max);
  w.stride_w = pick(1, sw_max);
  w.pad_top = pick(0, w.kernel_h - 1);
  w.pad_bottom = pick(0, w.kernel_h - 1);
  w.pad_left = pick(0, w.kernel_w - 1);
  w.pad_right = pick(0, w.kernel_w - 1);
  w.ceil_mode = g() % 2;
  p.count_include_pad = g() % 2;
}

// Zero points for x and y, each at the low end of t's codes, the high end or
// uniform over them (the same draws as the tests' own lambdas had).
inline void random_zero_points(std::mt19937& g, DType t, QLinearAvgPoolParams& p) {
  const detail::CodeRange r = detail::code_range(t);
  auto zp = [&]() {
    const int k = static_cast<int>(g() % 4);
    return k == 0 ? r.lo
           : k == 1
               ? r.hi
               : static_cast<int32_t>(
                     r.lo + static_cast<int64_t>(g() % static_cast<uint64_t>(r.hi - r.lo + 1)));
  };
  p.x_zero_point = zp();
  p.y_zero_point = zp();
}

// Threads, ISA cap and implementation back to their defaults.
struct Restore {
  ~Restore() {
    set_num_threads(0);
    set_max_isa(host_isa());
    set_impl(Impl::fast);
  }
};

}  // namespace npukit::qpool_test
