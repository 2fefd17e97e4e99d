// Plan of x8_qavgpool_k3s2_nchw_avx512vbmi: 3x3 windows, stride 2, one pixel
// of padding before the first row and column and none needed after the last
// (2 * OH <= H, 2 * OW <= W), NCHW rows, ONNX Runtime's final step: the
// integer one of scale 1 (x_scale == y_scale == 2^j, any zero points) or the
// checked float tail (calibrated scales), either divisor.
// Output j of a row reads columns 2j - 1, 2j, 2j + 1: per input row, one
// vpmaddubsw of the 64 bytes from column 64b gives the pairs (2j, 2j + 1) of
// the 32 outputs of block b, the low bytes of the 64 bytes from column 64b - 1
// give column 2j - 1. Output row i adds input rows 2i - 1, 2i, 2i + 1; row
// 2i + 1's sums are kept for row i + 1.
// Final step per lane, as rows16's (qavgpool-rows16.hpp): with t = s + c0 the
// reference's numerator over the lane's divisor d (c0 = y_zp*d - x_zp*valid),
// K even with t + K*d >= 0 and h = floor(d / 2): q1 = mulhi(s + A, m) >> 1,
// q2 = mulhi(s + A - e, m) >> 1 (A = c0 + K*d + h, m = ceil(2^17 / d), e = 1
// for even d), code = clamp(q2 + ((q1 - q2) & q2) - K): q1 rounds ties up,
// q2 down, and the even one is picked (odd d has no ties: e = 0, q2 = q1).
// floor(x * m / 2^17) == floor(x / d) for every x in [0, xmax] when xmax *
// (m*d - 2^17) < 2^17 (checked per lane by k3s2_build).
// Calibrated scales (ONNX Runtime's float path with the plan's checked tail,
// fmean_checked): per lane v' = fl(fl(D * c) + y_zp), D = s - x_zp*valid, c =
// fmean_check_multiplier(d), the code rint(v') clamped where |v' - rint(v')|
// is below the plan's bound, else the reference's chain (qavg_fmean_redo):
// the operations of x8-qavgpool-u16-nchw-avx512's float_checked tail.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/cpu/qavgpool.hpp"

namespace npukit::cpu {

struct K3s2Plan {
  int64_t OH = 0, OW = 0, blocks = 0;  // blocks of 32 outputs per row (even)
  int K = 0;
  bool any_even = false;
  // Fields A, m, e (16-bit) of every lane of the two row classes (row 0:
  // its first window row in the padding; the others), field-major per
  // class: [class][field][blocks * 32].
  std::vector<uint16_t> fields;
  // checked: -x_zp*valid and c per lane ([class][blocks * 32]) instead.
  bool checked = false;
  std::vector<int32_t> offsets;
  std::vector<float> multipliers;
};

// nullptr and *K filled (K may be null) when the kernel takes p, else why not.
const char* k3s2_build(const QAvgPoolProblem& p, K3s2Plan* K);

// The AVX2 kernel's strips of 16 outputs stay inside each row (the last one
// overlaps its neighbour): nullptr when it takes p (rows of >= 16 outputs).
const char* k3s2_avx2_declines(const QAvgPoolProblem& p);

#if defined(__x86_64__)
void x8_qavgpool_k3s2_nchw_avx512vbmi(const QAvgPoolProblem& p);
void x8_qavgpool_k3s2_nchw_avx2(const QAvgPoolProblem& p);
#endif

}  // namespace npukit::cpu
