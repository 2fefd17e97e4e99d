#include "npukit/ops/reduce.hpp"

#include "npukit/error.hpp"

namespace npukit {

const char* reduce_op_name(ReduceOp op) {
  static const char* names[] = {"sum", "mean", "max", "min", "l2"};
  const auto i = static_cast<size_t>(op);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "invalid";
}

namespace {
// Which axes are reduced (validated).
std::vector<bool> reduced_axes(const Shape& x, const ReduceParams& p, const char* fn) {
  const auto rank = static_cast<int64_t>(x.size());
  std::vector<bool> r(x.size(), p.axes.empty());
  for (int64_t a : p.axes) {
    check_range(fn, "axes", a, -rank, rank - 1);
    const auto i = static_cast<size_t>(a < 0 ? a + rank : a);
    check(!r[i], fn, "axes", std::to_string(a), "each axis at most once");
    r[i] = true;
  }
  return r;
}

// ONNX Runtime's order is defined on a dense tensor: a strided x is copied
// first; the sums land in a dense buffer, then in y (keepdims view).
void reduce_in_ort_order(ReduceOp op, const TensorView& x, const TensorView& yk,
                         const std::vector<bool>& r) {
  const bool mean = op == ReduceOp::mean;
  Tensor dense;
  const float* xp = static_cast<const float*>(x.raw());
  if (!x.is_contiguous()) {
    dense = Tensor(DType::f32, x.shape());
    copy(x, dense.view());
    xp = dense.data<float>();
  }
  int64_t count = 1, outputs = 1;
  for (size_t i = 0; i < r.size(); ++i) (r[i] ? count : outputs) *= x.shape()[i];
  std::vector<float> sums(static_cast<size_t>(outputs), 0.0f);
  if (count > 0 && outputs > 0) {
    if (op == ReduceOp::l2)
      ref::reduce_l2_f32_ort_order(xp, x.shape(), r, sums.data());
    else
      ref::reduce_sum_f32_ort_order(xp, x.shape(), r, sums.data());
  }
  if (mean && count > 0)
    for (float& s : sums) s /= static_cast<float>(count);
  Tensor out = Tensor::from<float>(yk.shape(), sums);
  copy(out.view(), yk);
}
}  // namespace

Shape reduce_output_shape(const Shape& x, const ReduceParams& p, const char* fn) {
  check(x.size() <= 4, fn, "x", "shape " + shape_text(x), "rank 0 to 4");
  const std::vector<bool> r = reduced_axes(x, p, fn);
  Shape y;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!r[i])
      y.push_back(x[i]);
    else if (p.keepdims)
      y.push_back(1);
  }
  return y;
}

void reduce(ReduceOp op, const TensorView& x, const TensorView& y, const ReduceParams& p) {
  constexpr const char* fn = "npukit::reduce";
  check(static_cast<size_t>(op) <= static_cast<size_t>(ReduceOp::l2), fn, "op",
        std::to_string(static_cast<int>(op)), "a ReduceOp value");
  x.expect_dtype(DType::f32, fn, "x.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  y.expect_shape(reduce_output_shape(x.shape(), p, fn), fn, "y");
  const std::vector<bool> r = reduced_axes(x.shape(), p, fn);
  // y seen with the keepdims shape: stride 0 on the reduced axes.
  Shape ks, kst;
  size_t j = 0;
  for (size_t i = 0; i < x.shape().size(); ++i) {
    if (r[i]) {
      ks.push_back(1);
      kst.push_back(0);
      if (p.keepdims) ++j;
    } else {
      ks.push_back(x.shape()[i]);
      kst.push_back(y.stride(static_cast<int>(j++)));
    }
  }
  const TensorView yk(y.raw(), DType::f32, ks, kst, fn);
  if (p.order == ReduceOrder::onnxruntime &&
      (op == ReduceOp::sum || op == ReduceOp::mean || op == ReduceOp::l2))
    reduce_in_ort_order(op, x, yk, r);
  else
    ref::reduce_f32(op, x, yk, r);
}

}  // namespace npukit
