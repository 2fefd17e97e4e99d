#include "npukit/ops/batchnorm.hpp"

#include "npukit/error.hpp"

namespace npukit {

void batch_norm(const TensorView& x, const TensorView& scale, const TensorView& bias,
                const TensorView& mean, const TensorView& var, const TensorView& y,
                const BatchNormParams& p) {
  constexpr const char* fn = "npukit::batch_norm";
  x.expect_dtype(DType::f32, fn, "x.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  check(x.rank() >= 2, fn, "x", "shape " + shape_text(x.shape()), "rank 2 to 4 (N, C, ...)");
  y.expect_shape(x.shape(), fn, "y");
  const Shape c{x.dim(1)};
  const char* names[] = {"scale", "bias", "mean", "var"};
  const TensorView* ts[] = {&scale, &bias, &mean, &var};
  for (int i = 0; i < 4; ++i) {
    ts[i]->expect_dtype(DType::f32, fn, names[i]);
    ts[i]->expect_shape(c, fn, names[i]);
    check(ts[i]->is_contiguous(), fn, names[i], "a strided view", "a contiguous tensor");
  }
  check(p.epsilon >= 0.0f, fn, "epsilon", std::to_string(p.epsilon), ">= 0");
  ref::batch_norm_f32(x, static_cast<const float*>(scale.raw()),
                      static_cast<const float*>(bias.raw()), static_cast<const float*>(mean.raw()),
                      static_cast<const float*>(var.raw()), y, p.epsilon);
}

}  // namespace npukit
