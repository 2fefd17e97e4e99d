// Quantized operators of ONNX (and ONNX Runtime's com.microsoft domain) with
// the arithmetic of each real system as data: every parameter struct holds the
// geometry and quantization parameters of one call plus the semantic fields
// (how it accumulates, divides, rounds and saturates); apply_profile() fills
// the semantic fields for a named profile. Kernels never branch on a profile.
//
// Integer tensors are s8 or u8 (ONNX int8/uint8); accumulators are int32 as in
// the real systems, and every entry point proves at the boundary that an int32
// accumulator cannot overflow for the given shape (see accumulator_bound()).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "npukit/cpu_features.hpp"
#include "npukit/ops/binary.hpp"
#include "npukit/ops/pool2d.hpp"
#include "npukit/profile.hpp"
#include "npukit/quant/ghp.hpp"
#include "npukit/quant/rounding.hpp"
#include "npukit/tensor.hpp"
#include "npukit/window.hpp"

namespace npukit {

// Scale and zero point of a tensor: per tensor (one value) or per axis (one
// value per index along `axis`, ONNX's per-axis quantization).
struct QuantParams {
  std::vector<float> scale{1.0f};
  std::vector<int32_t> zero_point{0};  // empty = all zero
  int64_t axis = 1;                    // only used when there is more than one value

  bool per_axis() const { return scale.size() > 1 || zero_point.size() > 1; }
  float scale_at(int64_t i) const { return scale[scale.size() == 1 ? 0 : static_cast<size_t>(i)]; }
  int32_t zero_point_at(int64_t i) const {
    return zero_point.empty() ? 0 : zero_point[zero_point.size() == 1 ? 0 : static_cast<size_t>(i)];
  }
};

// ---- QuantizeLinear / DequantizeLinear ---------------------------------------

struct QuantizeParams {
  QuantParams q;
  // saturate(round(x / scale) + zero_point): division in fp32 as ONNX states,
  // then this rounding of the exact quotient (ONNX, ONNX Runtime, PyTorch: to even).
  Rounding rounding = Rounding::half_to_even;
  // PyTorch's quantize_per_tensor multiplies by the fp32 reciprocal instead:
  // round(x * (1.0f / scale)) + zero_point (the two differ for non-power-of-two scales).
  bool multiply_by_reciprocal = false;
};
void apply_profile(QuantizeParams& p, Profile profile);

// x f32 -> y s8 or u8, same shape (any rank up to 4). NaN gives the lowest
// value and +-inf saturate (ONNX Runtime's x86 kernel clamps before rounding).
void quantize_linear(const TensorView& x, const TensorView& y, const QuantizeParams& p);
// x s8, u8 or s32 -> y f32: (x - zero_point) * scale, one fp32 rounding.
void dequantize_linear(const TensorView& x, const TensorView& y, const QuantParams& q);

// ---- QLinearAveragePool / QLinearGlobalAveragePool ---------------------------

// How the average of a quantized window is computed.
enum class QAvgArith : uint8_t {
  float_mean,       // fp32: sum of x_scale*(x - x_zp) over the taps in row-major order,
                    // / divisor, then round(avg / y_scale + y_zp) (ONNX Runtime general path)
  int_sum_float,    // int32 acc = sum(x) - x_zp*N, fp32 multiplier x_scale / (y_scale*N),
                    // clamp(round(acc*multiplier), lo - y_zp, hi - y_zp) + y_zp (ORT global path)
  int_sum_ghp,      // acc = sum(x with pads = x_zp) - N*x_zp, then the GHP post-processing
                    // unit with M1 = x_scale/(N*y_scale) = m1 * 2^-n1 (seed 000)
  int_mean,         // mean of the raw codes: div_round(sum(x), count, rounding); same scale and
                    // zero point in and out (TFLite: half away from zero; MiCo: truncation)
  int_sum_requant,  // PyTorch quantized avg_pool2d: int32 acc = sum(x) - x_zp*valid, fp32
                    // M = x_scale / y_scale / divisor, v = float(acc)*M, then `zero_point`
};

// Where PyTorch's quantized average pooling adds the output zero point.
enum class QZeroPointRounding : uint8_t {
  outside,  // round(v) + y_zp (its channels-last kernel)
  inside,   // round(v + y_zp) in fp32 (its NCHW kernel)
  // PyTorch picks the kernel by memory format: x channels-last contiguous (size-1
  // dimensions ignored, so C == 1 or H*W == 1 qualifies) -> outside, else inside.
  by_memory_format,
};
const char* qavg_arith_name(QAvgArith a);

struct QLinearAvgPoolParams {
  Window2d window;  // dilation 1 and no zero insertion (ONNX has neither)
  bool count_include_pad = false;
  float x_scale = 1.0f, y_scale = 1.0f;
  int32_t x_zero_point = 0, y_zero_point = 0;

  // Semantics (apply_profile fills them).
  QAvgArith arith = QAvgArith::float_mean;
  AvgDivisor divisor = AvgDivisor::valid_count;  // kernel_area when count_include_pad
  // ORT: a window that is the whole image with no padding (and the global op)
  // takes the int_sum_float path instead of `arith`.
  bool whole_image_int_path = true;
  Rounding rounding = Rounding::half_to_even;  // float rounding, or int_mean's quotient rounding
  // int_mean only: the output keeps the input's scale and zero point; a call
  // whose y_scale / y_zero_point differ is an error (not silently rescaled).
  bool requires_same_quantization = false;
  bool requires_zero_point_zero = false;  // MiCo has no zero point
  // int_sum_ghp only: the accelerator's post-processing and window-sum register.
  ghp::PostRounding ghp_rounding = ghp::PostRounding::rtl_wrap10_half_up;
  int ghp_sum_bits = 0;  // > 0: the window sum wraps to this many unsigned bits
  ghp::M1Edge ghp_m1_edge = ghp::M1Edge::renormalize;
  // int_sum_requant only.
  QZeroPointRounding zero_point = QZeroPointRounding::outside;
};

// Fills the semantic fields for onnxruntime, pytorch, ghp_rtl, ghp_golden, tflite
// or mico from p.count_include_pad (ghp needs count_include_pad = 1).
void apply_profile(QLinearAvgPoolParams& p, Profile profile);

Shape qlinear_average_pool_output_shape(const Shape& x, const QLinearAvgPoolParams& p);
// x, y: s8 or u8 (N, C, H, W) views of any layout (NCHW or channels_last strides).
void qlinear_average_pool(const TensorView& x, const TensorView& y, const QLinearAvgPoolParams& p);
// QLinearGlobalAveragePool: the window is the whole image.
void qlinear_global_average_pool(const TensorView& x, const TensorView& y,
                                 const QLinearAvgPoolParams& p);

// ---- integer accumulation of QLinearConv / QLinearMatMul / MatMulInteger -----

// How an integer convolution or matrix product sums its K products.
enum class IntAccumulation : uint8_t {
  // sum of (x - x_zp)(w - w_zp) in int32, as ONNX defines it.
  exact_int32,
  // ONNX Runtime's MLAS u8 x s8 GEMM on x86 without VNNI (vpmaddubsw, then
  // vpmaddwd): when x is u8 and w is s8, the RAW codes are multiplied (a
  // padding tap reads x_zp), the products at K positions 2j and 2j+1 are added
  // and saturated to int16 [-32768, 32767] (an odd K pairs its last product
  // with 0), the pair sums are added in int32, and the zero points are removed
  // afterwards with exact sums: acc = S - x_zp*sum(w) - w_zp*sum(x) +
  // K*x_zp*w_zp (wrapping in int32 as MLAS does). K runs in ORT's order: a
  // matmul's inner axis; a convolution's NHWC im2col order (kh, kw, ic) inside
  // one group. A depthwise convolution (one input and one output channel per
  // group) runs MLAS's depthwise kernel and u8 x u8 or s8 x s8 its other
  // kernels: those sum exactly. Measured against ONNX Runtime 1.30 on AVX2.
  mlas_u8s8_int16_pairs,
};
const char* int_accumulation_name(IntAccumulation a);
// The accumulation MLAS's kernel choice gives on a CPU with these features:
// int16 pairs when AVX2 runs the GEMM (MLAS's AVX2 and AVX512-core kernels
// use vpmaddubsw), exact with a VNNI kernel (vpdpbusd) or without AVX2 (SSE
// widens to int16 first). MLAS prefers AVX512-core over AVX-VNNI, so with
// avx512_core only avx512_vnni gives the exact kernel.
IntAccumulation onnxruntime_accumulation(const CpuFeatures& f);
// onnxruntime: this host's (host_cpu_features()); onnxruntime_avx2: int16
// pairs; onnxruntime_vnni and every other profile: exact_int32.
IntAccumulation profile_accumulation(Profile profile);

// ---- QLinearConv / ConvInteger -----------------------------------------------

// How QLinearConv forms the fp32 multiplier of output channel o. The two
// orders differ by an ulp for some scales (resnet18's layer2.0.conv1: one
// output code in 8,192).
enum class MultiplierOrder : uint8_t {
  // (x_scale * w_scale) / y_scale: ONNX Runtime (MLAS's output scale).
  divide_by_y_scale,
  // (w_scale * x_scale) * (1 / y_scale), each step rounded to fp32: PyTorch
  // (QNNPACK's generate_requantization_scales, used by its quantized conv).
  times_inverse_y_scale,
};
const char* multiplier_order_name(MultiplierOrder m);
float requantization_multiplier(MultiplierOrder m, float x_scale, float w_scale, float y_scale);

// QLinearConv and QLinearMatMul requantize an int32 accumulator (bias
// included) as ONNX Runtime and PyTorch do: an fp32 multiplier M (conv: by
// `multiplier`; matmul: (a_scale * b_scale) / y_scale), v = float(acc) * M,
// round(v) under `rounding`, + y_zp, saturate.
struct QLinearConvParams {
  Window2d window;  // kernel from w; no zero insertion, ceil_mode false
  int64_t groups = 1;
  float x_scale = 1.0f, y_scale = 1.0f;
  int32_t x_zero_point = 0, y_zero_point = 0;
  QuantParams w;          // per tensor or per output channel (axis 0)
  bool has_bias = false;  // int32 bias (OC), scale x_scale*w_scale, zero point 0
  Rounding rounding = Rounding::half_to_even;
  IntAccumulation accumulation = IntAccumulation::exact_int32;
  MultiplierOrder multiplier = MultiplierOrder::divide_by_y_scale;
};
// onnxruntime*: the host's MLAS accumulation, divide_by_y_scale; pytorch:
// exact int32, times_inverse_y_scale. Both round half to even.
void apply_profile(QLinearConvParams& p, Profile profile);

// x (N, C, H, W) s8/u8, w (OC, C/groups, KH, KW) s8/u8, bias s32 (OC), y like x.
Shape qlinear_conv_output_shape(const Shape& x, const Shape& w, const QLinearConvParams& p);
void qlinear_conv(const TensorView& x, const TensorView& w, const TensorView& bias,
                  const TensorView& y, const QLinearConvParams& p);

// Describe once, execute many: the weights of a convolution packed for the
// fast kernels (opaque; the ONNX runner keeps one per constant weight). A
// pack that does not match the call (other weights' shape or dtype, other
// accumulation) is ignored and the weights are packed again for that call.
struct QConvPackedWeights;
std::shared_ptr<const QConvPackedWeights> pack_qlinear_conv_weights(const TensorView& w,
                                                                    const QLinearConvParams& p,
                                                                    DType x_dtype);
// The same, with the per-channel requantization data of p and a constant
// bias built in too (a call with these parameters then does no per-channel
// set-up); calls with other parameters still give the same results.
std::shared_ptr<const QConvPackedWeights> pack_qlinear_conv_weights(const TensorView& w,
                                                                    const TensorView& bias,
                                                                    const QLinearConvParams& p,
                                                                    DType x_dtype);
void qlinear_conv(const TensorView& x, const TensorView& w, const TensorView& bias,
                  const TensorView& y, const QLinearConvParams& p,
                  const QConvPackedWeights* packed);

struct ConvIntegerParams {
  Window2d window;
  int64_t groups = 1;
  int32_t x_zero_point = 0;
  std::vector<int32_t> w_zero_point{0};  // one value or one per output channel
};
// y s32 = sum (x - x_zp)(w - w_zp), exactly (ONNX Runtime 1.30's ConvInteger
// sums exactly for every dtype pair, measured on AVX2: no accumulation field).
void conv_integer(const TensorView& x, const TensorView& w, const TensorView& y,
                  const ConvIntegerParams& p);
std::shared_ptr<const QConvPackedWeights> pack_conv_integer_weights(const TensorView& w,
                                                                    const ConvIntegerParams& p,
                                                                    DType x_dtype);
void conv_integer(const TensorView& x, const TensorView& w, const TensorView& y,
                  const ConvIntegerParams& p, const QConvPackedWeights* packed);

// ---- QLinearMatMul / MatMulInteger (numpy.matmul broadcasting, ranks 1-4) ----

struct QLinearMatMulParams {
  float a_scale = 1.0f, y_scale = 1.0f;
  int32_t a_zero_point = 0, y_zero_point = 0;
  QuantParams b;  // per tensor or per column of b (axis = its last axis)
  Rounding rounding = Rounding::half_to_even;
  IntAccumulation accumulation = IntAccumulation::exact_int32;
};
void apply_profile(QLinearMatMulParams& p, Profile profile);
void qlinear_matmul(const TensorView& a, const TensorView& b, const TensorView& y,
                    const QLinearMatMulParams& p);
// A constant 2-D b packed once for every later call with a's dtype (the ONNX
// runner packs at plan time); as for qlinear_conv, a pack that does not match
// the call is ignored. Batched (rank > 2) b are packed per call.
std::shared_ptr<const QConvPackedWeights> pack_qlinear_matmul_weights(const TensorView& b,
                                                                      const QLinearMatMulParams& p,
                                                                      DType a_dtype);
void qlinear_matmul(const TensorView& a, const TensorView& b, const TensorView& y,
                    const QLinearMatMulParams& p, const QConvPackedWeights* packed);

struct MatMulIntegerParams {
  int32_t a_zero_point = 0;
  std::vector<int32_t> b_zero_point{0};  // one value or one per column of b
  IntAccumulation accumulation = IntAccumulation::exact_int32;
};
void apply_profile(MatMulIntegerParams& p, Profile profile);
void matmul_integer(const TensorView& a, const TensorView& b, const TensorView& y,
                    const MatMulIntegerParams& p);

// ---- QLinearAdd (com.microsoft) ------------------------------------------------

enum class QAddArith : uint8_t {
  // ONNX's definition: quantize(dequantize(a) + dequantize(b)): fp32
  // a_scale*(a - a_zp) + b_scale*(b - b_zp), / c_scale, round, + c_zp, saturate.
  dequant_add_quant,
  // ONNX Runtime's x86 AVX2 kernel (MLAS qladd): ra = a_scale/c_scale,
  // rb = b_scale/c_scale, k = c_zp - fma(ra, a_zp, rb*b_zp) in fp32, then
  // round(fma(a, ra, fma(b, rb, k))) saturated; the zero point is inside the rounding.
  ort_x86_fma,
};
struct QLinearAddParams {
  float a_scale = 1.0f, b_scale = 1.0f, c_scale = 1.0f;
  int32_t a_zero_point = 0, b_zero_point = 0, c_zero_point = 0;
  QAddArith arith = QAddArith::dequant_add_quant;
  Rounding rounding = Rounding::half_to_even;
};
void apply_profile(QLinearAddParams& p, Profile profile);
// numpy broadcasting of a and b (ranks up to 4, npukit::broadcast_shape of
// ops/binary.hpp); c has the broadcast shape.
void qlinear_add(const TensorView& a, const TensorView& b, const TensorView& c,
                 const QLinearAddParams& p);

// ---- limits --------------------------------------------------------------------

// Largest |sum of n products (x - x_zp)(w - w_zp)| of 8-bit codes: each factor
// is at most 255 in magnitude, so n * 255 * 255. An int32 accumulator is safe
// for n <= kMaxInt32Products = floor((2^31 - 1) / 65025) = 33025 (plus the
// bias, checked separately).
inline constexpr int64_t kMaxInt32Products = 33025;
// Largest window of an 8-bit sum in int32: 255 * n <= 2^31 - 1.
inline constexpr int64_t kMaxInt32Taps = 8421504;

namespace ref {
void quantize_linear(const TensorView& x, const TensorView& y, const QuantizeParams& p);
void dequantize_linear(const TensorView& x, const TensorView& y, const QuantParams& q);
void qlinear_average_pool(const TensorView& x, const TensorView& y, const QLinearAvgPoolParams& p);
// acc (N, OC, OH, OW) int32 of sum (x - x_zp)(w - w_zp[oc]).
void conv_accumulate(const TensorView& x, const TensorView& w, const TensorView& acc,
                     const Window2d& window, int64_t groups, int32_t x_zp, const QuantParams& w_q);
// The same under IntAccumulation::mlas_u8s8_int16_pairs (x u8, w s8, not depthwise).
void conv_accumulate_mlas_pairs(const TensorView& x, const TensorView& w, const TensorView& acc,
                                const Window2d& window, int64_t groups, int32_t x_zp,
                                const QuantParams& w_q);
// acc[M, N] of one 2-D slice.
void matmul_accumulate(const TensorView& a, const TensorView& b, const TensorView& acc,
                       int32_t a_zp, const std::vector<int32_t>& b_zp);
// The same under IntAccumulation::mlas_u8s8_int16_pairs (a u8, b s8).
void matmul_accumulate_mlas_pairs(const TensorView& a, const TensorView& b, const TensorView& acc,
                                  int32_t a_zp, const std::vector<int32_t>& b_zp);
void qlinear_add(const TensorView& a, const TensorView& b, const TensorView& c,
                 const QLinearAddParams& p);
}  // namespace ref

namespace cpu {
// Same int32 results as ref::conv_accumulate (exact: the sums cannot overflow,
// so their order is free), by int16 im2col tiles and AVX2 vpmaddwd when present.
void conv_accumulate(const TensorView& x, const TensorView& w, const TensorView& acc,
                     const Window2d& window, int64_t groups, int32_t x_zp, const QuantParams& w_q);
// Same int32 results as ref::conv_accumulate_mlas_pairs (each im2col row built
// once per output pixel, then reused for every output channel).
void conv_accumulate_mlas_pairs(const TensorView& x, const TensorView& w, const TensorView& acc,
                                const Window2d& window, int64_t groups, int32_t x_zp,
                                const QuantParams& w_q);
}  // namespace cpu

}  // namespace npukit
