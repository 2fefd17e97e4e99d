// The channels-last form of the integer convolution (x8-qconv-nhwc.cpp
// drives it): output channels in the vector lanes, output pixels broadcast.
// Per call x' is copied once into a padded NHWC buffer (x_zp' in the padding,
// channels rounded up to quads), so a pixel's taps are plain offsets from its
// top-left corner and no im2col tile is built; weights are packed once as
// [oc block of 64][tap][channel quad][64][4]. A micro-kernel computes up to
// kNhwcPixels pixels x 64 channels, exactly in int32 (vpdpbusd or plain
// loops), then requantizes with the reference's fp32 operations into an NHWC
// staging buffer, which is transposed into the NCHW output. Channels-last x
// and y (the runner's int8 layout) skip the transposes: x is copied row by
// row (or read in place when it needs no padding), y written directly.
// Only for weights whose zero point w_zp' is 0 (symmetric s8): the sum of
// x' over a pixel's taps is then not needed. Under MLAS's int16 pairs
// (raw u8 x and s8 w) the same layout holds the (kh, kw, ic) order's
// adjacent pairs when C is even.
#pragma once

#include <cstdint>

#include "ops/cpu/qconv_problem.hpp"

namespace npukit::qconv {

inline constexpr int64_t kNhwcOcBlock = 64;  // output channels per block: 4 vectors
inline constexpr int kNhwcPixels = 6;        // pixels per micro-kernel call (24 accumulators)

// One micro-kernel call: R pixels x kNhwcOcBlock channels.
struct NhwcBlock {
  const uint8_t* px[kNhwcPixels];  // each pixel's top-left tap in the padded copy
  const int64_t* tap_off;          // byte offset of each tap from px[r]
  int64_t taps = 0, C4 = 0;        // taps; channel quads per tap
  const int8_t* w;                 // the block's weights [tap][C4][64][4]
  // The same as [tap][C4][2][64][2] int16, each quad's pairs (w0, w2) then
  // (w1, w3) (AVX2 kernel).
  const int16_t* w16 = nullptr;
  const int32_t* offset;    // [64]: bias - x_zp' * sum(w') (wrapping)
  const float* multiplier;  // [64]: QConvProblem::multiplier(o)
  int32_t y_zp = 0;
  bool y_s8 = false;
  uint8_t* y;  // codes of pixel r, channel o at y[r * y_stride + o]
  int64_t y_stride = 0;
  int lanes = kNhwcOcBlock;  // channels computed and stored per pixel (fewer in the last block)
};
using NhwcFn = void (*)(const NhwcBlock& b, int R);
void nhwc_block_portable(const NhwcBlock& b, int R);
void nhwc_block_avx512vnni(const NhwcBlock& b, int R);  // declared for every build
void nhwc_block_avx2(const NhwcBlock& b, int R);        // declared for every build
// MLAS's int16-pair sums of raw u8 x and s8 w codes (declared for every build).
void nhwc_block_pairs_avx2(const NhwcBlock& b, int R);

// Whether t (logically NCHW) holds NHWC bytes: the runner's int8 layout, or
// any layout when the strides of axes of size 1 do not matter (a 1x1 map,
// as a classifier's input: NCHW and NHWC are the same bytes).
inline bool is_channels_last(const TensorView& t) {
  const int64_t C = t.dim(1), W = t.dim(3);
  return (C == 1 || t.stride(1) == 1) && (W == 1 || t.stride(3) == C) &&
         (t.dim(2) == 1 || t.stride(2) == W * C);
}

// Why the NHWC kernels decline p (null: they accept it).
const char* nhwc_declines(const QConvProblem& p);
// As nhwc_declines, and NCHW x and y (below AVX-512 VNNI the NCHW GEMM takes those).
const char* nhwc_declines_channels_last(const QConvProblem& p);
// Why the NHWC pair kernel declines p: as nhwc_declines_channels_last but
// for the int16-pair accumulation, whose pairs must not span two taps (an
// odd input channel count: the NCHW GEMM's im2col order takes those).
const char* nhwc_pairs_declines(const QConvProblem& p);
// int16_weights: fn reads NhwcBlock::w16 (the pack's, else converted per call).
void run_gemm_nhwc(const QConvProblem& p, NhwcFn fn, bool int16_weights = false);

// Packs w' (s8; u8 weights as w ^ 0x80) into the NHWC layout; pk's other fields
// (K, w_sum) are filled by pack_qconv.
void pack_nhwc(const TensorView& w, QConvPackedWeights& pk);
// nhwc_w's quads [64][4] as int16 pairs [2][64][2] (sign-extended): (w0, w2)
// then (w1, w3), the pairs the AVX2 kernel forms of x' by a mask and a shift.
void widen_nhwc(const std::vector<int8_t>& w, std::vector<int16_t>& w16);

}  // namespace npukit::qconv
