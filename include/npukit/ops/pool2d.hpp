// 2-D pooling (avg, max, sum) with every geometry of the seeds and the divisor
// and pad-value rules of the real systems as selectable semantics.
#pragma once

#include <cstdint>

#include "npukit/ops/fp32_semantics.hpp"
#include "npukit/ops/window.hpp"
#include "npukit/profile.hpp"
#include "npukit/tensor.hpp"

namespace npukit {

enum class PoolMode : uint8_t { avg, max, sum };

// What an average divides by (docs/semantics.md, "Pooling geometry and divisors").
enum class AvgDivisor : uint8_t {
  kernel_area,  // kernel_h * kernel_w always (ONNX Runtime count_include_pad=1, OKKernel, BM168x)
  valid_count,  // taps on the input, inserted zeros included (count_include_pad=0, TFLite, MiCo)
  clipped_window,  // taps on the input or its padding (PyTorch count_include_pad=True)
};

// What a padded tap holds in max pooling; it is also where the running max starts.
enum class PadValue : uint8_t {
  neg_inf,      // -inf: padding never wins (ONNX, PyTorch)
  neg_flt_max,  // -3.4028234663852886e38 (OKKernel okk_bdc_max_pool2d)
  zero,         // 0: padding takes part like a zero element
};

// How max pooling treats NaN.
enum class MaxNaN : uint8_t {
  propagate,  // a NaN tap makes the result NaN (PyTorch)
  ignore,     // strict `v > m`: NaN never wins (OKKernel)
};

struct Pool2dParams {
  PoolMode mode = PoolMode::avg;
  Window2d window;
  AvgDivisor divisor = AvgDivisor::kernel_area;
  PadValue pad_value = PadValue::neg_inf;
  MaxNaN nan = MaxNaN::propagate;
  float coeff = 1.0f;  // sum pooling multiplies the sum by this (seed 002)
  Fp32Accumulation accumulation = Fp32Accumulation::sequential;  // f32 avg/sum order
  bool flush_denormals = false;  // FTZ/DAZ on every f32 operand and result
  // s8/u8 max pooling: a window with no input element (padding >= kernel)
  // gives 0 instead of the padding value (MiCo-Lib).
  bool empty_max_is_zero = false;
};

// Sets divisor, pad value and NaN rule as `profile` computes fp32 pooling
// (onnxruntime, pytorch, bm1684); geometry and mode are left alone. Other
// profiles have no fp32 pooling and are rejected.
void apply_profile(Pool2dParams& p, Profile profile, bool count_include_pad = true);

// The window geometry a profile's pooling faces use for ONNX attributes:
// PoolGeometry::onnxruntime for onnxruntime, PoolGeometry::onnx otherwise.
PoolGeometry pool_geometry_for(Profile profile);

const char* pool_mode_name(PoolMode m);
const char* avg_divisor_name(AvgDivisor d);
const char* pad_value_name(PadValue v);

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
template <class T>
void max_pool2d_int(const TensorView& x, const TensorView& y, const Pool2dParams& p);
}  // namespace ref

}  // namespace npukit
