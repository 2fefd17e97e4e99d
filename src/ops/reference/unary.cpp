#include <cmath>

#include "npukit/ops/unary.hpp"
#include "ops/reference/mlas_transcendental.hpp"

namespace npukit::ref {

float unary_scalar(UnaryOp op, float x, const UnaryParams& p) {
  switch (op) {
    case UnaryOp::sigmoid:
      return mlas_logistic(x);
    case UnaryOp::hard_sigmoid: {
      // Eigen's cwiseMin(1) then cwiseMax(0): NaN passes both.
      float v = p.alpha * x + p.beta;
      v = 1.0f < v ? 1.0f : v;
      return 0.0f > v ? 0.0f : v;
    }
    case UnaryOp::hard_swish: {
      float v = x * (1.0f / 6.0f) + 0.5f;
      v = 1.0f < v ? 1.0f : v;
      v = 0.0f > v ? 0.0f : v;
      return x * v;
    }
    case UnaryOp::tanh:
      return mlas_tanh(x);
    case UnaryOp::leaky_relu:
      return x >= 0.0f ? x : p.alpha * x;
    case UnaryOp::erf:
      return mlas_erf(x);
    case UnaryOp::gelu:
      return 0.5f * x * (mlas_erf(x * static_cast<float>(M_SQRT1_2)) + 1.0f);
    case UnaryOp::gelu_tanh: {
      const float inner = x * (0.035677408136f * x * x + 0.7978845608f);
      return 0.5f * x * (mlas_tanh(inner) + 1.0f);
    }
    case UnaryOp::sqrt:
      return std::sqrt(x);
    case UnaryOp::exp:
      return std::exp(x);
    case UnaryOp::log:
      return std::log(x);
    case UnaryOp::neg:
      return -x;
    case UnaryOp::abs:
      return std::fabs(x);
    case UnaryOp::reciprocal:
      return 1.0f / x;
  }
  return x;
}

void unary_f32(UnaryOp op, const TensorView& x, const TensorView& y, const UnaryParams& p) {
  Shape sh(4 - x.rank(), 1), sx(4 - x.rank(), 0), sy(4 - x.rank(), 0);
  for (int i = 0; i < x.rank(); ++i) {
    sh.push_back(x.dim(i));
    sx.push_back(x.stride(i));
    sy.push_back(y.stride(i));
  }
  const float* xp = static_cast<const float*>(x.raw());
  float* yp = static_cast<float*>(y.raw());
  for (int64_t a = 0; a < sh[0]; ++a)
    for (int64_t b = 0; b < sh[1]; ++b)
      for (int64_t c = 0; c < sh[2]; ++c)
        for (int64_t d = 0; d < sh[3]; ++d)
          yp[a * sy[0] + b * sy[1] + c * sy[2] + d * sy[3]] =
              unary_scalar(op, xp[a * sx[0] + b * sx[1] + c * sx[2] + d * sx[3]], p);
}

}  // namespace npukit::ref
