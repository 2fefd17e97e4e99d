// fp32 Softmax / LogSoftmax as ONNX Runtime 1.30 computes them on x86-64 CPUs
// (MLAS's MlasComputeSoftmax, read for facts): per row along the axis,
//   m    = the row's maximum (MLAS's lane order, `a > b ? a : b`);
//   e[i] = MLAS's exp polynomial of x[i] + (-m) (fused multiply-adds);
//   s    = the sum of e in MLAS's lane order, which depends on the host:
//          16 lanes with AVX512F (blocks of 48, then masked 16s), else 8 lanes
//          (blocks of 24, then 8s, the last one masked), then a fixed tree;
//   Softmax y = e * (1 / s); LogSoftmax y = (x + (-m)) - logf(s).
#pragma once

#include <cstdint>

#include "npukit/tensor.hpp"

namespace npukit {

// Which MLAS sum-of-exponentials kernel runs: ONNX Runtime picks it from the host.
enum class MlasSumExpKernel : uint8_t { fma3, avx512f };
MlasSumExpKernel onnxruntime_sum_exp_kernel();  // this host's

// Softmax (log = false) or LogSoftmax (log = true) along `axis` (may be
// negative), any rank 1 to 8, any strides; y may be x.
void softmax_onnxruntime(const TensorView& x, const TensorView& y, int64_t axis, bool log,
                         MlasSumExpKernel kernel = onnxruntime_sum_exp_kernel());

namespace ref {
// One contiguous row of n >= 1 elements.
void softmax_mlas_row(const float* x, float* y, int64_t n, bool log, MlasSumExpKernel kernel);
}  // namespace ref

}  // namespace npukit
