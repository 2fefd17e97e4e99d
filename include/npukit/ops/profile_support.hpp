// The one table of profiles: for every operator family and every profile,
// whether the profile covers the family, with which semantics, and against
// which real system that was checked; or why it does not. Every face asks it
// (`supports`), `npukit info --profiles` prints it, and the README's table is
// generated from it (a test keeps them equal; another checks that each
// family's apply_profile accepts exactly the supported profiles).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npukit/profile.hpp"

namespace npukit {

enum class OpFamily : uint8_t {
  elementwise,           // relu, bias, scale, scale_bias (ElementwiseParams)
  pool2d,                // fp32 avg/max/sum pooling and global pools; s8/u8 max (Pool2dParams)
  conv2d,                // fp32 convolution (Conv2dParams)
  depthwise2d,           // fp32 depthwise convolution (Depthwise2dParams)
  matmul,                // fp32 seed-004 matmul (MatmulParams; okk/bm_atomic faces)
  fp32_series,           // exp / sigmoid / tanh as OKKernel computes them (Fp32SeriesParams)
  quantize_linear,       // QuantizeLinear (QuantizeParams)
  qlinear_average_pool,  // QLinearAveragePool / QLinearGlobalAveragePool (QLinearAvgPoolParams)
  qlinear_conv,          // QLinearConv (QLinearConvParams)
  qlinear_matmul,        // QLinearMatMul (QLinearMatMulParams)
  matmul_integer,        // MatMulInteger (MatMulIntegerParams)
  qlinear_add,           // QLinearAdd (QLinearAddParams)
  bm_pool_quantized,     // BM168x atomic int8 pooling (bm_atomic.h)
  mico_pool,             // MiCo_Q8_AvgPool2D / MaxPool2D (mico_qnn.h)
  mrt_conv,              // MRT integer-only convolution chain (ops/mrt_conv.hpp)
  // The runner's other operators (src/onnx/op_families.cpp maps each ONNX op type).
  float_math,      // float activations, unary functions, Sub/Div/Pow/Min/Max, LogSoftmax, Dropout
  reduce,          // ReduceSum / ReduceMean / ReduceMax / ReduceMin / ReduceL2 (ops/reduce.hpp)
  layer_norm,      // LayerNormalization (ops/layer_norm.hpp)
  conv_transpose,  // ConvTranspose (ops/conv_transpose.hpp)
  resize,          // Resize (ops/resize.hpp)
  data_movement,   // shape, tensor and index operators: copies, casts, comparisons, no rounding
  qlinear_mul,     // QLinearMul (com.microsoft; QLinearMulParams)
  qlinear_lookup,  // QLinearSigmoid / QLinearLeakyRelu / QLinearConcat (QLookupParams tables)
  qgemm,           // QGemm (com.microsoft), run as a 1x1 QLinearConv
  binary,          // fp32 Add / Mul with broadcasting (ops/binary.hpp): one IEEE rounding
  clip,            // fp32 Clip (ops/activation.hpp): no rounding
  batch_norm,      // fp32 BatchNormalization, inference (ops/batchnorm.hpp)
  softmax,         // fp32 Softmax (ops/activation.hpp)
  dequantize_linear,  // DequantizeLinear: (q - zero point) * scale in fp32
  gemm,               // the runner's fp32 Gemm / MatMul (ops/gemm.hpp, ops/matmul.hpp broadcast)
};

const char* op_family_name(OpFamily f);
OpFamily op_family_from_name(const std::string& name);  // throws npukit::Error naming the choices
const std::vector<OpFamily>& all_op_families();

struct ProfileSupport {
  OpFamily family;
  Profile profile;  // a base profile (semantics_base(profile) == profile)
  bool supported;
  std::string semantics;  // supported: what it computes; otherwise: why not
  std::string checked;    // supported: the real system it was checked against, and how
};

// Every (family, base profile) pair, families in enum order, profiles in
// all_profiles() order.
const std::vector<ProfileSupport>& profile_table();

// The row for `profile`, variants resolved to their base profile.
const ProfileSupport& profile_support(OpFamily family, Profile profile);
bool supports(OpFamily family, Profile profile);

// Throws the npukit::Error a face raises when `profile` does not cover `family`:
// function `function`, parameter "profile", the reason and the covering profiles.
void expect_supported(OpFamily family, Profile profile, const char* function);

// The README's operators x profiles table (Markdown).
std::string profile_table_markdown();

}  // namespace npukit
