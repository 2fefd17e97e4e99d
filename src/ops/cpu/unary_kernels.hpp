// The kernel list of the fp32 unary family (npukit::unary) and the
// vectorised bodies: the ops whose models spend time in them (Sigmoid,
// HardSigmoid, HardSwish, Tanh), on contiguous data.
#pragma once

#include <cstdint>

#include "npukit/ops/unary.hpp"
#include "ops/kernel_list.hpp"

namespace npukit::cpu {

struct UnaryProblem {
  UnaryOp op = UnaryOp::neg;
  UnaryParams params;
  TensorView x, y;  // same shape, rank 0 to 4
};

const KernelList<UnaryProblem>& unary_kernels();

// y[0, n) = op(x[0, n)); the ops above only. Elements past the last full
// vector go through ref::unary_scalar (same operations, so the same bits).
void f32_unary_avx2(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n);
void f32_unary_avx512(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n);
bool unary_has_simd(UnaryOp op);

}  // namespace npukit::cpu
