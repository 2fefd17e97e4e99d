// Shared by the fast pool2d kernels (src/ops/cpu/*pool2d*): the problem one
// call solves and the per-call plan of window taps. Every fast kernel runs the
// reference's per-output operation sequence; what differs is only which
// outputs share SIMD lanes:
//  - "column" lanes: consecutive outputs of one row whose columns are all
//    input taps (NCHW interiors), read at a lane stride of stride_w elements;
//  - "channel" lanes: the same output position in consecutive channels, read
//    at the channel stride (NHWC), or from a packed copy of a block of planes
//    (NCHW images too small for column lanes: each input element is copied
//    once instead of gathered once per tap).
// Lanes sharing a group see the same tap kinds, so divisors, pad taps and the
// interleaved tap parity are uniform across a group.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "npukit/ops/pool2d.hpp"
#include "ops/borrowed_view.hpp"

namespace npukit::cpu {

struct Pool2dProblem {
  BorrowedView x, y;  // validated: rank 4, y shaped by the window, same dtype
  Pool2dParams p;
};

// One window row (or column) of a group: what the tap holds and its element
// offset along that axis (0 unless kind == Tap::input).
struct AxisTap {
  Tap kind;
  int64_t offset;
};

// Consecutive outputs [lo, hi) of one axis whose taps are all input elements
// at index = first + (o - lo) * out_step + k * tap_step.
struct AxisInterior {
  int64_t lo = 0, hi = 0, first = 0, out_step = 0, tap_step = 0;
  int64_t size() const { return hi - lo; }
};

// Channels per task in channel lanes (a multiple of every ISA's vector width).
constexpr int64_t kChannelBlock = 64;

enum class Lanes : uint8_t {
  column,          // consecutive outputs of a row (NCHW rows with a wide interior)
  channel,         // consecutive channels read in place (NHWC)
  packed_channel,  // channels, from a block of planes first copied to [H][W][channels]
};

struct Pool2dPlan {
  AxisTaps h, w;
  AxisInterior w_interior;
  AxisInterior h_interior;  // output rows whose window rows are all input, equally spaced
  Lanes lanes = Lanes::channel;
};

Pool2dPlan make_pool2d_plan(const Pool2dProblem& pr);

// Everything make_pool2d_plan reads from a problem: equal geometries have
// equal plans (the key of the per-thread plan caches).
struct Pool2dGeometry {
  Window2d window;
  DType dtype = DType::f32;
  int64_t x_dims[4] = {}, x_strides[4] = {}, y_dims[4] = {}, y_strides[4] = {};
  static Pool2dGeometry of(const Pool2dProblem& pr);
  bool operator==(const Pool2dGeometry& o) const;
};

// make_pool2d_plan(pr), built once per geometry and thread: each thread keeps
// its last plan (calls of one shape repeat, and the kernel list's decline
// check and the run would otherwise build it twice per call). Shared, so a
// caller still holding a plan keeps it when a later call replaces it.
std::shared_ptr<const Pool2dPlan> shared_pool2d_plan(const Pool2dProblem& pr);

// The taps of output (o) along one axis, offsets scaled by the axis stride.
void axis_row(const AxisTaps& t, int64_t o, int64_t stride, std::vector<AxisTap>& out);

// Why a SIMD kernel with 32-bit gather offsets cannot take this problem, or nullptr.
const char* pool2d_declines_gather(const Pool2dProblem& pr, int64_t lanes);

// Entry points per ISA (each file compiles its own target).
void pool2d_f32_portable(const Pool2dProblem& pr);
void pool2d_f32_avx2(const Pool2dProblem& pr);
void pool2d_f32_avx512(const Pool2dProblem& pr);
void max_pool2d_x8_portable(const Pool2dProblem& pr);
// Why pool2d_f32_<isa> does not run pr on its 3x3 stride-1 sweep
// (f32-pool2d-nchw-sweep.inc), or nullptr when it does.
const char* f32_sweep_declines_avx2(const Pool2dProblem& pr);
const char* f32_sweep_declines_avx512(const Pool2dProblem& pr);
void max_pool2d_x8_avx2(const Pool2dProblem& pr);
void max_pool2d_x8_avx512(const Pool2dProblem& pr);

}  // namespace npukit::cpu

#include "../kernel_list.hpp"

namespace npukit {
// The "pool2d" family: f32 avg/max/sum and s8/u8 max, best first, reference last.
const KernelList<cpu::Pool2dProblem>& pool2d_kernels();
}  // namespace npukit
