// The fp32 depthwise convolution family (depthwise2d, and conv2d with
// groups = C): one output channel reads one input channel. Kernels compute
// one output plane at a time from a copy of its input plane with the padding
// and inserted zeros written out, split into stride_h row phases and
// stride_w column phases so that the taps of consecutive outputs are
// consecutive floats and output row oh starts at padded row oh of every
// phase: SIMD lanes hold consecutive outputs, and every lane performs its
// output's scalar sequence of rounded operations in the reference's order
// (FMA only for the mlas_nchwc accumulations).
#pragma once

#include <cstdint>

#include "npukit/ops/conv2d.hpp"
#include "ops/borrowed_view.hpp"
#include "ops/cpu/phase_split.hpp"
#include "ops/kernel_list.hpp"

namespace npukit::cpu {

// One call: validated arguments of depthwise2d or of a conv2d with groups = C.
struct DwconvProblem {
  BorrowedView x, w, bias, y;  // bias is ignored unless has_bias
  Window2d window;
  int64_t multiplier = 1;  // output channels per input channel
  bool has_bias = false, result_add = false;
  Fp32Accumulation accumulation = Fp32Accumulation::sequential;
  bool flush_denormals = false;
  ClipParams clip = {};  // applied last (Conv2dParams::clip)
  // Set by a caller that has scanned w and found every weight finite, so the
  // fast variants' decline checks (up to three per call) need not scan it.
  bool w_known_finite = false;
  // w packed tap by tap (ConvPackedWeights::dw_taps, rows of taps_pitch
  // floats) when a model was planned, or nullptr: packed on each call.
  const float* w_taps = nullptr;
  int64_t taps_pitch = 0;
};

// How each depthwise kernel ends an output, shared by the plane, group and
// row-walk kernels' parameter structs: set from the problem by dw_epilogue.
struct DwEpilogue {
  bool fma = false;         // mlas_nchwc*: one chain from +0 of FMAs (one rounding per tap); else a
                            // rounded product and a rounded addition per tap
  bool result_add = false;  // the old output added last (the reference's out + acc)
  bool clip = false;        // clamp to [clip_min, clip_max] last, as ref::clip_f32
  float clip_min = 0.0f, clip_max = 0.0f;
};

// p's epilogue; `clip`: whether the kernel applies p.clip (false where the
// caller clips after it).
inline DwEpilogue dw_epilogue(const DwconvProblem& p, bool clip) {
  return {mlas_nchwc_block(p.accumulation) != 0, p.result_add, clip, p.clip.min, p.clip.max};
}

// One output plane for a plane kernel. The window of output (oh, ow) starts
// at x + oh * row + ow; its tap t is at that start + tap[t]. Reads may run
// up to row + 16 floats past the plane's last phase (the buffer has them).
struct DwPlane : DwEpilogue {
  const float* x;      // padded, phase-split input plane
  int64_t row;         // floats per padded row (>= ow + the taps' reach)
  const int64_t* tap;  // per tap (kh * KW + kw order): offset from the window start
  int64_t taps;
  const float* w;    // the channel's weights, one per tap
  int64_t oh, ow;    // output plane size
  float* y;          // output rows, contiguous along W
  int64_t y_row;     // floats between output rows
  bool interleaved;  // A[t % 2] accumulators (bm1684) instead of one
  bool has_bias;
  float bias;
  // Walk the plane as one long row of oh * row outputs into `scratch` (oh *
  // row + 16 floats), then copy each row's ow outputs to y with the epilogue:
  // fewer vectors where rows are narrow (dwconv_flat_walk decides).
  bool flat = false;
  float* scratch = nullptr;
  // Walk "lines" (rows walk of a 3x3 window with undilated rows, stride_h 1
  // or 2, not interleaved): tap kh * 3 + kw is at (kh % stride_h) *
  // row_phase + (kh / stride_h) * row + tap[kw], so one load of an input
  // line feeds every output row whose window holds it; 0: not available.
  int64_t line_stride = 0;
  int64_t row_phase = 0;  // floats between the row phases
  // The lines walk reading straight from the unpadded input plane
  // (x and tap unused): lines outside its rows are skipped and columns
  // outside it masked off, which adds nothing, as 0 * w adds nothing to an
  // accumulator that is never -0 (finite weights: dwconv_declines_fast).
  bool direct = false;
  const float* in = nullptr;  // input plane, rows of in_w floats in_row apart
  int64_t in_row = 0, in_h = 0, in_w = 0, pad_top = 0, pad_left = 0;
  // Direct: the next plane's input (same rows), prefetched block by block
  // while this plane is computed; nullptr: none.
  const float* next_in = nullptr;
};
using DwPlaneKernel = void (*)(const DwPlane& p);

// Plane kernels per ISA (each in its own file; -avx512 and -avx2 are only
// called where the host runs them).
void f32_dwconv_plane_portable(const DwPlane& p);
void f32_dwconv_plane_avx2(const DwPlane& p);
void f32_dwconv_plane_avx512(const DwPlane& p);

// Whether a plane kernel of `lanes` floats per vector walks an oh x ow output
// plane with padded rows of `row` floats flat (DwPlane::flat).
bool dwconv_flat_walk(int64_t oh, int64_t ow, int64_t row, int64_t lanes);

// One group of channels for a channels-in-lanes kernel (f32-dwconv-nchwc-*,
// f32-dwconv-nchwc-body.inc): kLanes channels of one image, multiplier 1.
struct DwGroup : DwEpilogue {
  const float* x;     // the group's first input plane (rows contiguous, planes dense)
  int64_t x_channel;  // floats between input planes
  // Channels-last input (x_channel 1): each position's channels are
  // contiguous, positions x_row and x_col floats apart; read per position,
  // no transposes. Likewise y_* for the output.
  bool x_channels_last = false;
  int64_t x_row = 0, x_col = 0;
  bool y_channels_last = false;
  int64_t y_row = 0, y_col = 0;
  int64_t channels;  // channels of the group, 1 .. the kernel's lanes
  int64_t h, w;      // input plane size
  int64_t pad_top, pad_left;
  int64_t wp;             // padded row length (positions)
  float* padded;          // [Hp][wp][lanes], borders zero: the kernel writes the interior
  const int64_t* out_at;  // per output (oh * ow order): offset of its window's first tap
  const int64_t* tap;     // per tap (kh * KW + kw order): offset from the window's first tap
  int64_t taps;
  const float* weights;  // [taps][lanes]: tap t's weight of channel c at t * lanes + c
  float* sums;           // [oh * ow][lanes] scratch
  int64_t oh, ow;
  float* y;           // the group's first output plane (dense)
  int64_t y_channel;  // floats between output planes
  const float* bias;  // per channel at bias[c * bias_step], or nullptr
  int64_t bias_step;
};
using DwGroupKernel = void (*)(const DwGroup& g);
void f32_dwconv_group_avx512(const DwGroup& g);
void f32_dwconv_group_avx2(const DwGroup& g);

// w (C, 1, KH, KW) tap by tap: `to` gets [KH * KW][pitch] floats, zeros
// past C (pitch >= C).
void pack_dwconv_taps(const TensorView& w, int64_t pitch, float* to);

// Output rows oh0 .. oh1 - 1 of one image for the channels-last row walk of
// the same kernels (f32-dwconv-nhwc-body.inc): x and y hold each position's
// channels contiguously; x is read in place, taps outside it skipped.
struct DwNhwcRows : DwEpilogue {
  const float* x;           // the image's first position
  int64_t x_row, x_col;     // floats between input rows, positions
  int64_t h, w;             // input plane size
  int64_t channels;         // C (multiplier 1)
  int64_t channels_padded;  // C rounded up to the lanes: the row length of `weights`
  int64_t kh, kw, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
  const float* weights;  // [kh * kw][channels_padded], zeros past C
  const float* bias;     // [channels_padded], zeros past C; nullptr: no bias
  float* y;              // the image's first output position
  int64_t y_row, y_col;
  int64_t oh0, oh1, ow;
  // Channels c0 .. c1 - 1 only (c0 a multiple of the lanes; c1 one too, or C).
  int64_t c0 = 0, c1 = 0;
};
using DwNhwcRowsKernel = void (*)(const DwNhwcRows& r);
void f32_dwconv_nhwc_rows_avx512(const DwNhwcRows& r);
void f32_dwconv_nhwc_rows_avx2(const DwNhwcRows& r);

// One group of up to 16 channels of one image for the stride-2 walk from
// NCHW planes to a channels-last output (f32-dwconv-s2-nhwc-avx512.cpp): 3x3
// windows at stride 2, undilated, output rows of at most 15 positions
// (mobilenet_v2's 192@28 -> 14x14). Per channel, each output row is one
// vector of its columns, its input lines read in place and split into even
// and odd columns; the rows' sums are then transposed so that each
// position's channels are one vector, finished as the row walk does and
// stored in place.
struct DwS2Nhwc : DwEpilogue {
  const float* x;            // the group's first input plane
  int64_t x_channel, x_row;  // floats between input planes, rows (columns contiguous)
  int64_t h, w, pad_top, pad_left;
  int64_t channels;      // of the group, 1 .. 16
  const float* weights;  // [16][9]: channel c's taps (kh * 3 + kw) at c * 9
  const float* bias;     // [16], zeros past `channels`; nullptr: no bias
  float* sums;           // [oh][16][16] scratch
  int64_t oh, ow;        // ow <= kDwS2NhwcMaxWidth
  float* y;              // the group's first channel at output position (0, 0)
  int64_t y_row, y_col;  // floats between output rows, positions
};
constexpr int64_t kDwS2NhwcMaxWidth = 15;
using DwS2NhwcKernel = void (*)(const DwS2Nhwc& g);
void f32_dwconv_s2_nhwc_avx512(const DwS2Nhwc& g);

// Whether the vector plane kernels read `p`'s input planes in place (3x3
// windows at stride 1 or 2 (the same both ways), undilated, no inserted
// zeros, rows contiguous; not interleaved): DwPlane::direct.
bool dwconv_reads_in_place(const DwconvProblem& p);

// Why no fast kernel of the family can compute `p` exactly, or nullptr.
const char* dwconv_declines_fast(const DwconvProblem& p);
// Why the channels-in-lanes kernels decline `p` (or are the slower form), or
// nullptr: the AVX-512 one, and the AVX2 one (the AVX-512 rule where
// AVX-512 kernels may run; else more planes: it beats the AVX2 plane kernel
// up to 56x56).
const char* dwconv_nchwc_declines(const DwconvProblem& p);
const char* dwconv_nchwc_avx2_declines(const DwconvProblem& p);
// Whether the depthwise family runs this depthwise convolution (x (N, C, H,
// W), w (C, 1, KH, KW), y (N, C, OH, OW), groups = C) on channels-last
// operands at the allowed ISA level (f32-dwconv-nchwc-avx512, no gathers)
// and it pays: output planes up to 14x14. The runner then holds the
// activations around it channels-last (src/onnx/fp32_layout.hpp).
bool dwconv_channels_last(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p);

// Whether run_dwconv_nchwc takes the channels-last row walk for `p`: x and
// y both hold each position's channels contiguously and do not overlap.
bool dwconv_nhwc_rows(const DwconvProblem& p);

// Whether run_dwconv_nchwc takes the stride-2 walk (DwS2Nhwc) for `p`, given
// such a kernel: x dense planes, y channels-last, apart; 3x3 at stride 2,
// undilated; output rows of at most kDwS2NhwcMaxWidth positions.
bool dwconv_s2_nhwc(const DwconvProblem& p);

// Runs the group kernel (`lanes` channels per group) over every (n, group),
// threaded; where x and y are both channels-last (and apart in memory), the
// row walk over every (n, output row) instead; where dwconv_s2_nhwc holds and
// `s2` is given (16 lanes), the stride-2 walk over every (n, group).
void run_dwconv_nchwc(const DwconvProblem& p, DwGroupKernel kernel, DwNhwcRowsKernel rows,
                      int64_t lanes, DwS2NhwcKernel s2 = nullptr);

// Runs the plane kernel (`lanes` floats per vector) over every (n, channel)
// plane, threaded; `split` copies stride-2 input rows into their column phases.
void run_dwconv(const DwconvProblem& p, DwPlaneKernel kernel, int64_t lanes,
                RowSplit split = split_row_stride2);

// The family: f32-dwconv-nchwc-{avx512, avx2} (small planes),
// f32-dwconv-nchw-{avx512, avx2, portable}, then the reference.
const KernelList<DwconvProblem>& dwconv_kernels();

}  // namespace npukit::cpu
