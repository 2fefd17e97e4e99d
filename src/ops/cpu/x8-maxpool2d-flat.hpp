// s8/u8 max pooling over whole NCHW planes treated as flat byte arrays, for
// small planes where per-row set-up dominates (1x512x14x14; global pools are
// x8-globalpool.hpp's):
//   same: stride 1 and an output the size of the input (pads total kernel - 1
//         per axis), so output i reads input i + (kh - pad_top)*W + (kw -
//         pad_left); a per-call table of 64-bit masks says which of 64
//         consecutive outputs read the input at tap (kh, kw), the others read
//         the padding value (merge-masked loads, which cannot fault);
// Integer max is exact in any order: only the set of taps and the padding
// value must match the reference's (ref::max_pool2d_int).
#pragma once

#include "pool2d_plan.hpp"

namespace npukit::cpu {

const char* x8_flat_same_declines(const Pool2dProblem& pr);
// AVX2 keeps one mask byte per tap and output (no byte-masked loads).
const char* x8_flat_same_declines_avx2(const Pool2dProblem& pr);
#if defined(__x86_64__)
void max_pool2d_x8_same_avx512(const Pool2dProblem& pr);
void max_pool2d_x8_same_avx2(const Pool2dProblem& pr);
#endif

}  // namespace npukit::cpu
