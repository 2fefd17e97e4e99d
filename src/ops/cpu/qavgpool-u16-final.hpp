// The final step's per-call decisions of the u16 average kernels of both ISAs
// (x8-qavgpool-u16-{avx2,avx512}.cpp): which integer or float form a plan's
// outputs take, and each window's lane constants. Plain scalar code compiled
// for the baseline ISA (qavgpool-u16-final.cpp); each kernel's Final derives
// from U16Final and adds its broadcast registers.
#pragma once

#include <cstdint>

#include "ops/cpu/qavgpool.hpp"

namespace npukit::cpu {

struct U16Final {
  enum Kind { float_mean, int_float_mean, requant, int_mean, bm_shift, float_checked };
  Kind kind = float_mean;
  const QAvgPlan* plan = nullptr;
  bool s8 = false, area = false;  // area: the divisor is kernel_area
  bool pow2_rcp = false;          // float_mean, area, ys == 1, taps a power of 2
  bool ys_one = false, zp_inside = false;
  Rounding rounding = Rounding::half_to_even;
  int rshift = 0;
  int32_t lo_code = 0;  // the lowest code, 0 where bm's ReLU follows saturation
};

// The decisions for plan P (kept by address: P must outlive the result).
U16Final u16_final(const QAvgPlan& P);

// A window's constants for the final step: the integer added to its biased
// sum (the taps' s8 bias and the zero point terms) and r, the lane's divisor
// or multiplier.
struct LaneConsts {
  int32_t offset = 0;
  float r = 1;
};
LaneConsts lane_consts(const U16Final& F, int32_t valid, int32_t clipped);

}  // namespace npukit::cpu
