#include "ops/conv2d_call.hpp"

#include <utility>

#include "ops/same_view.hpp"

namespace npukit {

Conv2dCall::Conv2dCall(const Conv2dParams& p, std::shared_ptr<const cpu::ConvPackedWeights> packed,
                       bool constant_weights)
    : p_(p), packed_(std::move(packed)), constant_weights_(constant_weights) {}

bool Conv2dCall::same_call(const TensorView& x, const TensorView& w, const TensorView& bias,
                           const TensorView& y) const {
  return kept_ && impl() == impl_ && max_isa() == isa_ && same_view(x, x_) && same_view(w, w_) &&
         same_view(bias, bias_) && same_view(y, y_);
}

void Conv2dCall::operator()(const TensorView& x, const TensorView& w, const TensorView& bias,
                            const TensorView& y) {
  if (!constant_weights_) {
    // A choice may depend on the weights' values (finite or not): choose every call.
    detail::check_conv2d(x, w, bias, y, p_);
    return detail::conv2d_checked(x, w, bias, y, p_, packed_.get(), nullptr);
  }
  if (!same_call(x, w, bias, y)) {
    kept_ = false;
    detail::check_conv2d(x, w, bias, y, p_);
    x_ = x;
    w_ = w;
    bias_ = bias;
    y_ = y;
    impl_ = impl();
    isa_ = max_isa();
    choice_ = {};
    kept_ = true;
  }
  detail::conv2d_checked(x, w, bias, y, p_, packed_.get(), &choice_);
}

const char* Conv2dCall::kept_kernel() const {
  if (!kept_) return nullptr;
  if (choice_.depthwise != nullptr) return choice_.depthwise->name;
  return choice_.dense != nullptr ? choice_.dense->name : nullptr;
}

}  // namespace npukit
