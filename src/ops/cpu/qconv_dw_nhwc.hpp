// Depthwise integer convolution on channels-last x and y (the runner's int8
// layout): channels in the vector lanes, so stride 2 and small maps keep
// full vectors. Per call x' (u8; s8 codes flipped) is copied once into a
// padded NHWC buffer with x_zp' in the padding and channels rounded up to 16;
// then per output pixel and 16 channels, acc = sum over taps of x' * w'
// (w' = w - w_zp, int32, exact) + offset, offset = bias - x_zp' * sum(w'),
// all in wrapping int32 (the true sum fits), requantized with the reference's
// fp32 operations.
#pragma once

#include <cstdint>

#include "ops/cpu/qconv_problem.hpp"

namespace npukit::qconv {

inline constexpr int64_t kDwNhwcLanes = 16;  // channels per vector

// One output pixel: `taps` input pixels (x[tap_off[t]], Cp channels each).
struct DwNhwcPixel {
  const uint8_t* x;         // the window's top-left tap in the padded copy
  const int64_t* tap_off;   // byte offset of each tap from x
  int64_t taps = 0, C = 0;  // taps; channels stored
  const int32_t* w;         // [taps][Cp] w'
  int64_t Cp = 0;           // C rounded up to kDwNhwcLanes
  const int32_t* offset;    // [Cp]
  const float* multiplier;  // [Cp]
  int32_t y_zp = 0;
  bool y_s8 = false;
  uint8_t* y;  // C codes
};
using DwNhwcFn = void (*)(const DwNhwcPixel& px);
void dw_nhwc_portable(const DwNhwcPixel& px);
void dw_nhwc_avx512(const DwNhwcPixel& px);  // declared for every build

const char* dw_nhwc_declines(const QConvProblem& p);
void run_dw_nhwc(const QConvProblem& p, DwNhwcFn fn);

}  // namespace npukit::qconv
