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
};

const KernelList<QMatMulSlice>& qmatmul_kernels();

}  // namespace npukit
