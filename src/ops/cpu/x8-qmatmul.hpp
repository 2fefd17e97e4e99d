// One 2-D slice of QLinearMatMul / MatMulInteger and its kernel list
// ("qmatmul"); qlinear_matmul.cpp splits the broadcast batch into slices.
#pragma once

#include <cstdint>

#include "npukit/ops/quantized.hpp"
#include "ops/kernel_list.hpp"

namespace npukit {

struct QMatMulSlice {
  TensorView a, b, y;  // (M, K), (K, N), (M, N): u8/s8 (QLinearMatMul) or s32 (MatMulInteger)
  int32_t a_zp = 0;
  QuantParams bq;  // per tensor or per column of b (zero points always listed per column)
  bool requantize = true;
  float a_scale = 1.0f, y_scale = 1.0f;
  int32_t y_zp = 0;
  Rounding rounding = Rounding::half_to_even;
  IntAccumulation accumulation = IntAccumulation::exact_int32;
  const QConvPackedWeights* packed = nullptr;  // b packed as qconv weights, or null
};

// b (K, N) as the weights (N, K, 1, 1) of the 1x1 convolution that
// computes the slice, and whether that convolution sums MLAS's int16 pairs.
TensorView qmatmul_b_as_weights(const TensorView& b);
bool qmatmul_uses_pairs(IntAccumulation a, DType a_dtype, const TensorView& b);

const KernelList<QMatMulSlice>& qmatmul_kernels();

}  // namespace npukit
