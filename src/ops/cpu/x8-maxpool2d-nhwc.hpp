// s8/u8 max pooling of NHWC tensors with channels in lanes: per output pixel,
// the window's taps on the input are reduced with max over whole registers of
// channels (several registers per step when there are enough channels), the
// padding value is added when the window has a padding row or column, and the
// batch and row loops stay outside. Windows without input taps, dilation and
// zero insertion are left to the other kernels.
#pragma once

#include "pool2d_plan.hpp"

namespace npukit::cpu {

// min_channels: 8 for the AVX-512 kernel (the bundled int8 model's 8-channel
// 2x2 pool: 1.34 ms against the any-layout kernel's 3.31 per 1000 images),
// 16 for AVX2 (at 8 channels measured slower than the AVX-512 kernel, 1.87 ms;
// against the AVX2 any-layout kernel not measured).
const char* x8_nhwc_declines(const Pool2dProblem& pr, int64_t min_channels);
#if defined(__x86_64__)
void max_pool2d_x8_nhwc_avx512(const Pool2dProblem& pr);
void max_pool2d_x8_nhwc_avx2(const Pool2dProblem& pr);
#endif

}  // namespace npukit::cpu
