// One convolution node's calls, made again on every run of a model with the
// same views (the ONNX runner's Conv and FusedConv): conv2d's checks and its
// kernel choice depend only on the views, the parameters, the kernel setting
// (Impl, ISA cap) and, for the choice, the weights' values. So with constant
// weights, a call whose views equal the previous call's runs the kernel chosen
// then, without checking or choosing again. Any other call is conv2d's.
#pragma once

#include <memory>

#include "npukit/kernels.hpp"
#include "npukit/ops/conv2d.hpp"
#include "ops/cpu/conv_nchw.hpp"
#include "ops/cpu/dwconv.hpp"

namespace npukit {

namespace detail {

// The variant conv2d chose for a call, per family (null: not chosen yet).
struct Conv2dChoice {
  const KernelVariant<cpu::DwconvProblem>* depthwise = nullptr;
  const KernelVariant<cpu::ConvProblem>* dense = nullptr;
};

// conv2d's checks, and conv2d after them: runs the variant in `choice`, or
// the one its family's list chooses (kept in `choice` when not null).
void check_conv2d(const TensorView& x, const TensorView& w, const TensorView& bias,
                  const TensorView& y, const Conv2dParams& p);
void conv2d_checked(const TensorView& x, const TensorView& w, const TensorView& bias,
                    const TensorView& y, const Conv2dParams& p,
                    const cpu::ConvPackedWeights* packed, Conv2dChoice* choice);

}  // namespace detail

class Conv2dCall {
 public:
  // `constant_weights`: w's values never change between calls (an initializer).
  Conv2dCall(const Conv2dParams& p, std::shared_ptr<const cpu::ConvPackedWeights> packed,
             bool constant_weights);
  // conv2d(x, w, bias, y, p, packed), the same results and errors.
  void operator()(const TensorView& x, const TensorView& w, const TensorView& bias,
                  const TensorView& y);
  // The kernel the last call ran without choosing again next time (its name
  // from the family's list), or nullptr when none is kept.
  const char* kept_kernel() const;

 private:
  bool same_call(const TensorView& x, const TensorView& w, const TensorView& bias,
                 const TensorView& y) const;

  Conv2dParams p_;
  std::shared_ptr<const cpu::ConvPackedWeights> packed_;
  bool constant_weights_;
  // The last call that passed the checks: its views, kernel setting and choice.
  bool kept_ = false;
  TensorView x_, w_, bias_, y_;
  Impl impl_ = Impl::fast;
  Isa isa_ = Isa::portable;
  detail::Conv2dChoice choice_;
};

}  // namespace npukit
