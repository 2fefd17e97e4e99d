// A QLinearConv call validated once. The ONNX runner makes one per node at
// plan time when the weights, bias, scales and zero points are constants:
// making it runs every check qlinear_conv runs (the same errors) and compares
// the packed requantization data with the parameters once. A run then checks
// only that x and y have the dtypes and shapes it was made for and that w and
// bias are the very views it was made with (pointer, shape and strides
// compares, no O(channels) work, no allocation); any other call takes
// qlinear_conv's full path, so a wrong call still gets qlinear_conv's error.
// The kernels and their results are qlinear_conv's.
#pragma once

#include <atomic>
#include <memory>

#include "npukit/ops/quantized.hpp"
#include "npukit/tensor.hpp"
#include "ops/cpu/qconv_problem.hpp"

namespace npukit {

class QLinearConvCall {
 public:
  // x_dtype and x_shape: the inputs it will be run on; packed may be null.
  QLinearConvCall(DType x_dtype, const Shape& x_shape, const TensorView& w, const TensorView& bias,
                  const QLinearConvParams& p, std::shared_ptr<const QConvPackedWeights> packed);
  QLinearConvCall(const QLinearConvCall&) = delete;
  QLinearConvCall& operator=(const QLinearConvCall&) = delete;

  // qlinear_conv(x, w, bias, y, p, packed) with the parameters it was made with.
  void run(const TensorView& x, const TensorView& w, const TensorView& bias,
           const TensorView& y) const;
  // Whether run(x, w, bias, y) takes the validated path (tests).
  bool planned_for(const TensorView& x, const TensorView& w, const TensorView& bias,
                   const TensorView& y) const;
  // Whether the packed requantization data was found to match the parameters.
  bool epilogue_checked() const { return problem_.epilogue_checked; }

 private:
  QLinearConvParams params_;
  std::shared_ptr<const QConvPackedWeights> packed_;
  QConvProblem problem_;  // validated; x and y are shape-only placeholders
  // One run at a time reuses `scratch_` (its vectors keep their capacity); an
  // overlapping run copies problem_ instead.
  mutable std::atomic<bool> busy_{false};
  mutable QConvProblem scratch_;
};

}  // namespace npukit
