// s8/u8 max pooling of NHWC tensors with channels in lanes: per output pixel,
// the window's taps on the input are reduced with max over whole registers of
// channels (several registers per step when there are enough channels), the
// padding value is added when the window has a padding row or column, and the
// batch and row loops stay outside. Windows without input taps, dilation and
// zero insertion are left to the other kernels.
#pragma once

#include "pool2d_plan.hpp"

namespace npukit::cpu {

const char* x8_nhwc_declines(const Pool2dProblem& pr);
#if defined(__x86_64__)
void max_pool2d_x8_nhwc_avx512(const Pool2dProblem& pr);
void max_pool2d_x8_nhwc_avx2(const Pool2dProblem& pr);
#endif

}  // namespace npukit::cpu
