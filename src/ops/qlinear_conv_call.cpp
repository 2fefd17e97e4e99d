// QLinearConvCall: qlinear_conv's checks once, at plan time (see the header).
#include "ops/qlinear_conv_call.hpp"

#include <utility>

#include "ops/same_view.hpp"

namespace npukit {

namespace {

// A shape-only view for the checks (they read x's and y's dtype and shape,
// never their bytes; a view needs a non-null pointer).
TensorView shape_only(DType dtype, const Shape& shape) {
  static char placeholder;
  return TensorView::contiguous(&placeholder, dtype, shape);
}

// Releases QLinearConvCall's scratch problem however the run ends.
struct Release {
  std::atomic<bool>& busy;
  ~Release() { busy.store(false, std::memory_order_release); }
};

}  // namespace

QLinearConvCall::QLinearConvCall(DType x_dtype, const Shape& x_shape, const TensorView& w,
                                 const TensorView& bias, const QLinearConvParams& p,
                                 std::shared_ptr<const QConvPackedWeights> packed)
    : params_(p), packed_(std::move(packed)) {
  const TensorView x = shape_only(x_dtype, x_shape);
  const TensorView y = shape_only(x_dtype, qlinear_conv_output_shape(x_shape, w.shape(), p));
  problem_ = qlinear_conv_problem(x, w, bias, y, p);  // qlinear_conv's errors
  problem_.packed = packed_.get();
  problem_.epilogue_checked = packed_ && packed_->epilogue &&
                              qconv_packed_matches(*packed_, problem_) &&
                              qconv_epilogue_matches(*packed_->epilogue, problem_);
  scratch_ = problem_;
}

bool QLinearConvCall::planned_for(const TensorView& x, const TensorView& w, const TensorView& bias,
                                  const TensorView& y) const {
  const QConvProblem& t = problem_;
  return x.dtype() == t.x.dtype() && x.shape() == t.x.shape() && y.dtype() == t.y.dtype() &&
         y.shape() == t.y.shape() && same_view(w, t.w) &&
         (params_.has_bias ? same_view(bias, t.bias) : bias.raw() == nullptr);
}

void QLinearConvCall::run(const TensorView& x, const TensorView& w, const TensorView& bias,
                          const TensorView& y) const {
  if (!planned_for(x, w, bias, y)) {
    qlinear_conv(x, w, bias, y, params_, packed_.get());
    return;
  }
  if (!busy_.exchange(true, std::memory_order_acquire)) {
    Release release{busy_};
    scratch_.x = x;  // same shapes: the views' vectors keep their storage
    scratch_.y = y;
    qconv_kernels().run(scratch_);
    return;
  }
  QConvProblem q = problem_;
  q.x = x;
  q.y = y;
  qconv_kernels().run(q);
}

}  // namespace npukit
