// The fp32 NCHW convolution family for the sequential accumulation (ONNX
// Runtime, PyTorch): SIMD lanes hold consecutive output positions of one
// output channel and a block of output channels shares every input load.
// Each lane adds its products in the reference's order (ic, kh, kw), one
// rounded product and one rounded addition per step (no FMA). The input is
// copied once per call with its padding and inserted zeros written out and
// split into stride phases, so that output q = oh * Wq + ow of every step
// reads phase-plane element q + offset[step]: positions ow >= OW of the q
// layout are computed and discarded.
#pragma once

#include <cstdint>

#include "npukit/ops/conv2d.hpp"
#include "ops/kernel_list.hpp"

namespace npukit::cpu {

struct ConvProblem {
  TensorView x, w, bias, y;
  Conv2dParams params;
};

inline constexpr int64_t kConvMaxRows = 8;  // output channels per tile, at most

// One tile: output channels rows[0 .. rows) of one image and group, output
// positions [q0, q1) of the q layout.
struct ConvTile {
  const float* x;         // the group's first input channel, q = 0, step 0
  const int64_t* offset;  // per step (ic, kh, kw order): offset from x + q
  int64_t steps;
  const float* w[kConvMaxRows];  // per row: its `steps` weights, contiguous
  float* y[kConvMaxRows];        // per row: its output plane (rows contiguous)
  float bias[kConvMaxRows];
  int64_t rows;
  int64_t q0, q1;
  int64_t wq;     // q layout pitch (>= OW)
  int64_t ow;     // output width
  int64_t y_row;  // floats between output rows
  bool has_bias, result_add;
  // q layout == output layout (wq == ow == y_row: no padding columns, e.g.
  // 1x1 stride 1): position q is output element q of every row's plane.
  bool dense;
  bool clip;  // clamp to [clip_min, clip_max] last, as ref::clip_f32
  float clip_min, clip_max;
};
using ConvTileKernel = void (*)(const ConvTile& t);

struct ConvKernelShape {
  int64_t rows;       // output channels per tile the kernel is fastest with
  int64_t positions;  // positions per inner block (its reads may run this far past q1)
};

void f32_conv_tile_avx512(const ConvTile& t);
void f32_conv_tile_avx2(const ConvTile& t);

void run_conv_nchw(const ConvProblem& p, ConvTileKernel kernel, ConvKernelShape shape);

// f32-conv-nchw-{avx512, avx2}, then f32-conv-dotchains (cpu::conv2d_f32:
// both accumulations, and the portable kernel), then the reference.
const KernelList<ConvProblem>& conv_nchw_kernels();

}  // namespace npukit::cpu
