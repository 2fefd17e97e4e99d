// The fp32 convolution family for the interleaved accumulation (BM1684: four
// accumulators L0..L3, ref::conv2d_f32_interleaved). The simulator's
// okk_bdc_conv2d runs it thousands of times per published contest kernel,
// mostly with a handful of steps (ic, kh, kw) per output on planes of
// hundreds of positions, where DotChains' output-channels-in-lanes tiles
// spend their time scattering outputs. Here SIMD lanes hold consecutive
// positions of one output row instead: each lane performs exactly the
// reference's rounded operations of its own output (no FMA, FTZ/DAZ from
// the x86 MXCSR as the reference's Fp32Arith).
#pragma once

#include <cstdint>

#include "conv_nchw.hpp"
#include "ops/kernel_list.hpp"

namespace npukit::cpu {

// One output plane (image n, output channel oc) for the row kernels.
struct InterleavedPlane {
  const float* x;            // image n's padded phase-split planes (ConvInput layout)
  const int64_t* offset;     // per step, chains one after the other: tap offset from x + q
  const float* w;            // per step, in the same order: this channel's weight
  const int64_t* chain_end;  // 4 entries: chain c is steps [chain_end[c-1], chain_end[c])
  float* y;                  // the output plane, rows contiguous
  int64_t oh, ow;            // output height and width
  int64_t wq;                // q layout pitch: output (r, c) reads from q = r * wq + c
  int64_t y_row;             // floats between output rows
  bool has_bias, result_add;
  float bias;
};

void f32_conv_interleaved_rows_avx512(const InterleavedPlane& p);
void f32_conv_interleaved_rows_avx2(const InterleavedPlane& p);

const KernelList<ConvProblem>& conv_interleaved_kernels();

}  // namespace npukit::cpu
