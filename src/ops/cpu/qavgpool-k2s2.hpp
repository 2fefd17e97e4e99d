// Plan of the x8-qavgpool-k2s2-nchw kernels: 2x2 windows, stride 2, no window
// touching padding or the far border (so every divisor is 4), NCHW rows, an
// integer final step. Output j of a row averages columns 2j and 2j + 1 of two
// input rows: one pair-sum instruction per input row gives 32 of them in
// 16-bit lanes (vpmaddubsw against ones), and the quotient by 4 under any
// rounding rule is an add and an arithmetic shift:
//   R(s / 4) = (s + A + corr(s)) >> 2,
// with A and corr per rule (K2s2Plan::add, corr; proof at set_rule in
// qavgpool-k2s2.cpp). The code is R((s + 4 offset) / 4), clamped when offset
// != 0 (not R(s / 4) + offset: half to even commutes with adding even
// integers only). On calibrated scales the checked float tail
// (x8-qavgpool-vbmi-common.inc) takes the sums instead.
#pragma once

#include <cstdint>

#include "ops/cpu/qavgpool.hpp"

namespace npukit::cpu {

struct K2s2Plan {
  // The per-lane correction added to s + A before the shift.
  enum class Corr : uint8_t {
    none,      // 0
    bit2,      // (s >> 2) & 1: half to even (the quotient's parity)
    neg_one,   // -1 when s < 0: half away from zero
    neg_plus,  // +1 when s < 0: half toward zero
    neg_three  // +3 when s < 0: toward zero
  };
  Rounding rule = Rounding::half_to_even;
  int add = 0;  // A
  Corr corr = Corr::none;
  int offset = 0;  // added to the quotient (y_zp - x_zp: scale-1 ONNX Runtime)
  int lo = 0, hi = 255;
  // Output rows, each reading input rows 2r and 2r + 1 of its segment: one
  // segment per plane, or one for the whole tensor when planes and images
  // follow each other in x and y with the same pitches (stacked).
  int64_t segments = 0, seg_rows = 0, OW = 0;
  int64_t x_pitch = 0, y_pitch = 0;  // row pitches (bytes)
  bool stacked = false;
  // Two output rows per step (OW <= 32 and y's rows back to back): one
  // 64-byte store of 2 * OW codes.
  bool pairs = false;
  int64_t OH = 0;  // output rows per plane
  // Calibrated scales: ONNX Runtime's float path through the checked tail
  // (x8-qavgpool-vbmi-common.inc: checked_codes) instead of the rule above.
  bool checked = false;
};

// nullptr and *K filled (K may be null) when the kernels take p, else why not.
const char* k2s2_build(const QAvgPoolProblem& p, K2s2Plan* K);

// The AVX2 kernel reads 16-output chunks that stay inside each row (the last
// one overlaps its neighbour): nullptr when its rows have at least 16 outputs.
const char* k2s2_avx2_declines(const QAvgPoolProblem& p);

#if defined(__x86_64__)
void x8_qavgpool_k2s2_nchw_avx512vbmi(const QAvgPoolProblem& p);
void x8_qavgpool_k2s2_nchw_avx2(const QAvgPoolProblem& p);
#endif

}  // namespace npukit::cpu
