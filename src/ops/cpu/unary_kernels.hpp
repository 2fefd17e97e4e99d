// The kernel list of the fp32 unary family (npukit::unary).
#pragma once

#include "npukit/ops/unary.hpp"
#include "ops/kernel_list.hpp"

namespace npukit::cpu {

struct UnaryProblem {
  UnaryOp op = UnaryOp::neg;
  UnaryParams params;
  TensorView x, y;  // same shape, rank 0 to 4
};

const KernelList<UnaryProblem>& unary_kernels();

}  // namespace npukit::cpu
