// Fast fp32 element-wise operators of the network path on contiguous arrays:
// relu (both NaN rules, result_add), clip and add/mul of equal shapes. Each
// element gets exactly the reference's operations (a compare and a select,
// one rounded addition or product, same operand order), so results are the
// reference's bits. Flushing, strided and broadcast views are left to the
// reference kernels.
#pragma once

#include "npukit/ops/activation.hpp"
#include "npukit/ops/binary.hpp"
#include "npukit/ops/elementwise.hpp"
#include "ops/kernel_list.hpp"

namespace npukit::cpu {

enum class EwOp : uint8_t { relu, clip, add, mul };

struct EwProblem {
  EwOp op = EwOp::relu;
  TensorView a, b, y;      // b: binary only; a, b already broadcast to y's shape (4-D for binary)
  ElementwiseParams relu;  // relu only
  ClipParams clip;         // clip only
};

// Plain arrays of one call: y[i] = f(a[i], b[i]) for i < n.
struct EwArrays {
  const float* a;
  const float* b;
  float* y;
  int64_t n;
};
using EwKernel = void (*)(const EwProblem& p, const EwArrays& r);

void f32_elementwise_avx512(const EwProblem& p, const EwArrays& r);
void f32_elementwise_avx2(const EwProblem& p, const EwArrays& r);
void f32_elementwise_portable(const EwProblem& p, const EwArrays& r);

// Families "relu", "clip", "binary": f32-<op>-{avx512, avx2, portable}, then the reference.
const KernelList<EwProblem>& relu_kernels();
const KernelList<EwProblem>& clip_kernels();
const KernelList<EwProblem>& binary_kernels();

}  // namespace npukit::cpu
