// ONNX Runtime's table-driven 8-bit operators (com.microsoft QLinearConcat,
// QLinearLeakyRelu, QLinearSigmoid): every one of the 256 input codes is
// dequantized in fp32, mapped by the operator's float function, and quantized
// once into a table; running the operator is a table lookup per element.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "npukit/profile.hpp"
#include "npukit/tensor.hpp"

namespace npukit {

enum class QLookupFunction : uint8_t {
  identity,    // requantization only (QLinearConcat's inputs)
  leaky_relu,  // v >= 0 ? v : alpha * v (fp32)
  sigmoid,     // MLAS's logistic approximation (see `logistic`)
};

// How the float function is evaluated.
enum class QLogistic : uint8_t {
  // MLAS's x86 FMA3 kernel: clamp to [-18, 18], odd rational polynomial with
  // fused multiply-adds (Eigen's coefficients), p / q + 0.5, clamp to [0, 1].
  mlas_fma3,
  // The same polynomial with a separate multiply and add per step (MLAS's
  // portable kernel, the one without FMA).
  mlas_portable,
};

struct QLookupParams {
  DType dtype = DType::u8;  // of the input and the output codes (ORT: the same)
  float x_scale = 1.0f, y_scale = 1.0f;
  int32_t x_zero_point = 0, y_zero_point = 0;
  QLookupFunction function = QLookupFunction::identity;
  float alpha = 0.01f;  // leaky_relu
  // Semantics (apply_profile fills them).
  QLogistic logistic = QLogistic::mlas_fma3;
};
// onnxruntime (and its variants) only: no other profile has these operators.
void apply_profile(QLookupParams& p, Profile profile);

// table[b] = the output code of the input code whose byte is b:
// quantize(f(x_scale * float(code - x_zp))), with ONNX Runtime's x86
// QuantizeLinear (fp32 division, clamp, round half to even, + y_zp).
using QLookupTable = std::array<uint8_t, 256>;
QLookupTable qlinear_lookup_table(const QLookupParams& p);

// y[i] = table[x[i]]; x and y u8 or s8 of one shape, contiguous.
void qlinear_lookup(const TensorView& x, const TensorView& y, const QLookupTable& table);

// QLinearConcat: the inputs joined along `axis` (negative counts from the
// end), each copied when it has the output's scale and zero point (no table)
// or mapped through its table. All contiguous, one 8-bit dtype.
void qlinear_concat(const std::vector<TensorView>& x,
                    const std::vector<std::optional<QLookupTable>>& tables, const TensorView& y,
                    int64_t axis);

namespace ref {
float mlas_logistic(float v, QLogistic kind);
}  // namespace ref

}  // namespace npukit
