// The fp32 pointwise convolution on dense planes (f32-conv-1x1-dense-*):
// a 1x1 kernel, stride 1, no padding, one group, input and output planes
// with contiguous rows. Output channel oc at position q is then a dot
// product of weight row oc with input column q, so the kernels read x where
// it is (no padded copy), hold consecutive positions in SIMD lanes and a
// block of output channels in registers (each input vector feeds every
// channel of the block; each broadcast weight every vector), and write y
// directly. Every lane performs its output's sequence of rounded operations:
// the reference's (ic order, a rounded product and a rounded addition per
// step) or, under Fp32Accumulation::mlas_nchwc*, MLAS's FMA chains over
// batches of input channels (detail::mlas_conv_order), then + bias, then the
// old output (or, with residual_first, the old output starts the total),
// then the clip. For large planes, where the general positions-in-lanes tile
// (f32-conv-nchw-*) pays for its step tables and the output-channels form
// (f32-conv-1x1-*) declines.
#pragma once

#include <cstdint>

#include "conv_nchw.hpp"

namespace npukit::cpu {

// One call as the tile kernels read it (one image).
struct Dense1x1 {
  const float* x;     // input plane 0 of the image
  int64_t x_channel;  // floats between input planes
  const float* w;     // weights of output channel 0: `steps` contiguous floats
  int64_t w_channel;  // floats between output channels' weights
  float* y;           // output plane 0 of the image
  int64_t y_channel;  // floats between output planes
  const float* bias;  // per output channel at bias[oc * bias_step], or nullptr
  int64_t bias_step;
  int64_t steps;  // input channels
  // FMA chains (mlas_nchwc*): chain c is steps [chain_end[c - 1], chain_end[c]);
  // otherwise one chain of rounded products and additions.
  bool fma;
  const int64_t* chain_end;
  int64_t chains;
  bool residual_first;  // fma only: the old output starts the total
  bool result_add;      // the old output is added last (not with residual_first)
  bool clip;
  float clip_min, clip_max;
};

// Output channels [oc0, oc0 + rows) at positions [q0, q1) of one image.
struct Dense1x1Tile {
  int64_t oc0, rows, q0, q1;
};

struct Dense1x1Kernel {
  void (*tile)(const Dense1x1& d, const Dense1x1Tile& t);
  int64_t rows;       // output channels per tile, at most
  int64_t positions;  // positions per inner block (a tile's length is a multiple)
};
extern const Dense1x1Kernel kConv1x1DenseAvx512;  // 12 channels x 2 vectors of 16
extern const Dense1x1Kernel kConv1x1DenseAvx2;    // 6 channels x 2 vectors of 8

// Why the kernels cannot compute p exactly or are not the faster form, or nullptr.
const char* conv_1x1_dense_declines(const ConvProblem& p);
void run_conv_1x1_dense(const ConvProblem& p, const Dense1x1Kernel& kernel);
// The conv2d family's entries (conv_nchw_kernels()).
void run_conv_1x1_dense_avx512(const ConvProblem& p);
void run_conv_1x1_dense_avx2(const ConvProblem& p);
inline constexpr const char* kConv1x1DenseApplies =
    "1x1 kernel, stride 1, no padding or inserted zeros, one group, sequential or mlas_nchwc "
    "accumulation, dense input and output planes not overlapping, weights contiguous per output "
    "channel, output planes of more than 256 positions";

}  // namespace npukit::cpu
