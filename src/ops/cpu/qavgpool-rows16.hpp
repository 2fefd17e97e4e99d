// Plan of the x8-qavgpool-rows16-nchw kernels (x8-qavgpool-rows16-nchw.inc):
// NCHW planes whose rows fit 16 words (W, OW <= 16, stride_w 1), the integer
// final steps (scale-1 ONNX Runtime's float path, int_mean under every
// rounding rule whose numerators are not negative or that ignores the sign)
// in 16-bit lanes; on AVX2 also ONNX Runtime's float path on calibrated
// scales by the checked float tail (qavgpool.hpp: QAvgPlan::fmean_checked).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/cpu/qavgpool.hpp"

namespace npukit::cpu {

// Per call. One vector holds `rows` output rows (16 lanes each); group g
// (output rows g*rows ...) takes the lane fields of class group_class[g]:
// 3 * 16 * rows words per class, field-major (A, m, e). Per lane, with s its
// window sum of codes (s8 signed, mod 2^16) and n + h = s + A:
// q1 = (mulhi(n + h, m) >> sh), q2 = (mulhi(n + h - e, m) >> sh),
// code = clamp(q2 + ((q1 - q2) & q2) - K) (proof at rows16_build).
struct Rows16Plan {
  int rows = 1;
  bool any_even = false;  // some lane has an even divisor (q2 differs from q1)
  // Every lane's q - K lies in [lo, hi] for every input (the clamp changes
  // nothing): floor(tmin / d) >= lo and ceil(tmax / d) <= hi, t = s + c0.
  bool clamp_free = false;
  int sh = 0, K = 0;
  std::vector<int32_t> group_class;
  std::vector<uint16_t> lanes;
  // checked: per lane of each class ([class][16 * rows]) the offset of the
  // checked tail's integer D = s - x_zp * valid and its multiplier
  // fmean_check_multiplier(d), instead of `lanes` (lanes past the row: 0).
  bool checked = false;
  std::vector<int32_t> offsets;
  std::vector<float> multipliers;
};

// nullptr and *T filled (T may be null) when the kernels take p with `rows`
// output rows per vector (one_load: a group's window rows come from one
// 64-byte load; checked_tail: the kernel has the checked float tail), else
// why not.
const char* rows16_build(const QAvgPoolProblem& p, int rows, bool one_load, Rows16Plan* T,
                         bool checked_tail = false);

}  // namespace npukit::cpu
