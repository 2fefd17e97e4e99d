// One Gemm node's calls, made again on every run of a model with the same
// views (the ONNX runner's Gemm): gemm's checks, its problem (transposed and
// broadcast views) and its kernel choice depend only on the views, the
// parameters and the kernel setting (Impl, ISA cap; no variant reads values
// to decline), so a call whose views equal the previous call's runs the
// problem and kernel made then. Any other call is gemm's.
#pragma once

#include "npukit/kernels.hpp"
#include "npukit/ops/gemm.hpp"
#include "ops/cpu/gemm_fast.hpp"
#include "ops/kernel_list.hpp"

namespace npukit {

namespace detail {
// gemm's checks; the problem its kernels run.
cpu::GemmProblem checked_gemm_problem(const TensorView& a, const TensorView& b, const TensorView& c,
                                      const TensorView& y, const GemmParams& p);
}  // namespace detail

class GemmCall {
 public:
  explicit GemmCall(const GemmParams& p);
  // gemm(a, b, c, y, p): the same results and errors.
  void operator()(const TensorView& a, const TensorView& b, const TensorView& c,
                  const TensorView& y);
  // The kernel the last call ran and the next may run unchosen, or nullptr.
  const char* kept_kernel() const;

 private:
  GemmParams p_;
  TensorView a_, b_, c_, y_;  // the last call that passed the checks
  Impl impl_ = Impl::fast;
  Isa isa_ = Isa::portable;
  cpu::GemmProblem problem_;
  const KernelVariant<cpu::GemmProblem>* variant_ = nullptr;
};

}  // namespace npukit
