// f32-conv-nchw-s2-avx512: 3x3 stride-2 convolutions of few input channels
// on NCHW input under an mlas_nchwc accumulation (mobilenet_v2's stem, 3 ->
// 32 on 224x224), with x read in place. Lanes hold 16 consecutive output
// columns of one row; each input row's 32 columns under them are loaded
// (masked where they fall in the padding) and split into even and odd
// columns in registers: the taps kw = 0, 1 and 2. The padded phase-split
// copy of f32-conv-nchw (613 KB written and read for the stem) is gone.
// Bits: MLAS's NCHW-input chains, one per input channel, each (kh, kw) FMAs
// from +0 (padded taps add 0 * w, as the family does), then tot = chain +
// tot, + bias, + old y, clip.
#pragma once

#include "conv_nchw.hpp"

namespace npukit::cpu {

// Why the kernel does not take p (beyond the family's declines_nchw), or
// nullptr: a 3x3 kernel of stride 2, dilation 1, nothing inserted, pads
// left and top at most 2, one group of fewer input channels than the
// accumulation's NCHWc block (MLAS's NCHW-input chains), input rows
// contiguous.
const char* conv_nchw_s2_declines(const ConvProblem& p);
// Runs p on the threads (conv_nchw_s2_declines(p) and declines_nchw(p) nullptr).
void run_conv_nchw_s2_avx512(const ConvProblem& p);

// One task: output vectors [k0, k1) of one image, vector k covering output
// row k / vectors_per_row, columns 16 * (k % vectors_per_row) + 0 .. 15
// (those below ow), every output channel.
inline constexpr int kConvS2Rows = 12;  // output channels per block: 2 x 12 + 3 taps + 3 indexes

struct ConvS2Band {
  const float* x;  // the image's first input channel
  int64_t ic, h, w, x_channel, x_row;
  // The weights per block of kConvS2Rows output channels (the last block
  // the rest): block from oc0 at packed + oc0 * ic * 9, (c, kh, kw, r) order.
  const float* packed;
  int64_t oc;
  float* y;  // the image's first output channel
  int64_t ow, y_channel, y_row, vectors_per_row;
  const float* bias;  // per output channel, contiguous, or nullptr
  int64_t pad_top, pad_left;
  int64_t k0, k1;
  bool result_add, residual_first, clip;
  float clip_min, clip_max;
};
void conv_nchw_s2_band_avx512(const ConvS2Band& b);

}  // namespace npukit::cpu
