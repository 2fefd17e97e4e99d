// 2-D pooling (avg, max, sum) with every geometry of the seeds and the divisor
// and pad-value rules of the real systems as selectable semantics.
#pragma once

#include <cstdint>

#include "npukit/ops/fp32_semantics.hpp"
#include "npukit/profile.hpp"
#include "npukit/tensor.hpp"
#include "npukit/window.hpp"

namespace npukit {

enum class PoolMode : uint8_t { avg, max, sum };

// What an average divides by (docs/semantics.md, "Pooling geometry and divisors").
enum class AvgDivisor : uint8_t {
  kernel_area,  // kernel_h * kernel_w always (ONNX Runtime's MLAS count_include_pad=1, OKKernel,
                // BM168x)
  valid_count,  // taps on the input, inserted zeros included (count_include_pad=0, TFLite, MiCo)
  // Taps on the input or its padding (PyTorch count_include_pad=True; ONNX Runtime's
  // AveragePool loop: ceil_mode with count_include_pad=1, or opset >= 19).
  clipped_window,
};

// The one divisor rule of every window average (fp32 and quantized, reference
// and fast kernels): `area` = kernel_h * kernel_w, `valid` = taps on the input
// (inserted zeros included), `clipped` = taps on the input or its padding.
constexpr int64_t avg_divisor(AvgDivisor d, int64_t area, int64_t valid, int64_t clipped) {
  return d == AvgDivisor::kernel_area ? area : d == AvgDivisor::valid_count ? valid : clipped;
}

// What a padded tap holds in max pooling; it is also where the running max starts.
enum class PadValue : uint8_t {
  neg_inf,      // -inf: padding never wins (ONNX, PyTorch)
  neg_flt_max,  // -3.4028234663852886e38 (OKKernel okk_bdc_max_pool2d)
  zero,         // 0: padding takes part like a zero element
};

// How max pooling treats NaN (PoolLoop::taps; PoolLoop::mlas has its own rule).
enum class MaxNaN : uint8_t {
  propagate,  // a NaN tap makes the result NaN (PyTorch)
  ignore,     // strict `v > m`: NaN never wins (OKKernel)
  // The first tap on the input is taken as it is, later taps only if strictly
  // greater: a NaN first tap stays, a later NaN never wins, ties keep the first,
  // padding never takes part, a window with no input tap gives -FLT_MAX
  // (ONNX Runtime's MaxPool loop for dilated windows).
  first_tap,
};

// The loop that reduces an f32 window (docs/semantics.md, "fp32 pooling under onnxruntime").
enum class PoolLoop : uint8_t {
  // Each output walks its own taps row-major: one accumulator from +0 for
  // avg/sum (or the order of `accumulation`), the NaN rule of `nan` for max.
  taps,
  // ONNX Runtime's MLAS pooling. It picks one of three orders from the geometry:
  // - whole image (kernel = H x W, strides 1, no pads): element i goes to lane
  //   i % 4 for the first 4*floor(HW/4) elements, lanes combine as
  //   (l0 + l2) + (l1 + l3), the rest is added one by one;
  // - stride_w <= 2, kernels <= 32, pad_left + W + pad_right <= 2045: each
  //   input column is reduced over the window's input rows (top to bottom,
  //   starting from the first row), then each output reduces kernel_w of those
  //   column results left to right (padding columns hold the start value);
  // - otherwise the input taps row-major from +0 (avg) or -FLT_MAX (max).
  // Max steps are either `m > v ? m : v` (SIMD: NaN on either side gives v) or
  // `m < v ? v : m` (scalar: NaN never wins); `nan` and `pad_value` are unused.
  // Pads must be >= 0. Averages divide by `divisor` (kernel_area or valid_count).
  mlas,
  // MLAS's NCHWc pooling kernel, which ONNX Runtime's graph optimizer swaps in
  // for MaxPool, AveragePool (unless ceil_mode with count_include_pad) and the
  // global pools when the channel count is a multiple of its block
  // (Pool2dParams::nchwc_block): per output,
  // the window's taps that land on the input, row-major (dilation applied),
  // from +0 (avg) or -FLT_MAX (max); max steps are `m > v ? m : v` (a NaN on
  // either side gives v, of +0/-0 the second wins). Averages divide once by
  // the number of those taps for valid_count (none: 0/0, the default NaN),
  // else by kernel_h * kernel_w. `nan`, `pad_value`, `end_pad_crops` are unused.
  mlas_nchwc,
};

struct Pool2dParams {
  PoolMode mode = PoolMode::avg;
  Window2d window;
  AvgDivisor divisor = AvgDivisor::kernel_area;
  PadValue pad_value = PadValue::neg_inf;
  MaxNaN nan = MaxNaN::propagate;
  PoolLoop loop = PoolLoop::taps;
  // ONNX Runtime's NCHWc rewrite (docs/semantics.md): when > 0 and the input's
  // channel count is a multiple of it, the pooling runs PoolLoop::mlas_nchwc
  // whatever `loop` says. ONNX Runtime's block is 16 on AVX512F hosts, else 8.
  int64_t nchwc_block = 0;
  // A negative pad_end (ONNX Runtime's SAME pads) ends every window at
  // in + pad_end: avg taps past it are neither summed nor counted even where
  // they land on the input (ONNX Runtime's AveragePool loop). Otherwise such
  // taps read the input.
  bool end_pad_crops = false;
  float coeff = 1.0f;  // sum pooling multiplies the sum by this (seed 002)
  Fp32Accumulation accumulation = Fp32Accumulation::sequential;  // f32 avg/sum order
  bool flush_denormals = false;  // FTZ/DAZ on every f32 operand and result
  // s8/u8 max pooling: a window with no input element (padding >= kernel)
  // gives 0 instead of the padding value (MiCo-Lib).
  bool empty_max_is_zero = false;
  // What the model asked for, read only by apply_profile to pick the divisor
  // and the loop (kernels read `divisor` and `loop`): ONNX/PyTorch's
  // count_include_pad (bm1684 accepts only true; max pooling ignores it) and
  // the ONNX opset of an AveragePool node (ONNX Runtime runs opset 19 and
  // later in another loop; 0 stands for 19 when the window is dilated, else 18).
  bool count_include_pad = true;
  int64_t opset = 0;
};

// Sets divisor, pad value, NaN rule, loop and accumulation as `profile`
// computes fp32 pooling (onnxruntime, pytorch, bm1684); geometry and mode are
// left alone, but onnxruntime reads them (mode, dilation, ceil_mode) to pick
// ONNX Runtime's loop, so set them first, with count_include_pad and opset.
// Other profiles have no fp32 pooling and are rejected.
void apply_profile(Pool2dParams& p, Profile profile);
// apply_profile for a GlobalAveragePool / GlobalMaxPool node (params from
// global_pool2d_params). ONNX Runtime rewrites a lone global pool to NCHWc
// like the others; in a graph only when no earlier node keeps its input edge
// (its producer was rewritten too), which a single node cannot tell.
void apply_global_profile(Pool2dParams& p, Profile profile);

// The loop that runs for an input of `channels` channels (nchwc_block applied).
PoolLoop effective_pool_loop(const Pool2dParams& p, int64_t channels);

// Which of PoolLoop::mlas's three orders MLAS picks for an H x W plane.
enum class MlasPoolOrder : uint8_t { whole_image, column_sums, row_major };
MlasPoolOrder mlas_pool_order(const Window2d& w, int64_t H, int64_t W);

// ONNX Runtime's NCHWc block on this host (MLAS: 16 with AVX512F, 8 on other
// x86-64 hosts, 0 = no NCHWc rewrite elsewhere).
int64_t onnxruntime_nchwc_block();

// The window geometry a profile's pooling faces use for ONNX attributes:
// PoolGeometry::onnxruntime for onnxruntime, PoolGeometry::onnx otherwise.
PoolGeometry pool_geometry_for(Profile profile);

const char* pool_mode_name(PoolMode m);
const char* avg_divisor_name(AvgDivisor d);
const char* pad_value_name(PadValue v);
const char* max_nan_name(MaxNaN n);
const char* pool_loop_name(PoolLoop l);

// (N, C, H, W) -> (N, C, OH, OW); validates the window.
Shape pool2d_output_shape(const Shape& x, const Pool2dParams& p);

// y = pool(x). f32 for every mode; s8 and u8 for max. Any strides (NCHW or NHWC).
// An average over a window with nothing to divide by (entirely in padding
// under valid_count) is 0.
void pool2d(const TensorView& x, const TensorView& y, const Pool2dParams& p);

// Whole-image pooling: kernel = (H, W), no padding.
Pool2dParams global_pool2d_params(const Shape& x, PoolMode mode);
void global_pool2d(const TensorView& x, const TensorView& y, PoolMode mode);

namespace ref {
// The specification: plain loops over validated arguments.
void pool2d_f32(const TensorView& x, const TensorView& y, const Pool2dParams& p);
// PoolLoop::mlas (pool2d_f32 calls it).
void pool2d_f32_mlas(const TensorView& x, const TensorView& y, const Pool2dParams& p);
// PoolLoop::mlas_nchwc (pool2d_f32 calls it).
void pool2d_f32_mlas_nchwc(const TensorView& x, const TensorView& y, const Pool2dParams& p);
template <class T>
void max_pool2d_int(const TensorView& x, const TensorView& y, const Pool2dParams& p);
}  // namespace ref

}  // namespace npukit
