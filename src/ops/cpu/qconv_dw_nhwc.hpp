// Depthwise integer convolution on channels-last x and y (the runner's int8
// layout): channels in the vector lanes, so stride 2 and small maps keep
// full vectors. u8 x with channels a multiple of 16 is read in place (the
// taps of border pixels that fall in the padding read a row of x_zp');
// otherwise x' (s8 codes flipped) is copied once into a padded NHWC buffer
// with x_zp' in the padding and channels rounded up to 16. Then per output pixel and 16 channels,
// acc = sum over taps of x' * w' (w' = w - w_zp, int32, exact) + offset, offset = bias - x_zp' *
// sum(w'), all in wrapping int32 (the true sum fits), requantized with the reference's fp32
// operations.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/cpu/qconv_problem.hpp"

namespace npukit::qconv {

inline constexpr int64_t kDwNhwcLanes = 16;    // channels per vector
inline constexpr int64_t kDwNhwcMaxTaps = 64;  // window taps (pairs rounded up)

// One output row: `n` pixels, pixel i's window at x + i * x_step, its codes at
// y + i * y_step. Weights are tap pairs: w[p][c] holds w' of taps 2p (low 16
// bits) and 2p + 1 (high; 0 past the last tap, whose offset repeats 2p's), so
// one vpmaddwd / vpdpwssd sums two taps of 16 channels exactly
// (|x' * w'| <= 255 * 255).
struct DwNhwcRow {
  const uint8_t* x;  // pixel 0's top-left tap
  int64_t x_step = 0, n = 0;
  const int64_t* tap_off;  // [2 * pairs] byte offsets of the taps from a pixel's x
  // Instead (a pixel next to the border, n = 1): each tap's address, a row
  // of x_zp' for the taps in the padding.
  const uint8_t* const* tap_ptr = nullptr;
  int64_t pairs = 0, C = 0;  // tap pairs; channels stored
  const int32_t* w;          // [pairs][Cp]
  int64_t Cp = 0;            // C rounded up to kDwNhwcLanes
  const int32_t* offset;     // [Cp]
  const float* multiplier;   // [Cp]
  int32_t y_zp = 0;
  bool y_s8 = false;
  uint8_t* y;  // C codes per pixel
  int64_t y_step = 0;
  // The quad kernel's operands (tap_off / tap_ptr then hold 4 * quads taps):
  // w' as s8, [quad][64-channel chunk][j][16][4] where dword (j, d) of a
  // chunk from c0 is channel c0 + 16 * (d / 4) + 4 * j + d % 4 (the order
  // in which byte and word unpacks of 4 taps' codes leave the channels), its
  // 4 bytes the taps 4q..4q+3 (0 past the last); offsets and multipliers in
  // the same order per chunk.
  int64_t quads = 0;
  const int8_t* wq = nullptr;
  const int32_t* offset_q = nullptr;
  const float* multiplier_q = nullptr;
};
using DwNhwcFn = void (*)(const DwNhwcRow& r);
void dw_nhwc_portable(const DwNhwcRow& r);
void dw_nhwc_avx2(const DwNhwcRow& r);              // declared for every build
void dw_nhwc_avx512(const DwNhwcRow& r);            // declared for every build
void dw_nhwc_avx512vnni(const DwNhwcRow& r);        // declared for every build
void dw_nhwc_quads_avx512vnni(const DwNhwcRow& r);  // declared for every build

// w' in tap pairs for the zero points of wq; whether d was made for them.
DwNhwcWeights pack_dw_nhwc(const TensorView& w, const QuantParams& wq);
bool dw_nhwc_weights_match(const DwNhwcWeights& d, const QuantParams& wq, int64_t C);

const char* dw_nhwc_declines(const QConvProblem& p);
// As dw_nhwc_declines, and a weight zero point other than 0 (s8) or 128 (u8):
// w' then always fits s8.
const char* dw_nhwc_quads_declines(const QConvProblem& p);
inline constexpr int64_t kDwQuadChunk = 64;  // channels per chunk of the quad kernel
// The channel (from a chunk's first) of the quad layout's dword i = 16 * j + d.
inline constexpr int64_t dw_quad_channel(int64_t i) {
  return 16 * (i % 16 / 4) + 4 * (i / 16) + i % 4;
}
// w' in tap pairs (or quads) and the per-channel offsets and multipliers.
// Filled in place (it points into itself): not copied.
struct DwConstants {
  const QConvEpilogue* epi = nullptr;  // the load-time epilogue when it serves
  const DwNhwcWeights* dw = nullptr;
  const int32_t* offset = nullptr;
  const float* mult = nullptr;
  std::vector<int32_t> offset_q;  // the quad kernel's order (qconv_dw_nhwc.hpp)
  std::vector<float> mult_q;
  DwNhwcWeights own;
  std::vector<int32_t> offset_here;
  std::vector<float> mult_here;
  DwConstants() = default;
  DwConstants(const DwConstants&) = delete;
  DwConstants& operator=(const DwConstants&) = delete;
};

// Fills k for a call whose x' has zero point xz (x_zp, + 128 for s8 x) and
// Cp channels per pixel: the packed weights (or its own), and per channel
// (Cp of them) offset = bias - xz * sum(w') and the multiplier; with
// quad_order, also in the quad kernel's order.
void dw_constants(const QConvProblem& p, int32_t xz, int64_t Cp, DwConstants& k,
                  bool quad_order = true);

// The depthwise kernels' tasks: one output row of one image each, or a part
// of its columns [ow0, ow1) when there are few rows.
struct DwRowTask {
  int64_t n = 0, oh = 0, ow0 = 0, ow1 = 0;
};
class DwRowTasks {
 public:
  DwRowTasks(int64_t N, int64_t OH, int64_t OW);
  int64_t count() const { return rows_ * parts_; }
  DwRowTask at(int64_t task) const;

 private:
  int64_t rows_, OH_, parts_ = 1, cols_ = 0, wider_ = 0;
};

void run_dw_nhwc(const QConvProblem& p, DwNhwcFn fn);

}  // namespace npukit::qconv
