#include "npukit/ops/binary.hpp"

namespace npukit::ref {

void binary_f32(BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& y) {
  for (int64_t i = 0; i < y.dim(0); ++i)
    for (int64_t j = 0; j < y.dim(1); ++j)
      for (int64_t k = 0; k < y.dim(2); ++k)
        for (int64_t l = 0; l < y.dim(3); ++l) {
          const float u = a.at<float>(i, j, k, l), v = b.at<float>(i, j, k, l);
          y.at<float>(i, j, k, l) = op == BinaryOp::add ? u + v : u * v;
        }
}

}  // namespace npukit::ref
