// The fp32 NCHW convolution family for the sequential accumulation (ONNX
// Runtime, PyTorch): SIMD lanes hold consecutive output positions of one
// output channel and a block of output channels shares every input load.
// Each lane adds its products in the reference's order (ic, kh, kw), one
// rounded product and one rounded addition per step (no FMA). The input is
// copied once per call with its padding and inserted zeros written out and
// split into stride phases, so that output q = oh * Wq + ow of every step
// reads phase-plane element q + offset[step]: positions ow >= OW of the q
// layout are computed and discarded (or, in the row form, never computed:
// ConvTile::row_vectors).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "npukit/ops/conv2d.hpp"
#include "ops/borrowed_view.hpp"
#include "ops/kernel_list.hpp"

namespace npukit::cpu {

struct ConvPackedWeights;

struct ConvProblem {
  BorrowedView x, w, bias, y;
  Conv2dParams params;
  // w rearranged for the output-channels-in-lanes kernels (when a model is
  // planned), or nullptr: they then pack w on each call.
  const ConvPackedWeights* packed = nullptr;
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
  // Fp32Accumulation::mlas_nchwc*: one FMA per step, chains restarting from
  // +0 after each chain_end[c] (their sums added as out = chain + out), the
  // steps in MLAS's order with their weights at w[r][w_index[step]].
  // Otherwise one chain of rounded products and additions, weights in step order.
  bool fma = false;
  const int32_t* w_index = nullptr;
  const int64_t* chain_end = nullptr;
  int64_t chains = 1;
  // fma only: the total starts from the old output (Conv2dParams::
  // residual_first; result_add is then false).
  bool residual_first = false;
  // 0, or the row form (ConvKernelShape::row_lanes = L): positions [q0, q1)
  // then number vectors of L lanes, vector k = q / L covering output row
  // k / row_vectors, columns L * (k % row_vectors) + 0 .. L - 1 (read from
  // x + row * wq + column, stored at row * y_row + column): no vector spans
  // two output rows nor the q layout's padding columns.
  int64_t row_vectors = 0;
};
using ConvTileKernel = void (*)(const ConvTile& t);

struct ConvKernelShape {
  int64_t rows;       // output channels per tile the kernel is fastest with
  int64_t positions;  // positions per inner block (its reads may run this far past q1)
  // The kernel's lanes when it takes ConvTile::row_vectors, else 0. The
  // driver uses the row form where the output width is a multiple of the
  // lanes and the q layout has padding columns (mobilenet_v2's stem: q rows
  // of 113 for outputs of 112, whose vectors otherwise straddle two rows and
  // end in masked stores split across lines).
  int64_t row_lanes = 0;
};

// The input as the kernels read it: padded, phase-split planes (x itself when
// that is already the layout) and per step (ic, kh, kw) its tap's offset
// from output q's window start in the group's first plane.
struct ConvInput {
  const float* x;  // image n, channel c: x + (n * C + c) * plane
  int64_t plane;   // floats per channel
  int64_t wq;      // q layout pitch: output (oh, ow) is q = oh * wq + ow
  std::vector<int64_t> offset;
  // Where image n's group g starts (x + n * image + g * group) and where
  // output (oh, ow)'s window starts (q = oh * q_row + ow * q_col): NCHW
  // planes (C * plane, ICG * plane, wq, 1) or blocks of 16 channels
  // (prepare_conv_input_channels_last: G * B * Hp * Wp * 16, B * Hp * Wp *
  // 16, sh * Wp * 16, sw * 16 for B = ceil(ICG / 16) blocks per group).
  int64_t image = 0, group = 0, q_row = 0, q_col = 1;
  // mlas_nchwc*: offset is in MLAS's step order; per step its weight's
  // index (ic, kh, kw order) and the chains' ends.
  std::vector<int32_t> w_index;
  std::vector<int64_t> chain_end;
};
// slack: floats a kernel may read past the last plane; overreads: whether
// its reads run past a tile's last position (then x is read in place only
// if the plane size is a multiple of 16); fill: false gives the layout and
// offsets only (x nullptr: the caller pads each image itself).
ConvInput prepare_conv_input(const ConvProblem& p, int64_t slack, bool overreads, bool fill = true);
// Reorders in.offset (built in (ic, kh, kw) order) into MLAS's step order
// and fills w_index and chain_end, under an mlas_nchwc accumulation.
void order_conv_steps(const ConvProblem& p, ConvInput& in);

// Whether t is a 4-D (N, C, H, W) view with channels-last (NHWC) strides
// (H*W*C, 1, W*C, C) and C > 1: the runner's fp32 layout (src/onnx/fp32_layout.hpp).
bool is_channels_last(const TensorView& t);
// The output-channels-in-lanes form's input for a channels-last x: the
// images with their padding written out in blocks of 16 channels, each
// group's in blocks of its own (G * ceil(C/G/16), Hp, Wp, 16), each step's
// tap offset in the order of the accumulation (inserted zeros written out too).
ConvInput prepare_conv_input_channels_last(const ConvProblem& p);

void f32_conv_tile_avx512(const ConvTile& t);
void f32_conv_tile_avx2(const ConvTile& t);

void run_conv_nchw(const ConvProblem& p, ConvTileKernel kernel, ConvKernelShape shape);
// The row form's vectors per output row for a kernel of `lanes` lanes
// (ConvKernelShape::row_lanes; 0: none), or 0 where the driver keeps the q
// layout: output widths that are not a multiple of the lanes, and dense
// layouts (no padding columns, nothing to gain).
int64_t conv_nchw_row_vectors(const ConvProblem& p, int64_t lanes);

// The output-channels-in-lanes form (f32-conv-ocl-*): SIMD lanes hold output
// channels of one position, each step broadcasts one input per position and
// loads the packed weights of a block of channels (64 at AVX-512, 16 at
// AVX2); outputs go to their planes by scatter (AVX2: scalar). Every lane
// still performs its output's sequence of the reference (one rounded
// product, one rounded addition per step). For small planes (no lanes on the
// q layout's padding columns or a partial last vector) and long reductions
// (the scatter epilogue is amortized).
inline constexpr int64_t kOclMaxBlock = 64;      // output channels per packed block, at most
inline constexpr int64_t kOclMaxPositions = 16;  // positions per tile, at most

// w as a kernel reads it: per (group, block of `block` output channels, the
// kernel's tile width), steps x block floats, the lanes past the group's last
// channel zero. The steps are in (ic, kh, kw) order, or in MLAS's order for
// an mlas_nchwc accumulation (order_block: its NCHWc block, else 0).
struct ConvPackedWeights {
  int64_t oc = 0, icg = 0, kh = 0, kw = 0, groups = 0, block = 0;  // what was packed
  int64_t order_block = 0;
  std::vector<float> data;
  // The packed tensor's first float and whether all its floats are finite,
  // found once when packed: the kernels' check for padded taps reads it
  // instead of scanning w on every call (9 MB for a 512-channel 3x3 layer).
  const void* source = nullptr;
  bool finite = false;
  // A depthwise record (groups = C, block 0): the weights tap by tap along
  // the channels, [kh * kw][dw_pitch] with zeros past C (dw_pitch: C rounded
  // up to 16), as the channels-last depthwise walk reads them (dwconv.hpp).
  std::vector<float> dw_taps;
  int64_t dw_pitch = 0;
};
// Whether every weight of p.w is finite: p.packed's answer when it is a
// packing of this very tensor, else a scan.
bool conv_weights_finite(const ConvProblem& p);
// Whether p.packed is a packing of p.w whose floats are all finite: the
// answer without a scan (false also when it would take one).
bool conv_weights_known_finite(const ConvProblem& p);
std::shared_ptr<const ConvPackedWeights> pack_conv_weights(
    const TensorView& w, int64_t groups, int64_t block,
    Fp32Accumulation accumulation = Fp32Accumulation::sequential);

struct OclTile {
  const float* x;  // the group's first input plane of the image
  const int64_t* offset;
  int64_t steps;
  const float* w;       // the block's packed weights (steps x the block's width)
  int64_t rows;         // output channels of the block, 1 .. the width
  int64_t positions;    // 1 .. the kernel's max_positions(rows)
  const int64_t* q;     // per position: its q
  const int64_t* y_at;  // per position: its offset in an output plane
  float* y;             // the tile's first output plane
  int64_t y_channel;    // floats between output planes (64 of them fit in int32)
  const float* bias;    // per row (64 floats readable), or nullptr
  bool result_add, clip;
  float clip_min, clip_max;
  // 0, or the runs of positions whose outputs are consecutive (run k is
  // positions run_start[k] .. run_start[k + 1]): the AVX-512 kernel then
  // stores each run with one masked store per channel instead of a scatter
  // per position.
  int64_t runs = 0;
  int32_t run_start[kOclMaxPositions + 1];
  // Fp32Accumulation::mlas_nchwc*: w and offset in MLAS's step order, one
  // FMA per step, chains restarting from +0 after each chain_end[c] (as
  // ConvTile); otherwise one chain of rounded products and additions.
  bool fma = false;
  const int64_t* chain_end = nullptr;
  int64_t chains = 1;
  bool residual_first = false;  // as ConvTile's (result_add is then false)
  // fma only: steps at the start (lead) and end (trail) of every chain that
  // are padded taps of all the tile's positions (top and bottom output rows),
  // skipped as ocl_chain states.
  int64_t lead = 0, trail = 0;
  // fma only, kernels with OclKernel::resumes: when tot is set, this call
  // runs chains [chain0, chain1) and keeps the running totals in tot
  // (kOclTotFloats floats, the tile's own) between calls; the outputs are
  // stored by the call that runs the last chain. The driver then runs one
  // chain over many tiles before the next, so that a chain's packed weights
  // stay in L1 instead of streaming the whole block's per tile.
  float* tot = nullptr;
  int64_t chain0 = 0, chain1 = 0;
  // Chain-outer only, set on the first tile of a chain's pass: the packed
  // weights of the chain the task runs next, asked into L2 step for step
  // while this chain runs (their first reader would otherwise wait on
  // memory: a model's weights are not in cache), and how many steps of them.
  const float* prefetch = nullptr;
  int64_t prefetch_steps = 0;
};
using OclTileKernel = void (*)(const OclTile& t);
// Runs tiles t[0 .. n) of one block in order, as n calls of the tile kernel.
using OclPassKernel = void (*)(const OclTile* t, int64_t n);
inline constexpr int64_t kOclTotFloats = 24 * 16;  // P x V x lanes, at most

// A tile kernel of the form and its shape: tiles of one packed block of
// `channels` output channels and max_positions(rows) positions.
struct OclKernel {
  OclTileKernel tile;
  int64_t channels;
  int64_t (*max_positions)(int64_t rows);
  bool stores_runs = false;  // takes OclTile::runs (else always scatters)
  bool resumes = false;      // takes OclTile::tot (runs a range of chains per call)
  // Chain-outer passes in one call (the per-tile call, prologue and field
  // reloads were ~1% of a 56x56 layer), or nullptr: tile by tile.
  OclPassKernel pass = nullptr;
};
extern const OclKernel kOclAvx512;  // 16 lanes, blocks of 64 channels, 6 .. 12 positions
extern const OclKernel kOclAvx2;    // 8 lanes, blocks of 16 channels, 6 .. 12 positions

void run_conv_ocl(const ConvProblem& p, const OclKernel& kernel);
// Why the form cannot compute `p` exactly (f32-conv-ocl-* also declines
// where the positions-in-lanes form is faster), or nullptr; and the form with
// the non-finite-weight recheck of the variants (tests run it on any problem).
const char* conv_ocl_declines_exactness(const ConvProblem& p);
// The packing block of the f32-conv-ocl-* kernel that would take a conv2d of
// these weights and output plane at the allowed ISA level (where packing
// them ahead pays), or 0 where none would.
int64_t conv_ocl_block(const Shape& w, const Conv2dParams& p, int64_t y_h, int64_t y_w);
void run_conv_ocl_exact(const ConvProblem& p, const OclKernel& kernel);

// Whether conv2d's fast list has a kernel that reads and writes these
// weights' convolution on channels-last operands (NHWC strides behind the
// (N, C, H, W) shape) at the allowed ISA level: f32-conv-ocl-avx512, which
// then takes any plane (conv_ocl_block packs for it). The runner holds such
// convolutions' fp32 activations channels-last between them
// (src/onnx/fp32_layout.hpp); the results do not change.
bool conv_ocl_channels_last(const Shape& w, const Conv2dParams& p);

// f32-conv-ocl-avx512, f32-conv-nchw-s2-avx512, f32-conv-nchw-avx512, f32-conv-ocl-avx2,
// f32-conv-nchw-avx2, then f32-conv-dotchains (cpu::conv2d_f32:
// both accumulations, and the portable kernel), then the reference.
const KernelList<ConvProblem>& conv_nchw_kernels();

}  // namespace npukit::cpu
