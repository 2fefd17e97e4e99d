// Depthwise integer convolution on channels-last x and y with a window of at
// most 4x4 taps and w' that fits s8 (x8-qconv-dw-nhwc-cols-*): per output row
// and chunk of channels, the input rows under the window are interleaved once
// into a scratch row whose every dword holds one channel's codes x' of up to 4
// window rows at one input column (a "column quad"); then each output pixel
// is KW column quads per vector, one vpdpbusd each (u8 x' times s8 w', 4 taps
// summed exactly in int32), with the weights held in registers across the
// row. A scratch column serves every output whose window covers it (KW / stride_w
// of them), so the interleaving costs less than the quad kernel's per-pixel
// unpacks, and the padding needs no copy of x: its columns and rows read
// x_zp' (the offsets take x_zp' * sum(w') back, as for every tap).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/cpu/qconv_dw_nhwc.hpp"

namespace npukit::qconv {

inline constexpr int64_t kDwColsMaxRows = 4, kDwColsMaxCols = 4;

// Channels of the chunk from channel c0 of Cp (a multiple of 16): 64, else 32,
// else 16 (one zmm, ymm or xmm of column quads per 16, 8 or 4 channels).
inline constexpr int64_t dw_cols_chunk(int64_t Cp, int64_t c0) {
  return Cp - c0 >= 64 ? 64 : Cp - c0 >= 32 ? 32 : 16;
}
// The channel (from the chunk's first) of dword i = n / 4 * j + d of a chunk
// of n channels: vector j's dword d, in the order in which byte then word
// unpacks of 4 rows leave the channels (per 128-bit lane L: channels
// 16L + 4j .. 16L + 4j + 3). For n = 64 it is dw_quad_channel.
inline constexpr int64_t dw_cols_channel(int64_t n, int64_t i) {
  const int64_t per = n / 4, j = i / per, d = i % per;
  return 16 * (d / 4) + 4 * j + d % 4;
}

// w' of d (its tap pairs) by chunk: [chunk][kw][j][n / 4 dwords][4 bytes],
// byte shift + k = window row k (0 elsewhere and past C), s8; chunk c0's at
// byte 4 * KW * c0; empty when the window is larger than 4x4 or its rows do
// not fit after the shift.
std::vector<int8_t> pack_dw_cols(const DwNhwcWeights& d, int64_t C, int64_t KH, int64_t KW,
                                 int64_t shift);

// Per-channel offsets and multipliers ([C], padded past it or not) in the
// chunks' channel order: [C rounded up to 16], 0 and 1.0f past C.
void dw_cols_order(const int32_t* offset, const float* mult, int64_t C, std::vector<int32_t>& o,
                   std::vector<float>& m);

// One task: output row `y` (pixel 0; pixel ow at y + ow * y_step) of columns
// [ow0, ow1), and with stride_h = dilation_h = 1 and at most 3 window rows
// the next output row y2 too (else null), whose window is one row lower: the
// scratch row's byte k holds input row row[k] (pixel 0; pixel iw at row[k] +
// iw * row_step[k]), or for a row in the padding (and past the window) a row
// of x_zp' codes (before the flip) with row_step 0; y's weights are w, y2's
// w2 (the cols_lower layout).
struct DwColsRow {
  const uint8_t* row[kDwColsMaxRows];
  int64_t row_step[kDwColsMaxRows];
  int64_t KW = 0, C = 0, Cp = 0;  // channels stored; C rounded up to 16
  int64_t W = 0, pad_left = 0, stride_w = 1, dilation_w = 1;
  int64_t ow0 = 0, ow1 = 0;
  uint8_t flip = 0;  // 0x80 for s8 x: x' = x ^ 0x80
  uint8_t xz = 0;    // x_zp', read by the padding columns
  const int8_t* w;   // pack_dw_cols
  const int8_t* w2 = nullptr;
  uint8_t* y2 = nullptr;
  const int32_t* offset;  // [Cp] in the chunks' channel order
  const float* multiplier;
  int32_t y_zp = 0;
  bool y_s8 = false;
  uint8_t* y;
  int64_t y_step = 0;
};
using DwColsFn = void (*)(const DwColsRow& r);
void dw_cols_avx512vnni(const DwColsRow& r);  // declared for every build

const char* dw_cols_declines(const QConvProblem& p);
// `fallback` runs the call when the weights were packed without the column
// layout (not for a problem dw_cols_declines accepts).
void run_dw_cols(const QConvProblem& p, DwColsFn fn, DwNhwcFn fallback);

}  // namespace npukit::qconv
