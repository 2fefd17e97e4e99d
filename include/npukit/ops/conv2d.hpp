// fp32 2-D convolution (cross-correlation, as in every framework) and its
// depthwise form, with the bias and result_add flags of seed 004.
#pragma once

#include <cstdint>
#include <memory>

#include "npukit/ops/activation.hpp"
#include "npukit/ops/fp32_semantics.hpp"
#include "npukit/profile.hpp"
#include "npukit/tensor.hpp"
#include "npukit/window.hpp"

namespace npukit {

struct Conv2dParams {
  Window2d window;  // ceil_mode is not used by convolution and must be false
  int64_t groups = 1;
  bool has_bias = false;
  bool result_add = false;  // y = y + conv(x) instead of y = conv(x)
  Fp32Accumulation accumulation = Fp32Accumulation::sequential;
  bool flush_denormals = false;  // FTZ/DAZ on every operand and result
  // Last step, on the value written to y: clip's rule (if (v < min) v = min;
  // if (v > max) v = max), as npukit::clip on the unfused output. A Relu
  // (NaN and -0 pass) is {0, +inf}. The default bounds change nothing.
  ClipParams clip = {};
  // With result_add under an mlas_nchwc accumulation: the old y is the total
  // the chains are added to, y = ((y + chain0) + chain1 ...) + bias (ONNX
  // Runtime's Conv with a fused Add, its "Sum" input), instead of being added
  // to the finished sum.
  bool residual_first = false;
};

// True when `c` leaves every value unchanged (NaN included).
inline bool clip_is_identity(const ClipParams& c) {
  return c.min == -std::numeric_limits<float>::infinity() &&
         c.max == std::numeric_limits<float>::infinity();
}

// x (N, C, H, W), w (OC, C/groups, KH, KW) -> (N, OC, OH, OW). The kernel size
// comes from w; p.window.kernel_h/w must match it.
Shape conv2d_output_shape(const Shape& x, const Shape& w, const Conv2dParams& p);

// y = conv(x, w) + bias, then + old y when result_add (or old y first, with
// residual_first). bias is (OC) or (1, OC, 1, 1) and is ignored unless
// has_bias.
void conv2d(const TensorView& x, const TensorView& w, const TensorView& bias, const TensorView& y,
            const Conv2dParams& p);

namespace cpu {
struct ConvPackedWeights;
}
// w rearranged once for conv2d's output-channels-in-lanes kernels (a model's
// constant weights, when it is planned), or nullptr where no kernel would
// read it (the layer's output plane y_h x y_w decides, as in conv2d); for a
// depthwise layer (w.dim(1) = 1) a record of whether every weight is finite
// and, at multiplier 1, the weights tap by tap (for the channels-last
// depthwise walk). conv2d(..., packed) then reads the weights from the
// packing (and the record): same results, as long as w is not changed.
std::shared_ptr<const cpu::ConvPackedWeights> conv2d_pack_weights(const TensorView& w,
                                                                  const Conv2dParams& p,
                                                                  int64_t y_h, int64_t y_w);
void conv2d(const TensorView& x, const TensorView& w, const TensorView& bias, const TensorView& y,
            const Conv2dParams& p, const cpu::ConvPackedWeights* packed);

struct Depthwise2dParams {
  Window2d window;
  int64_t multiplier = 1;  // output channels per input channel
  bool has_bias = false;
  bool result_add = false;
  Fp32Accumulation accumulation = Fp32Accumulation::sequential;
  bool flush_denormals = false;
  ClipParams clip = {};  // as Conv2dParams::clip
};

// Fills the summation semantics of `profile` (bm1684: interleaved + flush;
// onnxruntime: mlas_nchwc16 on hosts with AVX-512F, mlas_nchwc8 with AVX2 or
// under onnxruntime_avx2, else sequential; pytorch: sequential; no flush for
// either). Geometry and flags are kept.
void apply_profile(Conv2dParams& p, Profile profile);
void apply_profile(Depthwise2dParams& p, Profile profile);

// x (N, C, H, W), w (C*multiplier, 1, KH, KW) -> (N, C*multiplier, OH, OW):
// output channel o reads input channel o / multiplier.
Shape depthwise2d_output_shape(const Shape& x, const Shape& w, const Depthwise2dParams& p);
void depthwise2d(const TensorView& x, const TensorView& w, const TensorView& bias,
                 const TensorView& y, const Depthwise2dParams& p);

namespace ref {
// Sum over (ic, kh, kw) in that order in fp32, then + bias, then + old y.
void conv2d_f32(const TensorView& x, const TensorView& w, const TensorView& bias,
                const TensorView& y, const Conv2dParams& p);
// Fp32Accumulation::interleaved (groups = 1): the four-accumulator pattern.
void conv2d_f32_interleaved(const TensorView& x, const TensorView& w, const TensorView& bias,
                            const TensorView& y, const Conv2dParams& p);
// Fp32Accumulation::mlas_nchwc16/8 (any groups, depthwise included): MLAS's
// FMA chains (the rule is stated at the enum).
void conv2d_f32_mlas(const TensorView& x, const TensorView& w, const TensorView& bias,
                     const TensorView& y, const Conv2dParams& p);
// Fp32Accumulation::interleaved depthwise (multiplier 1): A[t % 2].
void depthwise2d_f32_interleaved(const TensorView& x, const TensorView& w, const TensorView& bias,
                                 const TensorView& y, const Depthwise2dParams& p);
}  // namespace ref

namespace cpu {
// Fast path of conv2d for both accumulations, bit for bit the ref:: kernel of
// the same semantics (each output keeps its order of rounded operations),
// vectorised across output channels, blocked over positions, threaded.
// Returns false, writing nothing, where it does not apply (interleaved with
// groups > 1; flushing without x86 MXCSR; sequential with zero taps and a
// non-finite weight); the caller then runs the reference.
bool conv2d_f32(const TensorView& x, const TensorView& w, const TensorView& bias,
                const TensorView& y, const Conv2dParams& p);
}  // namespace cpu

}  // namespace npukit
