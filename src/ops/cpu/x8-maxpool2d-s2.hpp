// s8/u8 max pooling of NCHW rows with horizontal stride 2, straight from the
// input rows into registers (no row buffers): per chunk of output columns,
// the window's input rows are loaded at each horizontal tap offset d and
// reduced with max, so that 16-bit word i holds taps 2i + d (low byte) and
// 2i + d + 1 (high byte); a word shift folds each pair, and the low bytes are
// the outputs (vpmovwb / packus). Lanes off the input read the padding value
// or, past the padding (ceil_mode overhang), the type's lowest value, which
// no max picks over a real tap: exactly the reference's set of taps.
// Windows with no input tap are left to the other kernels.
#pragma once

#include "pool2d_plan.hpp"

namespace npukit::cpu {

// One horizontal load per window row: taps at columns 2*ow + offset (and
// 2*ow + offset + 1 when pair).
struct X8S2Load {
  int64_t offset = 0;
  bool pair = false;
};

// The loads covering kernel_w taps starting at -pad_left (at most 8 taps).
struct X8S2Taps {
  X8S2Load loads[8];
  int count = 0;
};
X8S2Taps x8_s2_taps(const Window2d& w);

const char* x8_s2_declines(const Pool2dProblem& pr);

// Windows whose column taps of output j lie in [2j - 1, 2j + 1] (pad_left 0
// or 1, kernel_w - pad_left <= 2: k3s2p1, k2s2, k1s2): the column-maxima
// kernels below take the window's column maxima first, then pick the even and
// odd columns (x8-maxpool2d-s2-cols-avx2.cpp: 16-bit words and vpackuswb).
const char* x8_s2_cols_declines(const Pool2dProblem& pr);
// The VBMI variant (x8-maxpool2d-s2-avx512vbmi.cpp) takes the window's column
// maxima first, then picks the even and odd columns of two vectors with byte
// permutes: windows whose column taps of output j lie in [2j - 1, 2j + 1]
// (x8_s2_cols_declines), on hosts with AVX-512 VBMI.
const char* x8_s2_vbmi_declines(const Pool2dProblem& pr);
#if defined(__x86_64__)
void max_pool2d_x8_s2_avx512vbmi(const Pool2dProblem& pr);
void max_pool2d_x8_s2_avx512(const Pool2dProblem& pr);
void max_pool2d_x8_s2_avx2(const Pool2dProblem& pr);
void max_pool2d_x8_s2_cols_avx2(const Pool2dProblem& pr);
#endif

}  // namespace npukit::cpu
