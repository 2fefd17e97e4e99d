#include <cmath>

#include "npukit/ops/broadcast_binary.hpp"

namespace npukit::ref {

float broadcast_scalar(BroadcastOp op, float a, float b, bool b_is_scalar) {
  switch (op) {
    case BroadcastOp::sub:
      return a - b;
    case BroadcastOp::div:
      return a / b;
    case BroadcastOp::pow:
      // ONNX Runtime's Pow special-cases a one-element exponent of 2 and 3.
      if (b_is_scalar && b == 2.0f) return a * a;
      if (b_is_scalar && b == 3.0f) return a * a * a;
      return std::pow(a, b);
    case BroadcastOp::min:
      if (std::isnan(a) || std::isnan(b)) return a + b;  // the NaN (a's if both)
      return b < a ? b : a;
    case BroadcastOp::max:
      if (std::isnan(a) || std::isnan(b)) return a + b;
      return b > a ? b : a;
  }
  return a;
}

void broadcast_binary_f32(BroadcastOp op, const TensorView& a, const TensorView& b,
                          const TensorView& y, bool b_is_scalar) {
  for (int64_t i = 0; i < y.dim(0); ++i)
    for (int64_t j = 0; j < y.dim(1); ++j)
      for (int64_t k = 0; k < y.dim(2); ++k)
        for (int64_t l = 0; l < y.dim(3); ++l)
          y.at<float>(i, j, k, l) =
              broadcast_scalar(op, a.at<float>(i, j, k, l), b.at<float>(i, j, k, l), b_is_scalar);
}

}  // namespace npukit::ref
