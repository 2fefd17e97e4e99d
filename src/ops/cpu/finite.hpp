// Whether every element of an fp32 tensor is finite: the fast convolution
// kernels add 0 * w for padded taps, which equals the reference's skipped tap
// only for finite w. Contiguous tensors are scanned as bits, branch-free.
#pragma once

#include "npukit/tensor.hpp"

namespace npukit::cpu {

bool all_finite_f32(const TensorView& t);

}  // namespace npukit::cpu
