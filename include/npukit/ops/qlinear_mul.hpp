// com.microsoft QLinearMul: c = quantize(dequantize(a) * dequantize(b)) with
// numpy broadcasting, the arithmetic of each system as data.
#pragma once

#include <cstdint>

#include "npukit/profile.hpp"
#include "npukit/tensor.hpp"

namespace npukit {

enum class QMulArith : uint8_t {
  // ONNX's definition: fp32 (a_scale*(a - a_zp)) * (b_scale*(b - b_zp)) / c_scale,
  // clamp to the code range minus c_zp, round half to even, + c_zp.
  dequant_mul_quant,
  // ONNX Runtime's x86 kernel (MLAS qlmul, SSE2): the exact int32 product
  // p = (a - a_zp)*(b - b_zp); ratio = (a_scale*b_scale)/c_scale in fp32;
  // v = float(p)*ratio + float(c_zp) (two roundings, no FMA); cvtps rounds
  // half to even and gives INT32_MIN for NaN or |v| >= 2^31; then saturate.
  ort_x86_sse2,
};

struct QLinearMulParams {
  float a_scale = 1.0f, b_scale = 1.0f, c_scale = 1.0f;
  int32_t a_zero_point = 0, b_zero_point = 0, c_zero_point = 0;
  QMulArith arith = QMulArith::dequant_mul_quant;
};
// onnxruntime (and its variants): ort_x86_sse2; other profiles are rejected.
void apply_profile(QLinearMulParams& p, Profile profile);

// a, b, c: one 8-bit dtype; a and b broadcast (numpy rules) to c's shape.
void qlinear_mul(const TensorView& a, const TensorView& b, const TensorView& c,
                 const QLinearMulParams& p);

namespace ref {
// a and b already broadcast to c's shape (stride 0 on broadcast axes).
void qlinear_mul(const TensorView& a, const TensorView& b, const TensorView& c,
                 const QLinearMulParams& p);
}  // namespace ref

}  // namespace npukit
